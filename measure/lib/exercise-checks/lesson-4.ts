/** Lesson 4's exercises that a run can check (measure/lib/exercises.ts). */
import { TIMEOUT_MATCH, type FailoverResult } from '../../../results/failover.ts';
import type { DegradedResult } from '../../../results/degraded.ts';
import { fmtMs } from '../../../results/format.ts';
import type { ExerciseCheck } from '../exercises.ts';

const P95_APART = 10;

export const LESSON_4: readonly ExerciseCheck[] = [
  {
    lesson: 4,
    n: 1,
    title: 'Sampling with replacement',
    runs: [{ script: 'measure/degraded.ts', args: ['--two-choices', 'with-replacement'] }],
    quickOk: true,
    expect: `power of two choices sampled with replacement loses its edge: its p95 at least ${P95_APART}x least connections'`,
    check: ([result]) => {
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
    runs: [{ script: 'measure/failover.ts', args: ['--response-timeout', '5000'] }],
    quickOk: false,
    expect: 'the frozen replica\'s requests now wait about 5 s, the response timeout you gave, before their retry',
    check: ([result]) => {
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
