/**
 * Checks an exercise by running it (`npx tsx measure/check-exercise.ts --lesson 4 --exercise 1`,
 * `make check-exercise LESSON=4 N=1`): runs the exercise's command with --json in this process,
 * then says whether the run shows what the exercise is about, with the numbers behind it.
 * Exit 0 when it does, 1 when it does not, 2 on a usage error (also for an exercise that has no run
 * to check: its answer is in words), 3 when the run failed, 130 on Ctrl-C. With --grade it says only
 * right or wrong (a number: too low or too high), never the range, the worked answer, the expected
 * finding or the numbers behind the verdict, so that a class can be graded with it; --save writes
 * that verdict to a file for the class roll-up (measure/lib/class/graded.ts).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { EXIT, KitError } from '../lib/errors.ts';
import { commandMain, runIfMain, type Io } from '../lib/entry.ts';
import { defineCommand, intFlag } from '../lib/cli.ts';
import { runExperiment } from './lib/harness/experiment.ts';
import { loadExperiment } from './lib/harness/experiments.ts';
import {
  commandLine,
  EXERCISES,
  findExercise,
  lessonExercises,
  type ExerciseCheck,
  type ExerciseRun,
} from './lib/class/exercises.ts';
import { findNumberAnswer, NUMBER_ANSWERS } from './lib/class/exercise-numbers.ts';
import { answers, checkNumber, runReport } from './lib/class/verdict.ts';
import { main as simMain } from '../sim/run.ts';
import { LESSONS } from './lib/harness/lessons.ts';
import { colorEnabled, makeChalk } from '../results/report/format.ts';
import { gradedExercise, type GradedExercise } from './lib/class/graded.ts';
import { savePath, writeSaved } from './lib/harness/save.ts';

const checkable = EXERCISES.map((e) => `${e.lesson}.${e.n}`).join(', ');
const numbered = NUMBER_ANSWERS.map((e) => `${e.lesson}.${e.n}`).join(', ');

const command = defineCommand({
  usage:
    'npx tsx measure/check-exercise.ts [--lesson <n> [--exercise <n> [--quick | --answer <number>] [--grade] [--save <folder>]]]',
  summary: `Runs an exercise's command and checks that the run shows what the exercise is about. Checkable by a run: ${checkable} (lesson.exercise). Done by hand, with a number to check (--answer): ${numbered}. The others are answered in words in instructors/. Without --exercise, lists the exercises (of --lesson, or all) and how each is checked.`,
  flags: {
    lesson: { type: 'string', valueName: 'n', description: `the lesson, ${LESSONS.map((l) => l.id).join(', ')}` },
    exercise: { type: 'string', valueName: 'n', description: "the exercise's number in the lesson text" },
    quick: { type: 'boolean', description: 'a smaller workload, where the exercise still shows with it' },
    answer: {
      type: 'string',
      valueName: 'number',
      description:
        'for an exercise done by hand: your number, checked against the range a right answer falls in (make check-exercise ... ANSWER=<number>)',
    },
    name: {
      type: 'string',
      valueName: 'incident',
      description:
        "for lesson 10's fix (exercise 10.2): which incident you fixed (make check-exercise LESSON=10 N=2 NAME=redos)",
    },
    grade: {
      type: 'boolean',
      description:
        'for grading: only right or wrong (a number: too low or too high), without the range, the worked answer, the expected finding or the numbers behind it',
    },
    save: {
      type: 'string',
      valueName: 'folder|file.json',
      description:
        'also write the verdict (right or wrong, nothing of the answer) to <folder>/exercise-<lesson>.<n>.json, for the class roll-up',
    },
  },
  epilogue:
    'Example: npx tsx measure/check-exercise.ts --lesson 4 --exercise 1   (make check-exercise LESSON=4 N=1)\n' +
    'Grading: make check-exercise LESSON=1 N=2 ANSWER=330 ARGS="--grade --save runs/alice"; then make rollup DIR=runs/',
});

/** Every exercise (of one lesson, or all): its title and how it is checked, a run or its written answer. */
function listing(only?: number): string {
  const lines: string[] = [];
  for (const l of LESSONS.filter((x) => only === undefined || x.id === only)) {
    lines.push(`Lesson ${l.id}: ${l.title}`);
    for (const [n, e] of lessonExercises(l.id)) {
      const check = findExercise(l.id, n);
      const num = findNumberAnswer(l.id, n);
      const how = check
        ? `make check-exercise LESSON=${l.id} N=${n}${check.asks ? ` NAME=<${check.asks.choices.join('|')}>` : ''}   (${check.runs.map((r) => commandLine(r)).join(', then ')})`
        : num
          ? `make check-exercise LESSON=${l.id} N=${n} ANSWER=<${num.unit}>   (by hand: ${num.ask})`
          : `answered in words: instructors/lesson-${l.id}.md`;
      lines.push(`  ${String(n).padStart(2)}. ${e.title}\n      ${how}`);
    }
  }
  return lines.join('\n') + '\n';
}

/**
 * Runs one command of an exercise in this process with its JSON captured (progress still goes to
 * stderr); returns the result it printed, or the exit code of a run that failed.
 */
async function runOne(run: ExerciseRun, extra: string[], io: Io): Promise<{ result: unknown; held: boolean } | number> {
  let json = '';
  const capture = { stdout: { write: (s: string) => (json += s) }, stderr: io.stderr };
  const args = [...run.args, ...extra];
  if (run.script === 'sim/run.ts') {
    const code = await simMain(args, capture);
    return code === EXIT.holds ? { result: JSON.parse(json), held: true } : code;
  }
  const name = path.basename(run.script, '.ts');
  const code = await runExperiment(await loadExperiment(name), args, capture);
  if (code !== EXIT.holds && code !== EXIT.doesNotHold) return code;
  const doc = JSON.parse(json) as { result: unknown; holds: boolean };
  return { result: doc.result, held: doc.holds };
}

/** Where a verdict goes, and which attempt it is (the roll-up orders attempts saved within one millisecond by it). */
interface SaveTarget {
  file: string;
  attempt: number;
}

/**
 * Where this attempt's verdict goes: `file`, or in a folder (--save runs/ann) the first of
 * exercise-1.2.json, exercise-1.2-2.json, … that does not exist yet, so that a student's second
 * attempt is kept beside the first and the roll-up lists both in order. A file named with --save
 * (*.json) is written over, as asked, as a first attempt.
 */
function attemptFile(file: string, value: string): SaveTarget {
  if (/\.json$/i.test(value) || !existsSync(file)) return { file, attempt: 1 };
  for (let k = 2; ; k++) {
    const next = file.replace(/\.json$/, `-${k}.json`);
    if (!existsSync(next)) return { file: next, attempt: k };
  }
}

/**
 * Writes the verdict to `file` when --save was given (a failure to write is said, the verdict
 * stands), and turns it into the exit code: 0 right or not counted, 1 wrong.
 */
function finish(graded: GradedExercise, to: SaveTarget | undefined, io: Io): number {
  if (to)
    io.stderr.write(
      (writeSaved(to.file, JSON.stringify({ ...graded, attempt: to.attempt }, null, 2) + '\n') ?? `saved: ${to.file}`) +
        '\n',
    );
  return graded.verdict === 'wrong' ? EXIT.doesNotHold : EXIT.holds;
}

/**
 * Checks an exercise by its runs: prints what is expected (not with `grade`), runs each command
 * with --json (--quick when asked and the exercise still shows with it), then the verdict; saves it
 * to `to`. Resolves with the exit code, a failed run's own.
 */
async function checkRun(
  exercise: ExerciseCheck,
  o: { lesson: number; n: number; quick: boolean; grade: boolean; name: string | undefined },
  to: SaveTarget | undefined,
  io: Io,
): Promise<number> {
  const c = makeChalk(colorEnabled(io.stdout));
  const quick = o.quick && exercise.quickOk;
  io.stdout.write(c.bold(`Lesson ${o.lesson}, exercise ${o.n}: ${exercise.title}`) + '\n');
  if (o.quick && !exercise.quickOk)
    io.stdout.write(c.dim('(without --quick: this exercise needs the full run)') + '\n');
  if (!o.grade) io.stdout.write(`expected: ${exercise.expect}\n`);
  const results: unknown[] = [];
  const held: boolean[] = [];
  for (const given of exercise.runs) {
    const run = { ...given, args: given.args.map((a) => (a === exercise.asks?.placeholder ? o.name! : a)) };
    const extra = [
      ...(quick && run.script !== 'sim/run.ts' && !run.args.includes('--quick') ? ['--quick'] : []),
      '--json',
    ];
    io.stdout.write(`\nrunning: ${commandLine(run, extra)}\n`);
    const out = await runOne(run, extra, io);
    if (typeof out === 'number') return out;
    results.push(out.result);
    held.push(out.held);
  }
  io.stdout.write('\n');
  const outcome = exercise.check(results, held);
  io.stdout.write(runReport(o.lesson, outcome, o.grade, colorEnabled(io.stdout)));
  const verdict = outcome.cannotShow ? 'not-counted' : outcome.held ? 'right' : 'wrong';
  return finish(gradedExercise(o.lesson, o.n, exercise.title, verdict), to, io);
}

/** --name, for an exercise about one of several things (lesson 10's fix: the incident); KIT_ERR_USAGE otherwise. */
function nameFlag(exercise: ExerciseCheck, lesson: number, n: number, raw: string | undefined): string | undefined {
  const asks = exercise.asks;
  if (!asks) {
    if (raw !== undefined) throw new KitError('KIT_ERR_USAGE', `exercise ${lesson}.${n} takes no --name`);
    return undefined;
  }
  const how = `make check-exercise LESSON=${lesson} N=${n} NAME=<${asks.choices.join('|')}>`;
  if (raw === undefined)
    throw new KitError('KIT_ERR_USAGE', `exercise ${lesson}.${n} checks one fix: name it with --name`, how);
  if (!asks.choices.includes(raw))
    throw new KitError('KIT_ERR_USAGE', `--name must be one of ${asks.choices.join(', ')}; got '${raw}'`, how);
  return raw;
}

export const main = commandMain(command, async (parsed, io) => {
  const lesson = intFlag('lesson', parsed.flags.lesson, 1, Math.max(...LESSONS.map((l) => l.id)), NaN);
  const n = intFlag('exercise', parsed.flags.exercise, 1, 99, NaN);
  if (Number.isNaN(n)) {
    if (parsed.flags.answer !== undefined)
      throw new KitError(
        'KIT_ERR_USAGE',
        '--answer needs --lesson and --exercise (make check-exercise LESSON=<n> N=<n> ANSWER=<number>)',
        `numbers to check: ${numbered}`,
      );
    if (parsed.flags.save !== undefined)
      throw new KitError(
        'KIT_ERR_USAGE',
        "--save needs --lesson and --exercise: it saves one exercise's verdict",
        'make check-exercise LESSON=<n> N=<n> ARGS="--grade --save runs/<name>"',
      );
    if (parsed.flags.exercise !== undefined || parsed.flags.quick)
      throw new KitError(
        'KIT_ERR_USAGE',
        '--exercise needs a number, and --lesson with it',
        `checkable by a run: ${checkable}`,
      );
    io.stdout.write(listing(Number.isNaN(lesson) ? undefined : lesson));
    return EXIT.holds;
  }
  if (Number.isNaN(lesson))
    throw new KitError('KIT_ERR_USAGE', '--exercise needs --lesson too', `checkable by a run: ${checkable}`);
  const count = lessonExercises(lesson).size;
  if (n > count) throw new KitError('KIT_ERR_USAGE', `lesson ${lesson} has ${count} exercises; got --exercise ${n}`);
  const number = findNumberAnswer(lesson, n);
  // The folder is made (and checked) once the exercise is known to be checkable, before a run starts.
  const saveTo = (): SaveTarget | undefined => {
    if (parsed.flags.save === undefined) return undefined;
    if (parsed.flags.grade !== true)
      io.stderr.write(
        'Note: without --grade this output shows the range and the answer; --save keeps only the verdict.\n',
      );
    return attemptFile(savePath(parsed.flags.save, `exercise-${lesson}.${n}`), parsed.flags.save);
  };
  if (parsed.flags.answer !== undefined) {
    if (!number)
      throw new KitError(
        'KIT_ERR_USAGE',
        `exercise ${lesson}.${n} has no number to check with --answer`,
        `numbers to check: ${numbered}`,
      );
    const to = saveTo();
    return finish(checkNumber(number, String(parsed.flags.answer), parsed.flags.grade === true, io), to, io);
  }
  const exercise = findExercise(lesson, n);
  if (!exercise && number)
    throw new KitError(
      'KIT_ERR_USAGE',
      `exercise ${lesson}.${n} is done by hand: give your number with --answer (ANSWER=<${number.unit}>)`,
      `asked: ${number.ask}`,
    );
  if (!exercise)
    throw new KitError(
      'KIT_ERR_USAGE',
      `exercise ${lesson}.${n} has no run to check: it is answered in words`,
      `${answers(lesson)}; checkable by a run: ${checkable}`,
    );

  const name = nameFlag(exercise, lesson, n, parsed.flags.name);
  return checkRun(
    exercise,
    { lesson, n, quick: parsed.flags.quick === true, grade: parsed.flags.grade === true, name },
    saveTo(),
    io,
  );
});

await runIfMain(import.meta, main);
