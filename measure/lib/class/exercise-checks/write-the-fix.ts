/**
 * The write-the-fix exercises that a run checks (measure/lib/class/exercises.ts): lesson 3's
 * password check, lesson 7's limiter, lesson 9's export loop, lesson 10's incidents and lesson
 * 11's shedder, each
 * checked by its --mine run. Right only when the run's shape held: its answers first (the same
 * as the healthy code's), then the lesson's lines that the fix changes.
 */
import type { FixAnswers } from '../../../../results/report/answers.ts';
import { answersRight, firstWrongLine } from '../../../../results/report/answers.ts';
import { INCIDENT_NAMES } from '../../../../results/incident/result.ts';
import {
  EXPORT_EXERCISE,
  INCIDENT_EXERCISES,
  LIMITER_EXERCISE,
  SHED_EXERCISE,
  VERIFY_EXERCISE,
} from '../../exercise/specs.ts';
import type { ExerciseSpec } from '../../exercise/spec.ts';
import type { CheckOutcome, ExerciseCheck } from '../exercises.ts';

/** What a fix's run showed: its answers, then whether the rest of its shape held. */
function fixOutcome(spec: ExerciseSpec, result: unknown, held: boolean): CheckOutcome {
  const answers = (result as { answers?: FixAnswers }).answers;
  const right = answers !== undefined && answersRight(answers);
  return {
    held: held && right,
    saw: [
      answers === undefined
        ? 'the run has no answers: is it a run of another version of the kit?'
        : right
          ? `answers: ${answers.checks.length} checks, each answered as ${answers.healthyIs} answers it`
          : firstWrongLine(answers)!,
      right
        ? held
          ? `every line of expected-output/${spec.expected}.txt held`
          : `some line of expected-output/${spec.expected}.txt did not hold: run ${spec.command} to see which`
        : 'nothing else was measured: a fix is timed once its answers are right',
    ],
  };
}

/** One exercise of `spec`, number `n` in its lesson, run as `script --mine [args]`. */
function fixCheck(spec: ExerciseSpec, n: number, title: string, expect: string, args: string[] = []): ExerciseCheck {
  return {
    lesson: spec.lesson,
    n,
    title,
    runs: [{ script: `measure/${spec.experiment}.ts`, args: ['--mine', ...args] }],
    quickOk: true,
    expect,
    check: ([result], held = []) => fixOutcome(spec, result, held[0] === true),
  };
}

export const WRITE_THE_FIX: readonly ExerciseCheck[] = [
  fixCheck(
    VERIFY_EXERCISE,
    5,
    'Move it off the loop yourself',
    "your verifyPassword answers every password check as the kit's does, and the blocking half then reads like the pooled one",
  ),
  fixCheck(
    LIMITER_EXERCISE,
    5,
    'One limit, written by you',
    'your limiter lets exactly the limit through per member, with loans arriving at once from every worker, and again once the window has passed',
  ),
  fixCheck(
    EXPORT_EXERCISE,
    5,
    'Honour `drain` yourself',
    "your export's reader gets the bytes meant, and the backpressure lines then read as the lesson's",
  ),
  {
    ...fixCheck(
      INCIDENT_EXERCISES.redos,
      2,
      'Fix the one you found hardest',
      "your handlers answer every request as a healthy service does, and every line then reads a healthy service's",
      ['<incident>'],
    ),
    // Each incident's fix is a run of its own: the student names it.
    asks: { flag: 'name', choices: INCIDENT_NAMES, placeholder: '<incident>' },
  },
  fixCheck(
    SHED_EXERCISE,
    3,
    'Write the shedder',
    "your shedder answers each request it lets in with its hash and refuses the rest with 503 and Retry-After, and goodput and the accepted p99 then read as the kit's shedder's",
  ),
];
