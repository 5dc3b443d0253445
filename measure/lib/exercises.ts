/**
 * Exercises that a run can check (`make check-exercise LESSON=4 N=1`): the exercise's own command,
 * run with --json, and what its result must show for the exercise's finding to be there. Each
 * check reads the numbers the lesson's answer is about, so a student sees them beside the verdict.
 * An exercise not listed here is answered in words (instructors/lesson-<n>.md), not by a run.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { TIMEOUT_MATCH, type FailoverResult } from '../../results/failover.ts';
import type { ClusterResult } from '../../results/cluster.ts';
import type { DegradedResult } from '../../results/degraded.ts';
import { fmtMs } from '../../results/format.ts';
import { LESSONS } from './lessons.ts';
import { ROOT } from './paths.ts';

export interface CheckOutcome {
  /** True when the run shows what the exercise is about. */
  held: boolean;
  /** The numbers behind the verdict, one sentence each. */
  saw: string[];
}

export interface ExerciseCheck {
  lesson: number;
  n: number;
  title: string;
  experiment: string;
  /** The exercise's flags (the lesson text's command). */
  args: string[];
  /** Whether --quick still shows the finding (check-exercise --quick passes it on). */
  quickOk: boolean;
  /** What the run should show, in one sentence: printed before it starts. */
  expect: string;
  check(result: unknown): CheckOutcome;
}

const P95_APART = 10;

export const EXERCISES: readonly ExerciseCheck[] = [
  {
    lesson: 3,
    n: 2,
    title: 'Workers',
    experiment: 'cluster',
    args: ['--workers', '4'],
    quickOk: true,
    expect: 'no line changes with 4 workers: 4 loans land on every worker, each counts only its own, and one kept-alive connection stays on one worker',
    check: (result) => {
      const r = result as ClusterResult;
      const fresh = Object.values(r.fresh.byPid);
      const counters = Object.values(r.counters.byPid);
      const highest = counters.length ? Math.max(...counters) : 0;
      const keptOn = Object.keys(r.keepAlive.byPid).length;
      return {
        held: r.workers === 4 && fresh.length === 4 && fresh.every((x) => x === 4) && highest < r.counters.total && keptOn === 1,
        saw: [
          `${r.workers} workers; ${r.fresh.requests} loans on fresh connections landed ${fresh.join('/')}`,
          `the highest worker counter held ${highest} of ${r.counters.total} loans`,
          `${r.keepAlive.requests} requests on one kept-alive connection reached ${keptOn} worker${keptOn === 1 ? '' : 's'}`,
        ],
      };
    },
  },
  {
    lesson: 4,
    n: 1,
    title: 'Sampling with replacement',
    experiment: 'degraded',
    args: ['--two-choices', 'with-replacement'],
    quickOk: true,
    expect: `power of two choices sampled with replacement loses its edge: its p95 at least ${P95_APART}x least connections'`,
    check: (result) => {
      const r = result as DegradedResult;
      const p95 = (policy: string) => r.policies.find((p) => p.policy === policy)?.p95;
      const two = p95('power-of-two-choices');
      const least = p95('least-connections');
      return {
        held: r.twoChoices === 'with-replacement' && two !== undefined && least !== undefined && two >= P95_APART * least,
        saw: [`p95: power of two choices ${two === undefined ? '–' : fmtMs(two)}, least connections ${least === undefined ? '–' : fmtMs(least)}, round robin ${fmtMs(p95('round-robin') ?? NaN)}`],
      };
    },
  },
  {
    lesson: 4,
    n: 6,
    title: 'Longer timeouts',
    experiment: 'failover',
    args: ['--response-timeout', '5000'],
    quickOk: false,
    expect: 'the frozen replica\'s requests now wait about 5 s, the response timeout you gave, before their retry',
    check: (result) => {
      const r = result as FailoverResult;
      const frozen = r.runs.find((x) => x.name === 'sigstop');
      const timeout = r.settings.responseTimeoutMs;
      const ratio = frozen && frozen.slow.count > 0 ? frozen.slow.medianMs / timeout : 0;
      return {
        held: timeout === 5000 && ratio >= TIMEOUT_MATCH.low && ratio <= TIMEOUT_MATCH.high,
        saw: [frozen ? `${frozen.slow.count} slow requests in the frozen run, median ${fmtMs(frozen.slow.medianMs)}, against a response timeout of ${fmtMs(timeout)}` : 'no frozen run in the result'],
      };
    },
  },
];

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
    starts.map((m, i) => [Number(m[1]), { title: m[2]!.replace(/\.$/, ''), text: part.slice(m.index, starts[i + 1]?.index ?? part.length) }]),
  );
}
