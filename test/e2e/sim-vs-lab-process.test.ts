// Proves sim-vs-lab's process hygiene on real processes: Ctrl-C mid-run (replicas, the hog and a
// balancer running) exits 130 and leaves no process behind. Its --quick shape is checked with the
// other lesson 4 experiments in test/e2e/lessons-4-6.test.ts, its flags in
// test/unit/experiment-flags.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createInterface } from 'node:readline';
import { assertAllGone, childrenOf, failOnWarnings, spawnScript } from '../helpers.ts';

failOnWarnings();

test('Ctrl-C mid-run (replicas, the hog and the balancer running): exit 130, every process gone', async (t) => {
  const child = spawnScript(t, 'measure/sim-vs-lab.ts', ['--quick']);
  const lines: string[] = [];
  // Once the first round has begun: three replicas, the hog and the balancer running.
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stderr! }).on('line', (l) => {
      lines.push(l);
      if (/round 1 of \d+: /.test(l)) resolve();
    });
    child.once('exit', () => reject(new Error(`ended early: ${lines.slice(-3).join(' | ')}`)));
  });
  const tree = (pid: number): number[] => [pid, ...childrenOf(pid).flatMap(tree)];
  const all = tree(child.pid!).slice(1);
  assert.ok(all.length >= 4, `three replicas and a balancer at least: ${all.length}`);
  child.kill('SIGINT');
  const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
  assert.equal(code, 130);
  await assertAllGone(all, 10_000);
});
