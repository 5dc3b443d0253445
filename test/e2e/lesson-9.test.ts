// Proves lesson 9 end to end on real processes: the lesson runner runs its full workload and its
// shape holds; Ctrl-C while the server's event loop is blocked by scryptSync leaves nothing running.
// The --quick run with --predict is lesson 9's run in the fast tier (test/smoke/lessons-4-9.test.ts);
// the flags are checked in test/unit/experiment-flags.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createInterface } from 'node:readline';
import { assertAllGone, childrenOf, failOnWarnings, portFree, runScript, spawnScript } from '../helpers.ts';

failOnWarnings();

test('the lesson runner runs lesson 9 with its full workload, and its shape holds', async () => {
  const r = await runScript('measure/lesson.ts', ['9', '--shape']);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stderr, /stages +shape holds/);
});

test("Ctrl-C while scryptSync blocks the server's event loop: exit 130, the server gone, its port free", async (t) => {
  const child = spawnScript(t, 'measure/stages.ts', ['--part', 'blocked']);
  const lines: string[] = [];
  let port = 0;
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stderr! }).on('line', (l) => {
      lines.push(l);
      port ||= Number(/started stages pid=\d+ port=(\d+)/.exec(l)?.[1] ?? 0);
      if (/blocked: one heavy \/member\/verify-blocking/.test(l)) resolve();
    });
    child.once('exit', () => reject(new Error(`ended before the blocked part: ${lines.slice(-3).join(' | ')}`)));
  });
  const tree = (pid: number): number[] => [pid, ...childrenOf(pid).flatMap(tree)];
  const all = tree(child.pid!).slice(1);
  assert.ok(all.length >= 1 && port > 0, `the stages server: ${all.length} process(es), port ${port}`);
  child.kill('SIGINT');
  const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
  assert.equal(code, 130);
  assert.deepEqual(
    lines.filter((l) => /\berror\b/i.test(l)),
    [],
  );
  await assertAllGone(all, 10_000);
  assert.equal(await portFree(port), true);
});
