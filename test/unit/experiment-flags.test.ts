// The flags of every experiment and of the lesson runner, checked in this process: --help, and
// every usage mistake, which stops before anything starts (usageInProcess fails a run that got
// further); the one-line errors for a missing nginx or redis-server. No process is started here, so
// this file runs beside the other unit tests; the spawned scripts are checked in test/smoke/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LESSONS } from '../../measure/lib/harness/lessons.ts';
import { balancedExperiments } from '../../measure/lib/harness/experiments.ts';
import { main as lessonMain } from '../../measure/lesson.ts';
import { findNginx } from '../../servers/lib/balancer/nginx-config.ts';
import { findRedis } from '../../servers/lib/state/redis-binary.ts';
import { failOnWarnings, runMainInProcess, usageInProcess } from '../helpers.ts';

failOnWarnings();

test('the balanced experiments (those that take --lb) are the eight that put a balancer in front of replicas', async () => {
  const all = LESSONS.flatMap((l) => l.experiments);
  assert.deepEqual([...(await balancedExperiments(all))].sort(), [
    'capped-scale-out',
    'counter',
    'degraded',
    'distribution',
    'failover',
    'graceful',
    'scale-out',
    'sessions',
  ]);
  assert.deepEqual([...(await balancedExperiments(['blocking', 'cluster']))], [], 'one without --lb is not');
});

// Every lesson's experiments, not only lesson 3's, in this process (each module exports its
// experiment as data); the spawned script is checked once below.
for (const name of LESSONS.flatMap((l) => l.experiments)) {
  test(`${name} --help and a bad flag`, async () => {
    const help = await usageInProcess(name, ['--help']);
    assert.equal(help.code, 0);
    for (const flag of ['--shape', '--json', '--quick', '--port']) assert.match(help.stdout, new RegExp(flag));
    const bad = await usageInProcess(name, ['--nonsense']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /^error KIT_ERR_USAGE: /);
    const port = await usageInProcess(name, ['--port', 'x']);
    assert.equal(port.code, 2);
    assert.match(port.stderr, /KIT_ERR_USAGE: --port/);
  });
}

test('a bad --cost is a usage error naming the cost', async () => {
  const r = await usageInProcess('blocking', ['--cost', 'N=5']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /KIT_ERR_BAD_COST: invalid scrypt cost 'N=5'/);
});

test('the lesson runner checks its flags before running anything', async () => {
  for (const args of [['99'], ['3', '--bogus'], ['3', '--json'], ['3', '--port', 'x'], []]) {
    const r = await runMainInProcess(lessonMain, args);
    assert.equal(r.code, 2, args.join(' '));
    assert.doesNotMatch(r.stdout + r.stderr, /started /, 'no experiment ran');
  }
});

test('the lesson runner: "all" is a lesson list, an unknown lesson is a usage error', async () => {
  const help = await runMainInProcess(lessonMain, ['all', '--help']);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /lesson number \| all/);
  const bad = await runMainInProcess(lessonMain, ['13']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /no lesson '13'; the lessons are 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, or all/);
});

test("without nginx: a coded error saying how to install it, and that the kit's balancer is the default", () => {
  assert.throws(
    () => findNginx({ PATH: '/nonexistent' }, []),
    (e: any) => {
      assert.equal(e.code, 'KIT_ERR_NGINX_MISSING');
      assert.match(
        `${e.message}; ${e.hint}`,
        /apt-get install nginx.*brew install nginx.*the kit's balancer is the default/,
      );
      return true;
    },
  );
});

test("failover --response-timeout is listed and checked against the run's length (usage errors exit 2)", async () => {
  const help = await usageInProcess('failover', ['--help']);
  assert.match(help.stdout, /--response-timeout <ms>.*1000 to 5000 ms \(default 1500; at most 2000 with --quick\)/);
  for (const [args, message] of [
    [['--response-timeout', '500'], /--response-timeout must be from 1000 to 5000; got 500/],
    [['--response-timeout', 'long'], /--response-timeout/],
    [['--quick', '--response-timeout', '3000'], /too long for --quick: its runs go on only 3 s after the fault/],
  ] as const) {
    const r = await usageInProcess('failover', [...args]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, message);
  }
});

test('without redis-server: a coded error saying how to install it, and that SQLite is the default', () => {
  assert.throws(
    () => findRedis({ PATH: '/nonexistent' }, []),
    (e: any) => {
      assert.equal(e.code, 'KIT_ERR_REDIS_MISSING');
      assert.match(
        `${e.message}; ${e.hint}`,
        /apt-get install redis-server.*brew install redis.*--state sqlite, the default/,
      );
      return true;
    },
  );
});

test('shared-compute: its own flags are listed and checked (usage errors exit 2)', async () => {
  const help = await usageInProcess('shared-compute', ['--help']);
  for (const flag of ['--cpu-quota', '--quota-mode', '--think-ms', '--load-s'])
    assert.match(help.stdout, new RegExp(flag));
  for (const args of [
    ['--cpu-quota', '1'],
    ['--quota-mode', 'fast'],
    ['--think-ms', '50'],
    ['--load-s', '3'],
    ['--load-s', '121'],
    ['--load-s', 'long'],
  ]) {
    const bad = await usageInProcess('shared-compute', args);
    assert.equal(bad.code, 2, `${args.join(' ')}: ${bad.stderr}`);
    assert.match(bad.stderr, /^error KIT_ERR_USAGE: /);
  }
});

test('autoscale: its own flags are listed and checked (usage errors exit 2)', async () => {
  const help = await usageInProcess('autoscale', ['--help']);
  for (const flag of ['--cpu-quota', '--quota-mode', '--think-ms', '--window-s'])
    assert.match(help.stdout, new RegExp(flag));
  for (const args of [
    ['--cpu-quota', '3'],
    ['--quota-mode', 'fast'],
    ['--think-ms', 'x'],
    ['--window-s', '-1'],
  ]) {
    const bad = await usageInProcess('autoscale', args);
    assert.equal(bad.code, 2, `${args.join(' ')}: ${bad.stderr}`);
    assert.match(bad.stderr, /^error KIT_ERR_USAGE: /);
  }
});

test('--part and --read-mib-s take only what they can use', async () => {
  const part = await usageInProcess('stages', ['--part', 'keep-alive,nope']);
  assert.equal(part.code, 2);
  assert.match(
    part.stderr,
    /--part: 'nope' is not a part; the parts are keep-alive, proxy, blocked, slow-reader, body-limit/,
  );
  const rate = await usageInProcess('stages', ['--read-mib-s', '0']);
  assert.equal(rate.code, 2);
  assert.match(rate.stderr, /read-mib-s/);
});

test('capped-scale-out: --commit-ms and --db are listed and checked', async () => {
  const help = await usageInProcess('capped-scale-out', ['--help']);
  assert.match(help.stdout, /--commit-ms <ms>/);
  assert.match(help.stdout, /--db <sqlite\|postgres>/);
  for (const [args, message] of [
    [['--commit-ms', '-1'], /--commit-ms/],
    [['--commit-ms', '1001'], /--commit-ms/],
    [['--commit-ms', 'fast'], /--commit-ms/],
    [['--db', 'mysql'], /--db is sqlite or postgres; got 'mysql'/],
    [['--db', 'postgres', '--commit-ms', '5'], /--commit-ms models a slow disk for SQLite/],
  ] as const) {
    const r = await usageInProcess('capped-scale-out', [...args]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, message);
  }
});

test('sim-vs-lab: its own flags are listed and checked (usage errors exit 2)', async () => {
  const help = await usageInProcess('sim-vs-lab', ['--help']);
  for (const flag of ['--loop', '--seed', '--runs']) assert.match(help.stdout, new RegExp(flag));
  for (const args of [
    ['--loop', 'lifo'],
    ['--seed', '-3'],
    ['--runs', '0'],
    ['--lb', 'nginx'],
  ]) {
    const bad = await usageInProcess('sim-vs-lab', args);
    assert.equal(bad.code, 2, `${args.join(' ')}: ${bad.stderr}`);
    assert.match(bad.stderr, /^error KIT_ERR_USAGE: /);
  }
});
