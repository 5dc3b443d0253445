// Proves lesson 7 end to end on real processes: stages --quick prints its expected shape (nginx's
// lines read "not shown" where nginx is not installed) and answers --predict with measures of the
// run; the lesson runner runs its full workload; bad --part and --read-mib-s values are usage
// errors; Ctrl-C while the server's event loop is blocked by scryptSync leaves nothing running.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { assertAllGone, assertPredicted, assertShapeOutput, childrenOf, classSave, expectedShape, failedLines, failOnWarnings, portFree, predictFor, ROOT, runInProcess, runScript, skipUnless } from './helpers.ts';

failOnWarnings();

test('stages --quick --shape --predict prints exactly expected-output/stages.txt, and every prediction beside a measure', async (t) => {
  const predict = await predictFor(t, 'stages');
  const r = await runScript('measure/stages.ts', ['--quick', '--shape', ...predict.args, ...classSave('lb-builtin')]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assertPredicted(r.stderr, predict.questions);
  if (skipUnless('nginx')) {
    assert.deepEqual(failedLines(expectedShape('stages'), r.stdout.trim().split('\n')), []);
    assert.match(r.stdout, /# not shown here: nginx: /);
  } else {
    assertShapeOutput(r.stdout, 'stages', r.stderr);
  }
});

test('the lesson runner runs lesson 7 with its full workload, and its shape holds', async () => {
  const r = await runScript('measure/lesson.ts', ['7', '--shape']);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stderr, /stages +shape holds/);
});

test('--part and --read-mib-s take only what they can use', async () => {
  const part = await runInProcess('stages', ['--part', 'keep-alive,nope']);
  assert.equal(part.code, 2);
  assert.match(part.stderr, /--part: 'nope' is not a part; the parts are keep-alive, proxy, blocked, slow-reader, body-limit/);
  const rate = await runInProcess('stages', ['--read-mib-s', '0']);
  assert.equal(rate.code, 2);
  assert.match(rate.stderr, /read-mib-s/);
});

test('Ctrl-C while scryptSync blocks the server\'s event loop: exit 130, the server gone, its port free', async () => {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'measure/stages.ts'), '--part', 'blocked'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
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
  assert.deepEqual(lines.filter((l) => /\berror\b/i.test(l)), []);
  await assertAllGone(all, 10_000);
  assert.equal(await portFree(port), true);
});
