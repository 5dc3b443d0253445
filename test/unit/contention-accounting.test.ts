// The accounting behind "how busy other programs kept the cores during a run", on made-up /proc
// snapshots: growth outside the kit in cores, reaped and reused pids, the kit's own processes under
// other ancestors; without /proc, the machine's busy time less the kit's, and ps's lines parsed;
// the busiest programs named; the caption and the caveat; a line that did not hold blames the
// machine only when it was busy. The measurement on real processes is in
// test/e2e/contention.test.ts and test/e2e/cpu-source.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { busiestPrograms, otherCpu, type CpuSnapshot } from '../../measure/lib/machine/contention.ts';
import { cpuSource, parsePs, parsePsTime, programName, readStat, type ProcStat } from '../../lib/proc.ts';
import { busyMachineCaveat, machineCaption } from '../../results/report/format.ts';
import { renderComparison } from '../../measure/lib/harness/outcome.ts';
import { compareShape } from '../../results/report/shape.ts';
import { MACHINE } from '../fixtures/results.ts';
import { failOnWarnings } from '../helpers.ts';

failOnWarnings();

const st = (pid: number, ppid: number, own: number, reaped = 0, name = `p${pid}`): ProcStat => ({
  pid,
  ppid,
  pgid: pid,
  state: 'S',
  ownTicks: own,
  reapedChildrenTicks: reaped,
  name,
});
const snap = (
  atMs: number,
  stats: ProcStat[],
  kit: number[],
  steal = 0,
  ancestors: number[] = [],
  busy = 0,
): CpuSnapshot => ({
  atMs,
  stats: new Map(stats.map((s) => [s.pid, s])),
  kit: new Set(kit),
  ancestors: new Set(ancestors),
  machine: { busy, idle: 0, steal },
  source: 'proc',
});

test('otherCpu: growth outside the kit, in ticks per second, without the kit or the kernel', () => {
  const a = snap(
    0,
    [st(1, 0, 100), st(2, 0, 0), st(50, 2, 10), st(100, 1, 500), st(200, 1, 20), st(300, 200, 1)],
    [200, 300],
    0,
  );
  // 1 s later: pid 100 (someone's build) used 80 ticks; the kernel thread 50 used 90; the kit (200, 300) used 190.
  const b = snap(
    1000,
    [st(1, 0, 100), st(2, 0, 0), st(50, 2, 100), st(100, 1, 580), st(200, 1, 120), st(300, 200, 91)],
    [200, 300],
    5,
  );
  assert.deepEqual(otherCpu(a, b), { otherCores: 0.8, stealCores: 0.05 });
});

test('otherCpu: a child reaped meanwhile counts through its parent; a new process counts whole; a reused pid too', () => {
  const a = snap(0, [st(1, 0, 0), st(100, 1, 50), st(101, 100, 30), st(400, 1, 900)], [], 0);
  // 101 ended (its 30 + 40 more ticks now in 100's reaped time); 500 is new (60 ticks); pid 400 was reused by a new process (10 ticks).
  const b = snap(2000, [st(1, 0, 0), st(100, 1, 50, 70), st(500, 1, 60), st(400, 1, 10)], [], 0);
  // 100 grew by 70 (reaped), 500 by 60, 400 counts whole (10): 140 ticks over 2 s
  assert.deepEqual(otherCpu(a, b), { otherCores: 0.7, stealCores: 0 });
  // For a short interval, reaped children are left out: 101's whole life would land in it at once.
  assert.deepEqual(otherCpu(a, b, { reaped: false }), { otherCores: 0.35, stealCores: 0 });
});

test("otherCpu: a kit process reaped by init or another ancestor is not someone else's CPU", () => {
  // the kit (200) ran under a shell (150) under init (1); a cluster worker of the kit outlived its primary and init reaped it (90 ticks)
  const a = snap(0, [st(1, 0, 5), st(150, 1, 3), st(200, 150, 10)], [200], 0, [150, 1]);
  const b = snap(1000, [st(1, 0, 6, 90), st(150, 1, 4), st(200, 150, 60)], [200], 0, [150, 1]);
  assert.deepEqual(otherCpu(a, b), { otherCores: 0.02, stealCores: 0 }, "only init's and the shell's own ticks");
});

test("without /proc: the machine's busy time less the kit's processes' growth, no steal", () => {
  // 2 s; the machine was busy 300 ticks; the kit (200 and its worker 300) grew by 100 + 60; pid 100 by 120.
  const a = {
    ...snap(0, [st(100, 1, 500), st(200, 1, 20), st(300, 200, 1)], [200, 300], 0, [], 1000),
    source: 'ps' as const,
  };
  const b = {
    ...snap(2000, [st(100, 1, 620), st(200, 1, 120), st(300, 200, 61)], [200, 300], 0, [], 1300),
    source: 'ps' as const,
  };
  assert.deepEqual(otherCpu(a, b), { otherCores: 0.7, stealCores: 0 });
  // A kit that used more than the machine says (ps rounding): never below 0.
  const c = { ...b, machine: { busy: 1100, idle: 0, steal: 0 } };
  assert.deepEqual(otherCpu(a, c), { otherCores: 0, stealCores: 0 });
});

test('the source: /proc where it exists, ps without it; NSL_CPU_SOURCE=ps forces the fallback', () => {
  assert.equal(cpuSource({}), process.platform === 'linux' ? 'proc' : 'ps');
  assert.equal(cpuSource({ NSL_CPU_SOURCE: 'ps' }), 'ps');
});

test("ps's CPU times and lines, from procps (Linux) and macOS", () => {
  assert.equal(parsePsTime('00:00:02'), 2);
  assert.equal(parsePsTime('01:02:03'), 3723);
  assert.equal(parsePsTime('2-00:00:01'), 172_801);
  assert.equal(parsePsTime('0:00.05'), 0.05);
  assert.equal(parsePsTime('12:34.56'), 754.56);
  assert.ok(Number.isNaN(parsePsTime('-')));
  const stats = parsePs(
    [
      '    1     0     1 Ss   00:00:52 systemd',
      '  812     1   812 S    0:01.25 /Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
      'garbage',
      '',
    ].join('\n'),
  );
  assert.deepEqual([...stats.keys()], [1, 812]);
  assert.deepEqual(stats.get(812), {
    pid: 812,
    ppid: 1,
    pgid: 812,
    state: 'S',
    ownTicks: 125,
    reapedChildrenTicks: 0,
    name: 'Google Chrome',
  });
  assert.equal(stats.get(1)!.ownTicks, 5200);
});

test('the busiest other programs: by name, the kit and the kernel left out, the top three', () => {
  const a = snap(
    0,
    [
      st(2, 0, 0),
      st(50, 2, 0),
      st(100, 1, 0, 0, 'chrome'),
      st(101, 1, 0, 0, 'chrome'),
      st(102, 1, 0, 0, 'code'),
      st(103, 1, 0, 0, 'zoom'),
      st(104, 1, 0, 0, 'slack'),
      st(200, 1, 0, 0, 'node'),
    ],
    [200],
  );
  const b = snap(
    1000,
    [
      st(2, 0, 0),
      st(50, 2, 90),
      st(100, 1, 30, 0, 'chrome'),
      st(101, 1, 15, 0, 'chrome'),
      st(102, 1, 20, 0, 'code'),
      st(103, 1, 5, 0, 'zoom'),
      st(104, 1, 0, 0, 'slack'),
      st(200, 1, 99, 0, 'node'),
      st(105, 1, 3, 0, 'git'),
    ],
    [200],
  );
  assert.deepEqual(busiestPrograms(a, b), [
    { name: 'chrome', cores: 0.45 },
    { name: 'code', cores: 0.2 },
    { name: 'zoom', cores: 0.05 },
  ]);
});

test('the caption and the caveat say how busy other programs were during the run', () => {
  assert.match(machineCaption({ ...MACHINE, busyCoresDuringRun: 0.02 }), /0\.05 busy before the run, 0\.02 during it/);
  assert.equal(busyMachineCaveat({ ...MACHINE, busyCoresDuringRun: 0.1 }), undefined);
  assert.match(
    busyMachineCaveat({ ...MACHINE, busyCoresDuringRun: 0.9 }) ?? '',
    /0\.9 of the 2 cores busy while the run went on/,
  );
  assert.equal(
    busyMachineCaveat({ ...MACHINE, busyCoresDuringRun: 0.1, busiestSecondDuringRun: 0.4, stealCoresDuringRun: 0.05 }),
    undefined,
    "an idle machine's blips",
  );
  assert.match(
    busyMachineCaveat({
      ...MACHINE,
      busyCoresDuringRun: 0.3,
      busiestSecondDuringRun: 0.6,
      stealCoresDuringRun: 0.29,
    }) ?? '',
    /other virtual machines on this host took about 0\.3/,
    'a busy host',
  );
  const burst = { ...MACHINE, busyCoresDuringRun: 0.25, busiestSecondDuringRun: 1.02 };
  assert.match(
    busyMachineCaveat(burst) ?? '',
    /up to 1\.0 of the 2 cores busy for a second or more while the run went on \(0\.25 on average/,
  );
  assert.match(machineCaption(burst), /0\.25 during it, up to 1\.02/);
  const host = { ...MACHINE, busyCoresDuringRun: 0.6, busiestSecondDuringRun: 0.9, stealCoresDuringRun: 0.5 };
  assert.match(
    busyMachineCaveat(host) ?? '',
    /other virtual machines on this host took about 0\.5 of this machine's 2 cores .*steal time/,
  );
  assert.match(machineCaption(host), /0\.60 during it, up to 0\.90, 0\.50 of it taken by other virtual machines/);
  assert.match(
    machineCaption({ ...MACHINE, busyCoresDuringRun: 0.02, cpuSource: 'ps' }),
    /0\.02 during it \(from os\.cpus\(\) and ps: no \/proc here\)/,
  );
  assert.match(
    machineCaption({ ...MACHINE, busyCoresDuringRun: 0.02, cpuSource: 'proc' }),
    /0\.02 during it \(from \/proc\)/,
  );
  assert.match(
    busyMachineCaveat({ ...MACHINE, busyCoresDuringRun: 0.9, busiestPrograms: 'chrome 0.60, code 0.20' }) ?? '',
    /^other programs \(the busiest, in cores: chrome 0\.60, code 0\.20\) kept about 0\.9/,
  );
});

test('a line that did not hold blames the machine only when other programs kept it busy', () => {
  const cmp = compareShape(['pool  throughput  grows'], ['pool  throughput  does-not-grow'], {
    pool: 'pooled scrypt should use one core per connection',
  });
  const idle = renderComparison(cmp, 'expected-output/pool.txt', false, { ...MACHINE, busyCoresDuringRun: 0.03 });
  assert.match(idle, /likely cause: pooled scrypt should use one core per connection/);
  assert.doesNotMatch(idle, /other programs/);
  assert.match(idle, /✗ pool {2}throughput {2}grows/);
  assert.match(idle, /The shape does not hold\./);
  const busy = renderComparison(cmp, 'expected-output/pool.txt', false, {
    ...MACHINE,
    busyCoresDuringRun: 1.1,
    busiestPrograms: 'chrome 0.90',
  });
  // Not judged: "busy" (~) rather than ✗, the busiest programs named once.
  assert.match(busy, /~ pool {2}throughput {2}grows {3}\(busy: this run: pool {2}throughput {2}does-not-grow\)/);
  assert.doesNotMatch(busy, /✗/);
  assert.match(
    busy,
    /~ busy: 1 line\(s\) not judged, because other programs \(the busiest, in cores: chrome 0\.90\) kept about 1\.1 of the 2 cores busy/,
  );
  assert.match(busy, /The shape was not shown: the machine was busy\./);
  assert.doesNotMatch(busy, /pooled scrypt/);
});

test(
  "programName: Node 24's and 26's main thread names are read back to the program from argv[0]; other names stay",
  { skip: process.platform === 'linux' ? false : 'needs /proc' },
  () => {
    // This process is node: whatever its Node names the main thread, the reader sees "node".
    assert.equal(programName('MainThread', process.pid), 'node');
    assert.equal(programName('node-MainThread', process.pid), 'node', "Node 26's name");
    assert.equal(readStat(process.pid)?.name, 'node');
    assert.equal(programName('nginx', process.pid), 'nginx');
    assert.equal(programName('MainThread', 2 ** 22 + 1), 'MainThread', 'no such process: the name stays');
  },
);
