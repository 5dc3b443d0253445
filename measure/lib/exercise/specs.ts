/**
 * Every write-the-fix exercise (measure/lib/exercise/spec.ts): lesson 3's password check, lesson
 * 7's limiter, lesson 9's export loop, lesson 10's six incidents and lesson 11's shedder. The starting points and the
 * reference fixes live in servers/exercises/lesson-<n>/ (fixed/ for the fixes); a student's copy
 * in exercises/, under the same name.
 */
import { exercisePath } from '../harness/exercise-copy.ts';
import type { ExerciseSpec, FixTarget } from './spec.ts';
import { verifyAnswers } from './verify-answers.ts';
import { limiterAnswers } from './limiter-answers.ts';
import { exportAnswers } from './export-answers.ts';
import { incidentAnswers } from './incident-answers.ts';
import { shedAnswers } from './shed-answers.ts';
import { INCIDENT_NAMES, type IncidentName } from '../../../results/incident/result.ts';

/** Lesson 3: the loan service's password check, off the event loop. */
export const VERIFY_EXERCISE: ExerciseSpec = {
  id: 'lesson-3',
  lesson: 3,
  experiment: 'blocking',
  command: 'blocking --mine',
  start: 'servers/exercises/lesson-3/verify.ts',
  student: 'lesson-3/verify.ts',
  export: { name: 'verifyPassword', kind: 'function' },
  reference: 'servers/exercises/lesson-3/fixed/verify.ts',
  expected: 'fixed/blocking',
  does: 'your check off the event loop',
  group: 'blocking',
  answers: verifyAnswers,
  hints: {
    blocking:
      'your verifyPassword still holds the event loop while it hashes: scryptSync, or a promise made around it, runs on the loop; crypto.scrypt with a callback (or promisified) runs on the thread pool',
  },
};

/**
 * Lesson 7: the loan limit, counted in Redis by every worker. Checked by its answers alone: the
 * lesson's own 60 loans one after another count what the battery's bursts count, without the race.
 */
export const LIMITER_EXERCISE: ExerciseSpec = {
  id: 'lesson-7',
  lesson: 7,
  experiment: 'rate-limit',
  command: 'rate-limit --mine',
  start: 'servers/exercises/lesson-7/limiter.ts',
  student: 'lesson-7/limiter.ts',
  export: { name: 'hit', kind: 'function' },
  reference: 'servers/exercises/lesson-7/fixed/limiter.ts',
  expected: 'fixed/rate-limit',
  does: 'your limiter, counting in Redis',
  group: 'rate-limit',
  answers: limiterAnswers,
  answersOnly: true,
};

/** Lesson 9: the catalogue export's loop, waiting for its reader. Its run is part 4, the slow reader. */
export const EXPORT_EXERCISE: ExerciseSpec = {
  id: 'lesson-9',
  lesson: 9,
  experiment: 'stages',
  command: 'stages --mine',
  start: 'servers/exercises/lesson-9/export.ts',
  student: 'lesson-9/export.ts',
  export: { name: 'writeExport', kind: 'function' },
  reference: 'servers/exercises/lesson-9/fixed/export.ts',
  expected: 'fixed/stages',
  does: "your export, waiting for 'drain'",
  group: 'stages',
  answers: exportAnswers,
  keeps: (line) => /^(ignoring-)?backpressure {2}/.test(line),
  hints: {
    backpressure:
      "your loop still writes while write() says the socket's buffer is full: wait for 'drain' (or 'close', if the reader leaves) before making the next chunk",
  },
};

/**
 * Lesson 10: one incident's handler, fixed. Every incident has the same battery (a handlers file
 * may replace any handler) and the same expected file, a healthy service's lines.
 */
function incidentExercise(name: IncidentName): ExerciseSpec {
  return {
    id: `lesson-10/${name}`,
    lesson: 10,
    experiment: 'incident',
    command: `incident --mine ${name}`,
    start: `servers/exercises/lesson-10/${name}.ts`,
    student: `incidents/${name}.ts`,
    export: { name: 'handlers', kind: 'object' },
    reference: `servers/exercises/lesson-10/fixed/${name}.ts`,
    expected: 'fixed/incident',
    does: 'a healthy service',
    group: 'incident',
    answers: incidentAnswers,
  };
}

/** Lesson 10's exercises, by incident. */
export const INCIDENT_EXERCISES: Readonly<Record<IncidentName, ExerciseSpec>> = Object.fromEntries(
  INCIDENT_NAMES.map((n) => [n, incidentExercise(n)]),
) as Record<IncidentName, ExerciseSpec>;

/**
 * A handlers file of any name measured with --handlers (a reference fix, a seventh incident of the
 * student's own): checked by lesson 10's battery as a fix is, with nothing to copy.
 */
export function handlersCheck(file: string): FixTarget {
  const spec = { ...incidentExercise('redos'), id: 'lesson-10/handlers', command: 'incident --handlers' };
  return { spec, file, copy: false };
}

/**
 * Lesson 11: the overload service's shedder. Its run keeps the shedding rows (and the timeout rows
 * beside them, to compare): the queue and spike parts do not use the shedder and are not run.
 */
export const SHED_EXERCISE: ExerciseSpec = {
  id: 'lesson-11',
  lesson: 11,
  experiment: 'overload',
  command: 'overload --mine',
  start: 'servers/exercises/lesson-11/shed.ts',
  student: 'lesson-11/shed.ts',
  export: { name: 'shed', kind: 'function' },
  reference: 'servers/exercises/lesson-11/fixed/shed.ts',
  expected: 'fixed/overload',
  does: 'your shedder',
  group: 'overload',
  answers: shedAnswers,
  keeps: (line) => /^overload {2}(generator|timeouts|shedding) {2}/.test(line),
  hints: {
    'overload  shedding  above-capacity':
      'your shedder lets in more than can be served in time: refuse when load.waitMs passes load.boundMs, before the request joins the line',
  },
};

/** Every exercise, in the course's order. */
export const EXERCISE_SPECS: readonly ExerciseSpec[] = [
  VERIFY_EXERCISE,
  LIMITER_EXERCISE,
  EXPORT_EXERCISE,
  ...INCIDENT_NAMES.map((n) => INCIDENT_EXERCISES[n]),
  SHED_EXERCISE,
];

/** The fix a student's --mine run measures: their copy of `spec`'s starting point, copied on first use. */
export function studentFix(spec: ExerciseSpec): FixTarget {
  return { spec, file: exercisePath(...spec.student.split('/')), copy: true };
}
