// Proves the lesson 6 experiments end to end on real processes: in --quick mode each prints exactly
// its expected shape; their own flags are checked; Ctrl-C while a throttled worker is paused
// (SIGSTOP) leaves no process behind, stopped or not, and no cgroup.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { assertPredicted, classSave, assertShapeOutput, assertAllGone, childrenOf, failOnWarnings, predictFor, ROOT, runInProcess, runScript } from './helpers.ts';

failOnWarnings();
const CGROUP_PARENTS = ['/sys/fs/cgroup', '/sys/fs/cgroup/cpu'].filter((d) => existsSync(d));
const kitCgroups = () => CGROUP_PARENTS.flatMap((d) => readdirSync(d).filter((f) => /^nsl-\d+$/.test(f)));

test('autoscale --quick --shape --predict prints exactly expected-output/autoscale.txt, and every prediction beside a measure', async (t) => {
  const before = kitCgroups();
  const predict = await predictFor(t, 'autoscale');
  const r = await runScript('measure/autoscale.ts', ['--quick', '--shape', ...predict.args, ...classSave('lb-builtin')], {}, 300_000);
  assertShapeOutput(r.stdout, 'autoscale', r.stderr);
  assert.equal(r.code, 0);
  assertPredicted(r.stderr, predict.questions);
  // 40 users think at once, each sleep listening on one stop signal: no leak warning for that.
  assert.doesNotMatch(r.stderr, /MaxListenersExceededWarning/);
  assert.deepEqual(kitCgroups().filter((d) => !before.includes(d)), [], 'no cgroup left behind');
});

test('shared-compute --quick --shape prints exactly expected-output/shared-compute.txt', async () => {
  const before = kitCgroups();
  const r = await runScript('measure/shared-compute.ts', ['--quick', '--shape', ...classSave('lb-builtin')], {}, 180_000);
  assertShapeOutput(r.stdout, 'shared-compute', r.stderr);
  assert.equal(r.code, 0);
  assert.deepEqual(kitCgroups().filter((d) => !before.includes(d)), [], 'no cgroup left behind');
});

test('shared-compute: its own flags are listed and checked (usage errors exit 2)', async () => {
  const help = await runInProcess('shared-compute', ['--help']);
  for (const flag of ['--cpu-quota', '--quota-mode', '--think-ms']) assert.match(help.stdout, new RegExp(flag));
  for (const args of [['--cpu-quota', '1'], ['--quota-mode', 'fast'], ['--think-ms', '50']]) {
    const bad = await runInProcess('shared-compute', args);
    assert.equal(bad.code, 2, `${args.join(' ')}: ${bad.stderr}`);
    assert.match(bad.stderr, /^error KIT_ERR_USAGE: /);
  }
});

test('autoscale: its own flags are listed and checked (usage errors exit 2)', async () => {
  const help = await runInProcess('autoscale', ['--help']);
  for (const flag of ['--cpu-quota', '--quota-mode', '--think-ms', '--window-s']) assert.match(help.stdout, new RegExp(flag));
  for (const args of [['--cpu-quota', '3'], ['--quota-mode', 'fast'], ['--think-ms', 'x'], ['--window-s', '-1']]) {
    const bad = await runInProcess('autoscale', args);
    assert.equal(bad.code, 2, `${args.join(' ')}: ${bad.stderr}`);
    assert.match(bad.stderr, /^error KIT_ERR_USAGE: /);
  }
});

for (const [script, when, what] of [
  // One worker with 40 users runs at its quota: the throttle pauses it most of each period.
  ['autoscale', /fixed-1w-40u: 40 users, second 3 /, 'a worker at its quota'],
  // With a 100 ms period, a paused worker waits up to 75 ms for the next one.
  ['shared-compute', /shared-100ms: 10 users, second 3 /, 'a worker throttled in 100 ms periods'],
] as const) {
  test(`Ctrl-C during ${script}, ${what}, paused by the throttle: every process is gone`, async () => {
    await interruptAndCheck(script, when);
  });
}

async function interruptAndCheck(script: string, when: RegExp): Promise<void> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, `measure/${script}.ts`), '--quick', '--quota-mode', 'throttle'], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stderr! }).on('line', (l) => {
      lines.push(l);
      if (when.test(l)) resolve();
    });
    child.once('exit', () => reject(new Error(`ended early: ${lines.slice(-3).join(' | ')}`)));
  });
  const tree = (pid: number): number[] => [pid, ...childrenOf(pid).flatMap(tree)];
  const all = tree(child.pid!).slice(1);
  assert.ok(all.length >= 2, `the primary and its worker at least: ${all.length}`);
  child.kill('SIGINT');
  const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
  assert.equal(code, 130);
  await assertAllGone(all, 10_000);
}
