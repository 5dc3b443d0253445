// Proves that every experiment has each part docs/adding-an-experiment.md lists: its script, its
// report folder, its --predict questions, its expected output, its lesson's text, and a report
// test (examples in its report, or a unit test of its own). Its end-to-end run is found or made by
// test/e2e/every-experiment.test.ts. A new experiment that lacks one fails here, naming the part.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { LESSONS } from '../../measure/lib/harness/lessons.ts';
import { failOnWarnings, ROOT } from '../helpers.ts';

failOnWarnings();

/** A file's text from the project root, or undefined when there is none. */
type Read = (file: string) => string | undefined;

/**
 * What experiment `name` of the lesson whose text is `lessonText` lacks, each as the file and the
 * part; `unitTests` are the texts of test/unit/*.test.ts.
 */
export function missingParts(name: string, read: Read, lessonText: string, unitTests: readonly string[]): string[] {
  const problems: string[] = [];
  const script = read(`measure/${name}.ts`);
  if (script === undefined) problems.push(`measure/${name}.ts: no script`);
  else if (!script.includes('defineExperiment(') || !script.includes(`name: '${name}'`))
    problems.push(`measure/${name}.ts: no defineExperiment({ name: '${name}', ... })`);
  const report = read(`results/${name}/report.ts`);
  if (report === undefined) problems.push(`results/${name}/report.ts: no report (result type, shape, render)`);
  const folder = [report ?? '', read(`results/${name}/predictions.ts`) ?? ''].join('\n');
  if (!/export const predictions\b/.test(folder))
    problems.push(`results/${name}/: no --predict questions (export const predictions)`);
  const expected = read(`expected-output/${name}.txt`);
  if (expected === undefined) problems.push(`expected-output/${name}.txt: no file`);
  else if (!expected.split('\n').some((l) => l.trim() && !l.startsWith('#')))
    problems.push(`expected-output/${name}.txt: no shape lines`);
  if (!lessonText.includes(`measure/${name}.ts`) && !lessonText.includes(`\`${name}\``))
    problems.push(`its lesson's text does not name \`${name}\``);
  const examples = /export const examples\b/.test(report ?? '');
  if (!examples && !unitTests.some((t) => t.includes(`results/${name}/`)))
    problems.push(`results/${name}/report.ts: no examples, and no unit test imports results/${name}/`);
  return problems;
}

const read: Read = (file) =>
  existsSync(path.join(ROOT, file)) ? readFileSync(path.join(ROOT, file), 'utf8') : undefined;
const unitTests = readdirSync(path.join(ROOT, 'test/unit'))
  .filter((f) => f.endsWith('.test.ts'))
  .map((f) => readFileSync(path.join(ROOT, 'test/unit', f), 'utf8'));

test('every experiment has its script, report, questions, expected output, lesson text and report test', () => {
  for (const lesson of LESSONS) {
    const text = readFileSync(path.join(ROOT, lesson.text), 'utf8');
    for (const name of lesson.experiments) assert.deepEqual(missingParts(name, read, text, unitTests), [], name);
  }
});

test('the parts check names each missing part of a new experiment', () => {
  const files: Record<string, string> = {
    'measure/x.ts': "export const experiment = defineExperiment({ name: 'x', ... });",
    'results/x/report.ts': 'export const examples = {};\nexport const predictions = [];',
    'expected-output/x.txt': 'x  a  b\n',
  };
  const readFake: Read = (f) => files[f];
  assert.deepEqual(missingParts('x', readFake, 'Run `x`.', []), []);
  assert.deepEqual(missingParts('y', readFake, 'Nothing here.', []), [
    'measure/y.ts: no script',
    'results/y/report.ts: no report (result type, shape, render)',
    'results/y/: no --predict questions (export const predictions)',
    'expected-output/y.txt: no file',
    "its lesson's text does not name `y`",
    'results/y/report.ts: no examples, and no unit test imports results/y/',
  ]);
  files['results/x/report.ts'] = 'export const predictions = [];';
  assert.deepEqual(
    missingParts('x', readFake, 'Run `x`.', ["import { shape } from '../../results/x/report.ts';"]),
    [],
    'a unit test of its own will do',
  );
  assert.deepEqual(missingParts('x', readFake, 'Run `x`.', []), [
    'results/x/report.ts: no examples, and no unit test imports results/x/',
  ]);
  files['expected-output/x.txt'] = '# only a comment\n';
  assert.deepEqual(missingParts('x', readFake, 'Run `x`.', ['results/x/']), ['expected-output/x.txt: no shape lines']);
});
