/**
 * Exercises that a run can check (`make check-exercise LESSON=4 N=1`): the exercise's own command,
 * run with --json, and what its result must show for the exercise's finding to be there. Each
 * check reads the numbers the lesson's answer is about, so a student sees them beside the verdict.
 * An exercise not listed here is answered in words (instructors/lesson-<n>.md), not by a run.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { LESSONS } from '../harness/lessons.ts';
import { ROOT } from '../harness/paths.ts';
import { LESSON_1 } from './exercise-checks/lesson-1.ts';
import { LESSON_2 } from './exercise-checks/lesson-2.ts';
import { LESSON_3 } from './exercise-checks/lesson-3.ts';
import { LESSON_4 } from './exercise-checks/lesson-4.ts';
import { LESSON_5 } from './exercise-checks/lesson-5.ts';
import { LESSON_6 } from './exercise-checks/lesson-6.ts';
import { LESSON_7 } from './exercise-checks/lesson-7.ts';
import { LESSON_8 } from './exercise-checks/lesson-8.ts';
import { LESSON_12 } from './exercise-checks/lesson-12.ts';
import { WRITE_THE_FIX } from './exercise-checks/write-the-fix.ts';

export interface CheckOutcome {
  /** True when the run shows what the exercise is about. */
  held: boolean;
  /** The numbers behind the verdict, one sentence each. */
  saw: string[];
  /** Set when this machine cannot show the finding (one core, say): why, in words. Not a ✗. */
  cannotShow?: string;
}

/** One command of an exercise: a kit script (`measure/<experiment>.ts` or `sim/run.ts`) and its flags. */
export interface ExerciseRun {
  script: `measure/${string}.ts` | 'sim/run.ts';
  /** The exercise's flags, as its lesson text gives them (--json is added). */
  args: string[];
}

export interface ExerciseCheck {
  lesson: number;
  n: number;
  title: string;
  /** The exercise's commands, in the order the text gives them; check() gets their results in that order. */
  runs: ExerciseRun[];
  /** Whether --quick still shows the finding (check-exercise --quick passes it on to measure scripts). */
  quickOk: boolean;
  /** What the run should show, in one sentence: printed before it starts. */
  expect: string;
  /**
   * Reads the runs' results (the `result` of --json; the whole JSON for sim/run.ts), and whether
   * each run's shape held against its expected file (a write-the-fix run: its answers, then its lines).
   */
  check(results: unknown[], held?: boolean[]): CheckOutcome;
  /**
   * An exercise about one of several things (lesson 10's fix: which incident): the flag that names
   * it (make check-exercise ... NAME=<it>), its choices, and the word in `runs`' args it replaces.
   */
  asks?: { flag: 'name'; choices: readonly string[]; placeholder: string };
}

/** Every exercise a run can check, lesson by lesson. */
export const EXERCISES: readonly ExerciseCheck[] = [
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

/** `npx tsx measure/degraded.ts --two-choices with-replacement`, as a student would type it. */
export function commandLine(run: ExerciseRun, extra: readonly string[] = []): string {
  return ['npx tsx', run.script, ...run.args, ...extra].join(' ');
}

/** The check for exercise `n` of lesson `lesson`, if a run can check it. */
export function findExercise(lesson: number, n: number): ExerciseCheck | undefined {
  return EXERCISES.find((e) => e.lesson === lesson && e.n === n);
}

/**
 * Lesson `lesson`'s exercises as written in its text: the numbered items under "## Exercises", by
 * number, each with its bold title (without the closing full stop) and its whole text.
 */
export function lessonExercises(lesson: number): Map<number, { title: string; text: string }> {
  const file = LESSONS.find((l) => l.id === lesson)?.text;
  if (!file) return new Map();
  const all = readFileSync(path.join(ROOT, file), 'utf8');
  const part = all.slice(all.indexOf('## Exercises'));
  const starts = [...part.matchAll(/^(\d+)\. \*\*(.+?)\*\*/gm)];
  return new Map(
    starts.map((m, i) => [
      Number(m[1]),
      { title: m[2]!.replace(/\.$/, ''), text: part.slice(m.index, starts[i + 1]?.index ?? part.length) },
    ]),
  );
}
