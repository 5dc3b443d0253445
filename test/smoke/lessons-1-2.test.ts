// Lessons 1 and 2 in the fast tier, on real processes: each experiment in --quick mode prints its
// expected shape (proxy-overhead's nginx lines read "not shown" where nginx is not installed) and
// answers --predict with a measure of the run. The lesson runner's flags are checked in
// test/unit/experiment-flags.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  assertPredicted,
  classSave,
  assertShapeOutput,
  expectedShape,
  failedLines,
  failOnWarnings,
  predictFor,
  runScript,
  skipUnless,
} from '../helpers.ts';

failOnWarnings();

test('ceiling --quick --shape --predict prints exactly expected-output/ceiling.txt, and every prediction beside a measure', async (t) => {
  const predict = await predictFor(t, 'ceiling');
  const r = await runScript('measure/ceiling.ts', ['--quick', '--shape', ...predict.args, ...classSave('lb-builtin')]);
  assertShapeOutput(r.stdout, 'ceiling', r.stderr);
  assert.equal(r.code, 0);
  assertPredicted(r.stderr, predict.questions);
});

test('proxy-overhead --quick --shape --predict holds (exactly the expected file where nginx is installed)', async (t) => {
  const predict = await predictFor(t, 'proxy-overhead');
  const r = await runScript('measure/proxy-overhead.ts', [
    '--quick',
    '--shape',
    ...predict.args,
    ...classSave('lb-builtin'),
  ]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assertPredicted(r.stderr, predict.questions);
  if (skipUnless('nginx')) {
    assert.deepEqual(failedLines(expectedShape('proxy-overhead'), r.stdout.trim().split('\n')), []);
    assert.match(r.stderr, /nginx was not measured/);
  } else {
    assertShapeOutput(r.stdout, 'proxy-overhead', r.stderr);
  }
});
