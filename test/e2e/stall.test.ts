// Proves lesson 1's stall experiment end to end on real processes: `stall --quick` freezes one
// replica for a second under each of three generators and prints exactly expected-output/stall.txt,
// answering --predict (its questions come first, each checked beside its measure), and leaves
// nothing running, the frozen replica included. The generator itself and the mutation that fails
// the open-loop lines are in test/e2e/open-loop.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  assertAllGone,
  assertPredicted,
  assertShapeOutput,
  classSave,
  failOnWarnings,
  predictFor,
  runScript,
} from '../helpers.ts';

failOnWarnings();

test('stall --quick --shape --predict prints exactly expected-output/stall.txt, and every prediction beside a measure', async (t) => {
  const predict = await predictFor(t, 'stall');
  assert.equal(predict.questions, 3);
  const r = await runScript('measure/stall.ts', ['--quick', '--shape', ...predict.args, ...classSave('lb-builtin')]);
  assertShapeOutput(r.stdout, 'stall', r.stderr);
  assert.equal(r.code, 0, r.stderr);
  assertPredicted(r.stderr, predict.questions);
  const pids = [...r.stderr.matchAll(/started \S+ pid=(\d+)/g)].map((m) => Number(m[1]));
  assert.equal(pids.length, 1, 'one replica, frozen and thawed three times');
  await assertAllGone(pids);
});
