// Lesson 10's run in the fast tier, on real processes: the incident server with the reference fix
// of `cache` (the student's loop ends there) in --quick mode with --predict, printing exactly a
// healthy service's lines (expected-output/incident.txt), every prediction settled by a measure,
// and saved for the class roll-up. The planted incidents, a seeded one named by the student, and
// the student's own copy are run in test/e2e/incident.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { assertPredicted, assertShapeOutput, classSave, failOnWarnings, predictFor, runScript } from '../helpers.ts';

failOnWarnings();

test('lesson 10: incident --quick --handlers fixed/cache.ts --predict prints exactly expected-output/incident.txt', async (t) => {
  const predict = await predictFor(t, 'incident');
  const r = await runScript('measure/incident.ts', [
    '--quick',
    '--shape',
    '--handlers',
    'servers/exercises/lesson-10/fixed/cache.ts',
    ...predict.args,
    ...classSave('lb-builtin'),
  ]);
  assertShapeOutput(r.stdout, 'fixed/incident', r.stderr);
  assert.equal(r.code, 0, r.stderr);
  assertPredicted(r.stderr, predict.questions);
});
