// Proves lesson 8 end to end on real processes: autoscale in --quick mode prints exactly its
// expected shape and answers --predict; Ctrl-C while a throttled worker is paused (SIGSTOP) leaves no
// process behind, stopped or not, and no cgroup; shared-compute in --quick mode prints exactly its
// expected shape. The fast tier runs shared-compute with a shorter load (test/smoke/lessons-4-9.test.ts);
// the flags are checked in test/unit/experiment-flags.test.ts.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { createInterface } from 'node:readline';
import {
  assertPredicted,
  classSave,
  assertShapeOutput,
  assertAllGone,
  childrenOf,
  failOnWarnings,
  predictFor,
  runScript,
  spawnScript,
} from '../helpers.ts';

failOnWarnings();
const CGROUP_PARENTS = ['/sys/fs/cgroup', '/sys/fs/cgroup/cpu'].filter((d) => existsSync(d));
const kitCgroups = () => CGROUP_PARENTS.flatMap((d) => readdirSync(d).filter((f) => /^nsl-\d+$/.test(f)));

test('autoscale --quick --shape --predict prints exactly expected-output/autoscale.txt, and every prediction beside a measure', async (t) => {
  const before = kitCgroups();
  const predict = await predictFor(t, 'autoscale');
  const r = await runScript(
    'measure/autoscale.ts',
    ['--quick', '--shape', ...predict.args, ...classSave('lb-builtin')],
    {},
    300_000,
  );
  assertShapeOutput(r.stdout, 'autoscale', r.stderr);
  assert.equal(r.code, 0);
  assertPredicted(r.stderr, predict.questions);
  // 40 users think at once, each sleep listening on one stop signal: no leak warning for that.
  assert.doesNotMatch(r.stderr, /MaxListenersExceededWarning/);
  assert.deepEqual(
    kitCgroups().filter((d) => !before.includes(d)),
    [],
    'no cgroup left behind',
  );
});

test('shared-compute --quick --shape prints exactly expected-output/shared-compute.txt', async () => {
  const before = kitCgroups();
  const r = await runScript(
    'measure/shared-compute.ts',
    ['--quick', '--shape', ...classSave('lb-builtin')],
    {},
    180_000,
  );
  assertShapeOutput(r.stdout, 'shared-compute', r.stderr);
  assert.equal(r.code, 0);
  assert.deepEqual(
    kitCgroups().filter((d) => !before.includes(d)),
    [],
    'no cgroup left behind',
  );
});

for (const [script, when, what] of [
  // One worker with 40 users runs at its quota: the throttle pauses it most of each period.
  ['autoscale', /fixed-1w-40u: 40 users, second 3 /, 'a worker at its quota'],
  // With a 100 ms period, a paused worker waits up to 75 ms for the next one.
  ['shared-compute', /shared-100ms: 10 users, second 3 /, 'a worker throttled in 100 ms periods'],
] as const) {
  test(`Ctrl-C during ${script}, ${what}, paused by the throttle: every process is gone`, async (t) => {
    await interruptAndCheck(t, script, when);
  });
}

async function interruptAndCheck(t: TestContext, script: string, when: RegExp): Promise<void> {
  const child = spawnScript(t, `measure/${script}.ts`, ['--quick', '--quota-mode', 'throttle']);
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
