// make check-exercise: each exercise check passes on a result that shows the exercise's finding and
// fails on one that does not; each names the command its lesson text gives; bad or word-answered
// exercises are usage errors before anything runs; a real run of lesson 3's exercise 2 checks; and
// --grade --save writes the verdict alone, for the class roll-up.
import { LESSONS } from '../../measure/lib/harness/lessons.ts';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { main } from '../../measure/check-exercise.ts';
import { numberReport, runReport } from '../../measure/lib/class/verdict.ts';
import { commandLine, EXERCISES, findExercise, lessonExercises } from '../../measure/lib/class/exercises.ts';
import { NUMBER_ANSWERS } from '../../measure/lib/class/exercise-numbers.ts';
import { gradedCell, readGraded, type GradedExercise } from '../../measure/lib/class/graded.ts';
import { CASES as LESSON_1 } from '../fixtures/exercise-cases/lesson-1.ts';
import { CASES as LESSON_2 } from '../fixtures/exercise-cases/lesson-2.ts';
import { CASES as LESSON_3 } from '../fixtures/exercise-cases/lesson-3.ts';
import { CASES as LESSON_4 } from '../fixtures/exercise-cases/lesson-4.ts';
import { CASES as LESSON_5, scaleOut } from '../fixtures/exercise-cases/lesson-5.ts';
import { CASES as LESSON_6 } from '../fixtures/exercise-cases/lesson-6.ts';
import { CASES as LESSON_7 } from '../fixtures/exercise-cases/lesson-7.ts';
import { CASES as LESSON_8 } from '../fixtures/exercise-cases/lesson-8.ts';
import { CASES as LESSON_12 } from '../fixtures/exercise-cases/lesson-12.ts';
import { CASES as WRITE_THE_FIX } from '../fixtures/exercise-cases/write-the-fix.ts';
import { failOnWarnings, runMainInProcess } from '../helpers.ts';

failOnWarnings();

const CASES = [
  ...LESSON_1,
  ...LESSON_2,
  ...LESSON_3,
  ...LESSON_4,
  ...LESSON_5,
  ...LESSON_6,
  ...LESSON_7,
  ...LESSON_8,
  ...LESSON_12,
  ...WRITE_THE_FIX,
];

test('each check holds on results with the finding and fails on each without it', () => {
  assert.deepEqual(
    CASES.map((c) => c.id).sort(),
    EXERCISES.map((e) => `${e.lesson}.${e.n}`).sort(),
    'every check has its cases',
  );
  for (const { id, shows, lacks, held = shows.map(() => true) } of CASES) {
    const [lesson, n] = id.split('.').map(Number) as [number, number];
    const e = findExercise(lesson, n)!;
    assert.equal(shows.length, e.runs.length, `${id}: one result per run`);
    assert.equal(e.check(shows, held).held, true, `${id} holds: ${e.check(shows, held).saw.join('; ')}`);
    assert.ok(lacks.length > 0, `${id} has a case that lacks its finding`);
    for (const { why, results, held: ran = held } of lacks)
      assert.equal(e.check(results, ran).held, false, `${id} fails (${why}): ${e.check(results, ran).saw.join('; ')}`);
  }
});

test('a machine that cannot show a finding is told so in words, not given a ✗', () => {
  const check = findExercise(5, 1)!;
  for (const cores of [1, 8]) {
    const outcome = check.check([scaleOut([190, 330, 340, 335], true, cores)]);
    assert.match(outcome.cannotShow ?? '', /the knee needs 2 to 4 cores/, `${cores} cores`);
  }
  const noProc = check.check([scaleOut([190, 330, 340, 335], false)]);
  assert.equal(noProc.held, true, 'no per-process CPU (macOS): the knee still counts');
  assert.equal(noProc.cannotShow, undefined);
  assert.match(noProc.saw.join(' '), /no per-process CPU at 5 replicas/);
});

test('each check runs the command its exercise text gives', () => {
  for (const e of EXERCISES) {
    const item = lessonExercises(e.lesson).get(e.n);
    assert.equal(item?.title, e.title, `lesson ${e.lesson} has exercise ${e.n}, "${e.title}"`);
    const text = item!.text.replace(/\s+/g, ' ');
    const [first, ...rest] = e.runs;
    assert.ok(text.includes(commandLine(first!)), `exercise ${e.lesson}.${e.n} gives: ${commandLine(first!)}`);
    // Later runs vary the first one's flags: each of their flags and values is in the text.
    for (const run of rest)
      for (const word of run.args) assert.ok(text.includes(word), `exercise ${e.lesson}.${e.n} names ${word}`);
  }
});

test('usage errors before anything runs: an exercise without its lesson, past the last, or answered in words', async () => {
  for (const [args, message] of [
    [['--exercise', '2'], /--exercise needs --lesson too/],
    [['--lesson', '3', '--quick'], /--exercise needs a number/],
    [['--lesson', '4', '--exercise', '99'], /lesson 4 has \d+ exercises/],
    [['--lesson', '7', '--exercise', '4'], /exercise 7\.4 has no run to check.*instructors\/lesson-7\.md/],
    [['--lesson', '0', '--exercise', '1'], /--lesson must be from 1/],
  ] as const) {
    const r = await runMainInProcess(main, [...args]);
    assert.equal(r.code, 2, args.join(' '));
    assert.match(r.stderr, message);
    assert.doesNotMatch(r.stderr + r.stdout, /started /);
  }
});

test('without --exercise: every exercise listed with how it is checked (a run, a number, or the written answer)', async () => {
  const all = await runMainInProcess(main, []);
  assert.equal(all.code, 0, all.stderr);
  const listed = [...all.stdout.matchAll(/^ +\d+\. /gm)].length;
  assert.equal(
    listed,
    LESSONS.map((l) => l.id).reduce((sum, l) => sum + lessonExercises(l).size, 0),
    'every exercise of every lesson',
  );
  for (const e of EXERCISES)
    assert.ok(
      all.stdout.includes(`make check-exercise LESSON=${e.lesson} N=${e.n}`),
      `${e.lesson}.${e.n} listed as a run`,
    );
  assert.match(all.stdout, /Exactly once\?\n +answered in words: instructors\/lesson-7\.md/);
  const one = await runMainInProcess(main, ['--lesson', '4']);
  assert.match(one.stdout, /^Lesson 4: /);
  assert.doesNotMatch(one.stdout, /Lesson [1-35-9]: /);
});

test('exercises done by hand check a number: inside the range exit 0, outside 1, no number or the wrong exercise 2', async () => {
  for (const a of NUMBER_ANSWERS) {
    assert.equal(
      lessonExercises(a.lesson).get(a.n)?.title,
      a.title,
      `lesson ${a.lesson} has exercise ${a.n}, "${a.title}"`,
    );
    assert.equal(findExercise(a.lesson, a.n), undefined, `${a.lesson}.${a.n} has a run-check or a number, not both`);
    assert.ok(a.low <= a.high, `${a.lesson}.${a.n}: a range (one value for a count)`);
  }
  const inside = await runMainInProcess(main, ['--lesson', '1', '--exercise', '2', '--answer', '335']);
  assert.equal(inside.code, 0, inside.stderr);
  assert.match(inside.stdout, /your answer: 335 ms; a right answer falls in 300–350 ms\n✓ within the range/);
  const outside = await runMainInProcess(main, ['--lesson', '1', '--exercise', '2', '--answer', '10.5']);
  assert.equal(outside.code, 1);
  assert.match(outside.stdout, /✗ outside the range/);
  assert.equal(
    (await runMainInProcess(main, ['--lesson', '4', '--exercise', '8', '--answer', '3,000'])).code,
    0,
    'a thousands separator is read',
  );
  assert.equal(
    (await runMainInProcess(main, ['--lesson', '3', '--exercise', '1', '--answer', '1,9'])).code,
    0,
    'a decimal comma is read',
  );
  for (const [args, message] of [
    [['--lesson', '1', '--exercise', '2', '--answer', 'about 300'], /--answer is a number \(ms\); got 'about 300'/],
    [['--lesson', '7', '--exercise', '4', '--answer', '3'], /exercise 7\.4 has no number to check/],
    [['--lesson', '3', '--exercise', '1'], /exercise 3\.1 is done by hand: give your number with --answer/],
    [['--lesson', '1', '--answer', '330'], /--answer needs --lesson and --exercise/],
    [['--lesson', '3', '--exercise', '1', '--answer', '1,9,5'], /--answer is a number/],
  ] as const) {
    const r = await runMainInProcess(main, [...args]);
    assert.equal(r.code, 2, args.join(' '));
    assert.match(r.stderr, message);
  }
});

test('a real run: lesson 3, exercise 2 (cluster --workers 4) shows its finding', async () => {
  const r = await runMainInProcess(main, ['--lesson', '3', '--exercise', '2', '--quick']);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /running: npx tsx measure\/cluster\.ts --workers 4 --quick --json/);
  assert.match(r.stdout, /4 workers; 16 loans on fresh connections landed 4\/4\/4\/4/);
  assert.match(r.stdout, /✓ the run shows it/);
});

test('--grade gives away nothing: no range, worked answer, expected finding or numbers behind it, for every exercise', async () => {
  for (const a of NUMBER_ANSWERS) {
    const span = Math.max(1, a.high - a.low);
    for (const [value, verdict] of [
      [a.low - 2 * span, /✗ not right: too low/],
      [(a.low + a.high) / 2, /✓ right/],
      [a.high + 2 * span, /✗ not right: too high/],
    ] as const) {
      const text = numberReport(a, value, true);
      assert.match(text, verdict, `${a.lesson}.${a.n} at ${value}`);
      for (const secret of [a.why, `${a.low}–${a.high}`, 'falls in', 'instructors/'])
        assert.ok(!text.includes(secret), `${a.lesson}.${a.n} at ${value} gives away "${secret}"`);
      // The question and the student's own number may hold any digits; the rest may not name a bound.
      const others = text.replace(`asked: ${a.ask}`, '').replace(`your answer: ${value} ${a.unit}`, '');
      for (const bound of new Set([a.low, a.high]))
        assert.doesNotMatch(
          others,
          new RegExp(`(^|[^\\d.])${String(bound).replace('.', '\\.')}([^\\d.]|$)`),
          `${a.lesson}.${a.n} at ${value} shows ${bound}`,
        );
    }
    // And the self-study output does show them, so the checks above could fail.
    assert.ok(numberReport(a, a.low - 2 * span, false).includes(a.why));
  }
  for (const { id, shows, lacks } of CASES) {
    const [lesson, n] = id.split('.').map(Number) as [number, number];
    const e = findExercise(lesson, n)!;
    for (const results of [shows, ...lacks.map((l) => l.results)]) {
      const outcome = e.check(results);
      const text = runReport(lesson, outcome, true);
      assert.match(
        text,
        outcome.cannotShow ? /cannot show this exercise/ : outcome.held ? /✓ right/ : /✗ not right/,
        id,
      );
      for (const secret of [e.expect, ...outcome.saw, 'instructors/'])
        assert.ok(!text.includes(secret), `${id} gives away "${secret}"`);
      assert.ok(
        outcome.saw.every((x) => runReport(lesson, outcome, false).includes(x)),
        `${id}: self-study shows what it saw`,
      );
    }
  }
  const graded = await runMainInProcess(main, ['--lesson', '1', '--exercise', '2', '--answer', '160', '--grade']);
  assert.equal(graded.code, 1);
  assert.doesNotMatch(graded.stdout, /300|350|335|why:/);
});

test('--save writes the verdict alone, for the roll-up; it needs an exercise, and it is made only for one that can be checked', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'nsl-graded-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const r = await runMainInProcess(main, [
    '--lesson',
    '1',
    '--exercise',
    '2',
    '--answer',
    '160',
    '--grade',
    '--save',
    path.join(dir, 'ann'),
  ]);
  assert.equal(r.code, 1, r.stderr);
  const file = path.join(dir, 'ann', 'exercise-1.2.json');
  assert.match(r.stderr, new RegExp(`saved: ${file.replace(/[.\\/]/g, '\\$&')}`));
  const text = readFileSync(file, 'utf8');
  const saved = JSON.parse(text);
  assert.deepEqual(Object.keys(saved).sort(), [
    'at',
    'attempt',
    'exercise',
    'kind',
    'lesson',
    'node',
    'off',
    'platform',
    'title',
    'verdict',
  ]);
  assert.deepEqual(
    [saved.kind, saved.lesson, saved.exercise, saved.verdict, saved.off],
    ['graded-exercise', 1, 2, 'wrong', 'too low'],
  );
  assert.doesNotMatch(
    text.replace(saved.at, '').replace(saved.node, ''),
    /300|350|335|160/,
    'neither the range, the worked answer nor the answer',
  );
  assert.deepEqual(readGraded(saved), saved, 'the roll-up reads it back as written');
  const again = await runMainInProcess(main, [
    '--lesson',
    '1',
    '--exercise',
    '2',
    '--answer',
    '330',
    '--save',
    path.join(dir, 'ann'),
  ]);
  assert.equal(again.code, 0);
  assert.match(again.stderr, /Note: without --grade this output shows the range and the answer/);
  assert.deepEqual(
    readdirSync(path.join(dir, 'ann')).sort(),
    ['exercise-1.2-2.json', 'exercise-1.2.json'],
    'a second attempt beside the first',
  );
  for (const [args, message] of [
    [['--lesson', '1', '--save', path.join(dir, 'bo')], /--save needs --lesson and --exercise/],
    [['--lesson', '7', '--exercise', '4', '--save', path.join(dir, 'cy')], /exercise 7\.4 has no run to check/],
  ] as const) {
    const bad = await runMainInProcess(main, [...args]);
    assert.equal(bad.code, 2, args.join(' '));
    assert.match(bad.stderr, message);
  }
  assert.deepEqual(readdirSync(dir), ['ann'], 'no folder made for a usage error');
});

test('readGraded names the first bad field of a graded file', () => {
  const good = {
    kind: 'graded-exercise',
    lesson: 1,
    exercise: 2,
    title: 'Predict',
    verdict: 'right',
    at: '2026-12-06T10:00:00Z',
    attempt: 1,
    node: '20.20.2',
    platform: 'linux-x64',
  };
  assert.deepEqual(readGraded(good), good);
  const { attempt: _none, ...older } = good;
  assert.equal(
    (readGraded(older) as { attempt: number }).attempt,
    1,
    'a file without an attempt number is a first attempt',
  );
  for (const [field, value] of [
    ['lesson', 0],
    ['exercise', '2'],
    ['title', 3],
    ['verdict', 'maybe'],
    ['off', 'sideways'],
    ['at', 'yesterday'],
    ['attempt', 0],
  ] as const) {
    assert.deepEqual(readGraded({ ...good, [field]: value }), { badField: field });
  }
  assert.equal(
    (readGraded({ ...good, title: 'a\u001b[31mred' }) as { title: string }).title,
    'a[31mred',
    'control characters dropped',
  );
  // Two attempts within one millisecond: the second file (listed first, as '-' sorts before '.') still comes second.
  const second = { ...good, verdict: 'wrong', off: 'too low', attempt: 2 } as const;
  assert.equal(gradedCell([second, good].map((g) => readGraded(g) as GradedExercise)), '✓, ✗ too low');
});
