// Proves the course's pieces agree: every lesson in measure/lib/lessons.ts has its text, its Makefile
// target, its README row and, per experiment, a script and an expected-output file; and nothing
// exists that no lesson names.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { LESSONS } from '../measure/lib/lessons.ts';
import { lessonExercises } from '../measure/lib/exercises.ts';
import { ERROR_CODES, EXIT } from '../lib/errors.ts';
import { failOnWarnings, ROOT } from './helpers.ts';

failOnWarnings();
const read = (f: string) => readFileSync(path.join(ROOT, f), 'utf8');
const readme = read('README.md');
const makefile = read('Makefile');
const experiments = LESSONS.flatMap((l) => l.experiments);
// Scripts under measure/ that run or compare experiments rather than being one.
const NOT_EXPERIMENTS = new Set(['rollup.ts', 'lesson.ts', 'fidelity.ts', 'compare.ts', 'check-exercise.ts']);

test('every lesson has its text, Makefile target and README entry', () => {
  for (const l of LESSONS) {
    assert.ok(existsSync(path.join(ROOT, l.text)), l.text);
    assert.match(makefile, new RegExp(`^lesson-${l.id}:`, 'm'), `Makefile target lesson-${l.id}`);
    assert.ok(readme.includes(`make lesson-${l.id}`), `README shows make lesson-${l.id}`);
    assert.ok(readme.includes(l.text), `README links ${l.text}`);
    const text = read(l.text);
    for (const e of l.experiments) assert.ok(text.includes(`measure/${e}.ts`) || text.includes(`\`${e}\``), `${l.text} mentions ${e}`);
  }
});

test('every experiment has a script and an expected-output file', () => {
  for (const e of experiments) {
    assert.ok(existsSync(path.join(ROOT, 'measure', `${e}.ts`)), `measure/${e}.ts`);
    assert.ok(existsSync(path.join(ROOT, 'expected-output', `${e}.txt`)), `expected-output/${e}.txt`);
  }
});

test('and the reverse: no script, expected file, lesson text or Makefile lesson target that no lesson names', () => {
  for (const f of readdirSync(path.join(ROOT, 'measure')).filter((f) => f.endsWith('.ts') && !NOT_EXPERIMENTS.has(f))) {
    assert.ok(experiments.includes(f.replace(/\.ts$/, '')), `measure/${f} is in no lesson`);
  }
  for (const f of readdirSync(path.join(ROOT, 'expected-output'))) {
    assert.ok(experiments.includes(f.replace(/\.txt$/, '')), `expected-output/${f} is in no lesson`);
  }
  for (const f of readdirSync(path.join(ROOT, 'lessons'))) {
    assert.ok(LESSONS.some((l) => l.text === `lessons/${f}`), `lessons/${f} is in no lesson`);
  }
  for (const m of makefile.matchAll(/^lesson-(\d+):/gm)) {
    assert.ok(LESSONS.some((l) => String(l.id) === m[1]), `Makefile lesson-${m[1]} is in no lesson`);
  }
});

test('the README\'s lesson table has a row for every lesson and no other, and make lessons runs them all', () => {
  const rows = [...readme.matchAll(/^\| (\d+) · .*$/gm)].map((m) => Number(m[1]));
  assert.deepEqual(rows, LESSONS.map((l) => l.id), 'README lesson rows, in order');
  // One table: no blank line between its rows (Markdown would end the table there).
  const table = /^\| lesson \|[^\n]*\n(?:\|[^\n]*\n)+/m.exec(readme)?.[0] ?? '';
  assert.deepEqual([...table.matchAll(/^\| (\d+) · /gm)].map((m) => Number(m[1])), rows, 'every lesson row is in the one table');
  for (const m of readme.matchAll(/make lesson-(\d+)/g)) assert.ok(LESSONS.some((l) => String(l.id) === m[1]), `README's make lesson-${m[1]} is a lesson`);
  assert.match(makefile, /^lessons: .*\n\t.*measure\/lesson\.ts all/m);
  assert.deepEqual(LESSONS.map((l) => l.id), [...LESSONS.map((l) => l.id)].sort((a, b) => a - b), 'lessons in order');
});

test('the README puts the two commands first', () => {
  const firstBlock = readme.split('```')[1] ?? '';
  assert.match(firstBlock, /make lesson-3/);
  assert.match(firstBlock, /make test/);
});

test('every error code is in the README\'s table with the exit code lib/errors.ts keeps next to it, and no other', () => {
  const rows = new Map([...readme.matchAll(/^\| `(KIT_ERR_[A-Z_]+)` \| (\d+) \|/gm)].map((m) => [m[1]!, Number(m[2])]));
  for (const [code, { exit }] of Object.entries(ERROR_CODES)) assert.equal(rows.get(code), exit, `README row for ${code}`);
  assert.deepEqual([...rows.keys()].sort(), Object.keys(ERROR_CODES).sort(), 'no README row for a code that does not exist');
  for (const exit of new Set(Object.values(ERROR_CODES).map((e) => e.exit))) assert.ok(Object.values(EXIT).includes(exit as never), `exit ${exit} is one of EXIT`);
});

/**
 * Where a --predict question points: 'lessons/<file>.md, Experiment 2 (a)' or 'lessons/<file>.md,
 * "A heading" and "Another"'. Each quoted name, or else the bare first name, must be (part of) a
 * heading of that file or a paragraph's bold label (**Why.**), backticks aside. Empty: it holds.
 */
function lessonRefProblems(ref: string): string[] {
  const [file, ...rest] = ref.split(', ');
  if (!file || !existsSync(path.join(ROOT, file))) return [`no file ${file}`];
  const headings = read(file)
    .split('\n')
    .filter((l) => l.startsWith('#') || /^\*\*[^*]+\*\*/.test(l))
    .map((l) => l.replace(/`/g, ''));
  const tail = rest.join(', ');
  const quoted = [...tail.matchAll(/"([^"]+)"/g)].map((m) => m[1]!);
  const bare = tail.replace(/\s*\(.*\)\s*$/, '').split(',')[0]!.trim();
  const names = quoted.length ? quoted : bare && !bare.startsWith('"') ? [bare] : [];
  return names.filter((n) => !headings.some((h) => h.includes(`${n}:`) || h.includes(n))).map((n) => `${file} has no heading "${n}"`);
}

test('every experiment has --predict questions, and each names a lesson section that exists', async () => {
  const { loadExperiment } = await import('../measure/lib/experiments.ts');
  for (const name of new Set(experiments)) {
    const questions = (await loadExperiment(name)).report.predictions ?? [];
    assert.ok(questions.length > 0, `${name} has no --predict questions`);
    for (const q of questions) assert.deepEqual(lessonRefProblems(q.lesson), [], `${name} ${q.id}: ${q.lesson}`);
  }
  assert.deepEqual(lessonRefProblems('lessons/04-scaling-out.md, Experiment 9'), ['lessons/04-scaling-out.md has no heading "Experiment 9"'], 'the check can fail');
  assert.deepEqual(lessonRefProblems('lessons/01-ceiling.md, "No such part"'), ['lessons/01-ceiling.md has no heading "No such part"']);
});

test('every answer in instructors/ is headed with an exercise that exists, by its number and title', () => {
  const files = readdirSync(path.join(ROOT, 'instructors')).filter((f) => /^lesson-\d+\.md$/.test(f));
  assert.ok(files.length >= 3);
  for (const f of files) {
    const titles = new Map([...lessonExercises(Number(/\d+/.exec(f)![0]))].map(([n, e]) => [n, e.title]));
    const heads = [...read(`instructors/${f}`).matchAll(/^## (\d+)\. (.+)$/gm)];
    assert.ok(heads.length > 0, `${f} answers something`);
    for (const [, n, title] of heads) assert.equal(titles.get(Number(n)), title, `${f}: "## ${n}. ${title}" is exercise ${n} of its lesson`);
  }
});
