// Proves that every experiment runs end to end: one that no other test of the smoke or e2e tier
// runs (none names it, and its lesson is not one lessons-4-6.test.ts runs whole) is run here in
// --quick mode and must print exactly its expected shape. So a new experiment has an end-to-end run
// from its first commit; a test of its own (with --predict, both balancers, a fault) replaces this.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { LESSONS } from '../../measure/lib/harness/lessons.ts';
import { assertShapeOutput, failOnWarnings, LESSONS_RUN_WHOLE, ROOT, runScript } from '../helpers.ts';

failOnWarnings();

/** The experiments of `lessons` that none of `tests` (their texts) names and no lesson in `whole` holds. */
export function unrunExperiments(
  lessons: readonly { id: number; experiments: string[] }[],
  tests: readonly string[],
  whole: readonly number[],
): string[] {
  const named = (name: string) => tests.some((t) => t.includes(`measure/${name}.ts`) || t.includes(`'${name}'`));
  return lessons.filter((l) => !whole.includes(l.id)).flatMap((l) => l.experiments.filter((name) => !named(name)));
}

const THIS = path.basename(import.meta.filename ?? new URL(import.meta.url).pathname);
const tests = ['smoke', 'e2e'].flatMap((tier) =>
  readdirSync(path.join(ROOT, 'test', tier))
    .filter((f) => f.endsWith('.test.ts') && f !== THIS)
    .map((f) => readFileSync(path.join(ROOT, 'test', tier, f), 'utf8')),
);

test('the check finds an experiment no test runs, and not one a test names or a whole lesson holds', () => {
  const lessons = [
    { id: 1, experiments: ['a', 'b'] },
    { id: 4, experiments: ['c'] },
  ];
  assert.deepEqual(unrunExperiments(lessons, ["runScript('measure/a.ts')"], [4]), ['b']);
  assert.deepEqual(unrunExperiments(lessons, ["runInProcess('b')", "runScript('measure/a.ts')"], [4]), []);
  assert.deepEqual(unrunExperiments(lessons, [], []), ['a', 'b', 'c']);
});

for (const name of unrunExperiments(LESSONS, tests, LESSONS_RUN_WHOLE)) {
  test(`${name} --quick prints exactly expected-output/${name}.txt`, async () => {
    const r = await runScript(`measure/${name}.ts`, ['--quick', '--shape']);
    assertShapeOutput(r.stdout, name, r.stderr);
    assert.equal(r.code, 0, r.stderr);
  });
}
