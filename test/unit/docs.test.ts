// Proves the course's pieces agree: every lesson in measure/lib/harness/lessons.ts has its text, its Makefile
// target, its README row and, per experiment, a script and an expected-output file; and nothing
// exists that no lesson names.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { LESSONS } from '../../measure/lib/harness/lessons.ts';
import { INCIDENT_NAMES } from '../../results/incident/result.ts';
import { EXERCISES, lessonExercises } from '../../measure/lib/class/exercises.ts';
import { NUMBER_ANSWERS } from '../../measure/lib/class/exercise-numbers.ts';
import { ERROR_CODES, EXIT } from '../../lib/errors.ts';
import { failOnWarnings, ROOT } from '../helpers.ts';

failOnWarnings();
const read = (f: string) => readFileSync(path.join(ROOT, f), 'utf8');
const readme = read('README.md');
const makefile = read('Makefile');
const experiments = LESSONS.flatMap((l) => l.experiments);
// Scripts under measure/ that run or compare experiments rather than being one.
const NOT_EXPERIMENTS = new Set([
  'rollup.ts',
  'lesson.ts',
  'fidelity.ts',
  'compare.ts',
  'check-exercise.ts',
  'background-load.ts',
]);

test('every lesson has its text, Makefile target and README entry', () => {
  for (const l of LESSONS) {
    assert.ok(existsSync(path.join(ROOT, l.text)), l.text);
    assert.match(makefile, new RegExp(`^lesson-${l.id}:`, 'm'), `Makefile target lesson-${l.id}`);
    assert.ok(readme.includes(`make lesson-${l.id}`), `README shows make lesson-${l.id}`);
    assert.ok(readme.includes(l.text), `README links ${l.text}`);
    const text = read(l.text);
    for (const e of l.experiments)
      assert.ok(text.includes(`measure/${e}.ts`) || text.includes(`\`${e}\``), `${l.text} mentions ${e}`);
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
  const folders = ['profile', 'fixed', 'incident'];
  for (const f of readdirSync(path.join(ROOT, 'expected-output')).filter((f) => !folders.includes(f))) {
    assert.ok(experiments.includes(f.replace(/\.txt$/, '')), `expected-output/${f} is in no lesson`);
  }
  // expected-output/profile/<x>.txt: the lines a --profile run of experiment x adds; fixed/<x>.txt:
  // what x prints with a student's fix (--mine).
  for (const d of ['profile', 'fixed'])
    for (const f of readdirSync(path.join(ROOT, 'expected-output', d)))
      assert.ok(experiments.includes(f.replace(/\.txt$/, '')), `expected-output/${d}/${f} is in no lesson`);
  // expected-output/incident/<name>.txt: each incident lesson 10's incident server plants.
  assert.deepEqual(
    readdirSync(path.join(ROOT, 'expected-output', 'incident')).sort(),
    [...INCIDENT_NAMES].map((n) => `${n}.txt`).sort(),
  );
  for (const f of readdirSync(path.join(ROOT, 'lessons')).filter((f) => f !== 'glossary.md')) {
    assert.ok(
      LESSONS.some((l) => l.text === `lessons/${f}`),
      `lessons/${f} is in no lesson`,
    );
  }
  for (const m of makefile.matchAll(/^lesson-(\d+):/gm)) {
    assert.ok(
      LESSONS.some((l) => String(l.id) === m[1]),
      `Makefile lesson-${m[1]} is in no lesson`,
    );
  }
});

test("the README's lesson table has a row for every lesson and no other, and make lessons runs them all", () => {
  const rows = [...readme.matchAll(/^\| (\d+) · .*$/gm)].map((m) => Number(m[1]));
  assert.deepEqual(
    rows,
    LESSONS.map((l) => l.id),
    'README lesson rows, in order',
  );
  // One table: no blank line between its rows (Markdown would end the table there).
  const table = /^\| lesson \|[^\n]*\n(?:\|[^\n]*\n)+/m.exec(readme)?.[0] ?? '';
  assert.deepEqual(
    [...table.matchAll(/^\| (\d+) · /gm)].map((m) => Number(m[1])),
    rows,
    'every lesson row is in the one table',
  );
  for (const m of readme.matchAll(/make lesson-(\d+)/g))
    assert.ok(
      LESSONS.some((l) => String(l.id) === m[1]),
      `README's make lesson-${m[1]} is a lesson`,
    );
  assert.match(makefile, /^lessons: .*\n\t.*measure\/lesson\.ts all/m);
  assert.deepEqual(
    LESSONS.map((l) => l.id),
    [...LESSONS.map((l) => l.id)].sort((a, b) => a - b),
    'lessons in order',
  );
});

test('the README puts the two commands first', () => {
  const firstBlock = readme.split('```')[1] ?? '';
  assert.match(firstBlock, /make lesson-3/);
  assert.match(firstBlock, /make test/);
});

test('the README lists the three test commands with their times, make test first, and each is a Makefile target', () => {
  const firstBlock = readme.split('```')[1] ?? '';
  const lines = ['test', 'test-e2e', 'test-all'].map((target) => {
    assert.match(makefile, new RegExp(`^${target}: `, 'm'), `make ${target} is a target`);
    const line = firstBlock.split('\n').find((l) => l.startsWith(`make ${target} `));
    assert.ok(line, `make ${target} is in the README's first block`);
    assert.match(line, /about \d+(½|¼|¾)? min/, `make ${target} gives its time`);
    return firstBlock.indexOf(line);
  });
  assert.deepEqual(
    [...lines].sort((a, b) => a - b),
    lines,
    'make test, then test-e2e, then test-all',
  );
  assert.match(firstBlock, /make test .*run it first/);
  for (const tier of ['unit', 'integration', 'smoke', 'e2e'])
    assert.match(makefile, new RegExp(`test/${tier}/`), `the Makefile runs test/${tier}/`);
});

test("every error code is in the README's table with the exit code lib/errors.ts keeps next to it, and no other", () => {
  const rows = new Map([...readme.matchAll(/^\| `(KIT_ERR_[A-Z_]+)` \| (\d+) \|/gm)].map((m) => [m[1]!, Number(m[2])]));
  for (const [code, { exit }] of Object.entries(ERROR_CODES))
    assert.equal(rows.get(code), exit, `README row for ${code}`);
  assert.deepEqual(
    [...rows.keys()].sort(),
    Object.keys(ERROR_CODES).sort(),
    'no README row for a code that does not exist',
  );
  for (const exit of new Set(Object.values(ERROR_CODES).map((e) => e.exit)))
    assert.ok(Object.values(EXIT).includes(exit as never), `exit ${exit} is one of EXIT`);
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
  const bare = tail
    .replace(/\s*\(.*\)\s*$/, '')
    .split(',')[0]!
    .trim();
  const names = quoted.length ? quoted : bare && !bare.startsWith('"') ? [bare] : [];
  return names
    .filter((n) => !headings.some((h) => h.includes(`${n}:`) || h.includes(n)))
    .map((n) => `${file} has no heading "${n}"`);
}

test('every experiment has --predict questions, and each names a lesson section that exists', async () => {
  const { loadExperiment } = await import('../../measure/lib/harness/experiments.ts');
  for (const name of new Set(experiments)) {
    const questions = (await loadExperiment(name)).report.predictions ?? [];
    assert.ok(questions.length > 0, `${name} has no --predict questions`);
    for (const q of questions) assert.deepEqual(lessonRefProblems(q.lesson), [], `${name} ${q.id}: ${q.lesson}`);
  }
  assert.deepEqual(
    lessonRefProblems('lessons/04-where-requests-go.md, Experiment 9'),
    ['lessons/04-where-requests-go.md has no heading "Experiment 9"'],
    'the check can fail',
  );
  assert.deepEqual(lessonRefProblems('lessons/01-ceiling.md, "No such part"'), [
    'lessons/01-ceiling.md has no heading "No such part"',
  ]);
});

/**
 * The measure ids results/ can report (every .ts below it), as patterns: each `measure('<id>'` or
 * measure(`<prefix>${…}<suffix>`) call's first argument, a template part standing for any name.
 */
function measureIdPatterns(): RegExp[] {
  const dir = path.join(ROOT, 'results');
  const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
  const sources = files.map((f) => readFileSync(path.join(dir, f), 'utf8')).join('\n');
  return [...sources.matchAll(/measure\(\s*(?:'([^']+)'|`([^`]+)`)/g)].map((m) => {
    const parts = (m[1] ?? m[2]!).split(/\$\{[^}]+\}/).map((p) => p.replace(/[.*+?^$()|[\]\\]/g, '\\$&'));
    return new RegExp(`^${parts.join('[a-z0-9-]+')}$`);
  });
}

test('every --predict question is settled by a measure id that results/ reports', async () => {
  const { loadExperiment } = await import('../../measure/lib/harness/experiments.ts');
  const patterns = measureIdPatterns();
  assert.ok(patterns.length >= 30, `${patterns.length} measure ids found`);
  const known = (id: string) => patterns.some((p) => p.test(id));
  for (const name of new Set(experiments)) {
    for (const q of (await loadExperiment(name)).report.predictions ?? [])
      assert.ok(known(q.measure), `${name} ${q.id}: no measure '${q.measure}' in results/`);
  }
  assert.ok(!known('round-robin-p96-vs-load-aware') && !known('no-such-measure'), 'the check can fail');
});

/**
 * What is wrong with lesson `lesson`'s answers file `text`: an exercise with no answer, an answer
 * headed with no exercise or the wrong title, answers out of order, and an exercise a run can check
 * whose answer does not say how (make check-exercise LESSON=<n> N=<m>).
 */
function answerProblems(lesson: number, text: string): string[] {
  const exercises = lessonExercises(lesson);
  const heads = [...text.matchAll(/^## (\d+)\. (.+)$/gm)].map((m) => ({ n: Number(m[1]), title: m[2]!, at: m.index }));
  const problems: string[] = [];
  for (const h of heads)
    if (exercises.get(h.n)?.title !== h.title)
      problems.push(`"## ${h.n}. ${h.title}" is not exercise ${h.n} of lesson ${lesson}`);
  for (const [n, e] of exercises)
    if (!heads.some((h) => h.n === n)) problems.push(`exercise ${n} (${e.title}) has no answer`);
  if (heads.some((h, i) => i > 0 && h.n <= heads[i - 1]!.n)) problems.push('the answers are not in exercise order');
  for (const e of [...EXERCISES, ...NUMBER_ANSWERS].filter((x) => x.lesson === lesson)) {
    const i = heads.findIndex((h) => h.n === e.n);
    const section = i < 0 ? '' : text.slice(heads[i]!.at, heads[i + 1]?.at ?? text.length);
    if (i >= 0 && !section.includes(`make check-exercise LESSON=${lesson} N=${e.n}`))
      problems.push(`exercise ${e.n}'s answer does not name make check-exercise LESSON=${lesson} N=${e.n}`);
  }
  return problems;
}

test('every exercise of every lesson has its answer in instructors/, in order, naming its run-check or number check where it has one', () => {
  for (const lesson of LESSONS) {
    const file = `instructors/lesson-${lesson.id}.md`;
    assert.ok(existsSync(path.join(ROOT, file)), `${file} exists`);
    assert.deepEqual(answerProblems(lesson.id, read(file)), [], file);
    assert.match(
      read('instructors/README.md'),
      new RegExp(`\\(lesson-${lesson.id}\\.md\\)`),
      `instructors/README.md links ${file}`,
    );
  }
  // The check can fail: an answer left out, a wrong title, an order swapped, a check not named.
  const one = read('instructors/lesson-4.md');
  const without1 = one.replace(/^## 1\. /m, '## 99. ');
  assert.ok(answerProblems(4, without1).includes('exercise 1 (Sampling with replacement) has no answer'));
  assert.ok(
    answerProblems(4, one.replace('## 2. Medians hide', '## 2. Means hide')).some((p) =>
      p.startsWith('"## 2. Means hide"'),
    ),
  );
  assert.ok(
    answerProblems(4, one.replaceAll('make check-exercise LESSON=4 N=6', 'make check')).includes(
      "exercise 6's answer does not name make check-exercise LESSON=4 N=6",
    ),
  );
  assert.ok(
    answerProblems(4, `## 2. Medians hide\n\n## 1. Sampling with replacement\n`).includes(
      'the answers are not in exercise order',
    ),
  );
});

test('the README says how to set up each OS, and what the cgroup quota needs as the code does', () => {
  const setup = readme.slice(
    readme.indexOf('## Setting up your machine'),
    readme.indexOf('\n## ', readme.indexOf('## Setting up your machine') + 1),
  );
  assert.ok(setup.length > 500, 'the README has a "Setting up your machine" section');
  for (const [os, command] of [
    ['macOS', 'xcode-select --install'],
    ['macOS', 'brew install node nginx redis postgresql@16'],
    ['MacPorts', 'sudo port install'],
    ['WSL2', 'wsl --install'],
    ['WSL2', 'sudo apt-get install -y make'],
    ['Fedora', 'sudo dnf install'],
  ] as const) {
    assert.ok(setup.includes(os) && setup.includes(command), `${os}: ${command}`);
  }
  assert.match(setup, /not under `\/mnt\/c`/, 'WSL2: clone inside the Linux home');
  assert.match(setup, /KIT_ERR_NEEDS_WSL/, 'native Windows: what happens there');
  for (const tool of ['nginx', 'redis-server', 'PostgreSQL', 'Chromium'])
    assert.match(setup, new RegExp(`^\\| ${tool}`, 'm'), `which lessons need ${tool}`);
  // servers/lib/cpu/quota.ts probes the top of /sys/fs/cgroup only, which needs root.
  for (const text of [readme, read('lessons/08-autoscaling.md')]) assert.doesNotMatch(text, /delegated/);
  assert.match(readme, /cgroup when it may create one at the top of `\/sys\/fs\/cgroup`\s+\(Linux, run as root/);
});

test('lesson 2 gives macOS, which has no ss, a command to count TIME_WAIT sockets', () => {
  const text = read('lessons/02-proxy.md');
  assert.match(text, /`ss -tan \| grep -c TIME-WAIT` on Linux/);
  assert.match(text, /`netstat -an -p tcp \| grep -c TIME_WAIT` on macOS/);
});
