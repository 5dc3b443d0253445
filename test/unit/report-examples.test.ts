// Proves each experiment's report by its own examples (results/<experiment>/report.ts `examples`,
// results/report/shape.ts ReportExamples): the healthy result prints expected-output/ exactly, and
// each shape line has a change that fails that line and no other. An experiment without examples
// has a report test of its own (test/unit/experiment-parts.test.ts checks that it has one of the two).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { EXPERIMENTS } from '../../measure/lib/harness/experiments.ts';
import { expectedFile } from '../../measure/lib/harness/paths.ts';
import { examplesProblems, line, parseExpected, type ReportExamples } from '../../results/report/shape.ts';
import { failOnWarnings } from '../helpers.ts';

failOnWarnings();

test('every experiment with examples: the healthy one prints its expected output, each broken one fails its line only', async () => {
  const { loadExperiment } = await import('../../measure/lib/harness/experiments.ts');
  let checked = 0;
  for (const name of EXPERIMENTS) {
    const { report } = await loadExperiment(name);
    if (!report.examples) continue;
    checked++;
    const expected = parseExpected(readFileSync(expectedFile(name), 'utf8'));
    assert.deepEqual(examplesProblems(report.examples, report.shape, expected), [], name);
    assert.doesNotThrow(() => report.render(report.examples!.healthy(), false), `${name} renders its healthy example`);
  }
  assert.ok(checked >= 1, 'at least one experiment has examples');
});

test('the examples check finds a healthy result off the expected output, a line with no change, a change that fails nothing, and one that fails two lines', () => {
  type R = { a: number; b: number };
  const expected = ['a  positive', 'b  positive'];
  const independent = (r: R) => [line('a', r.a > 0 ? 'positive' : 'not'), line('b', r.b > 0 ? 'positive' : 'not')];
  const coupled = (r: R) => [
    line('a', r.a > 0 ? 'positive' : 'not'),
    line('b', r.b > 0 && r.a > 0 ? 'positive' : 'not'),
  ];
  const good: ReportExamples<R> = {
    healthy: () => ({ a: 1, b: 1 }),
    broken: { a: (r) => void (r.a = -1), b: (r) => void (r.b = 0) },
  };
  assert.deepEqual(examplesProblems(good, independent, expected), []);
  assert.deepEqual(examplesProblems(good, coupled, expected), ["breaking 'a' fails 'b' too"]);
  assert.deepEqual(examplesProblems({ ...good, broken: { b: good.broken.b! } }, independent, expected), [
    "no broken example for 'a'",
  ]);
  assert.deepEqual(examplesProblems({ ...good, broken: { ...good.broken, b: () => {} } }, independent, expected), [
    "breaking 'b' leaves it holding",
  ]);
  assert.deepEqual(examplesProblems({ ...good, broken: { ...good.broken, c: () => {} } }, independent, expected), [
    "broken example 'c' is not a line of the expected output",
    "breaking 'c' leaves it holding",
  ]);
  assert.deepEqual(
    examplesProblems({ ...good, healthy: () => ({ a: 1, b: 0 }) }, independent, expected)[0],
    'the healthy example prints ["a  positive","b  not"], not the expected lines',
  );
});
