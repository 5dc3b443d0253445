/** Lesson 6's exercises (when a replica fails) that a run can check (measure/lib/class/exercises.ts). */
import { TIMEOUT_MATCH } from '../../../../results/failover/report.ts';
import type { FailoverResult } from '../../../../results/failover/result.ts';
import { fmtMs } from '../../../../results/report/format.ts';
import type { ExerciseCheck } from '../exercises.ts';

export const LESSON_6: readonly ExerciseCheck[] = [
  {
    lesson: 6,
    n: 1,
    title: 'Longer timeouts',
    runs: [{ script: 'measure/failover.ts', args: ['--response-timeout', '5000'] }],
    quickOk: false,
    expect: "the frozen replica's requests now wait about 5 s, the response timeout you gave, before their retry",
    check: ([result]) => {
      const r = result as FailoverResult;
      const frozen = r.runs.find((x) => x.name === 'sigstop');
      const timeout = r.settings.responseTimeoutMs;
      const ratio = frozen && frozen.slow.count > 0 ? frozen.slow.medianMs / timeout : 0;
      return {
        held: timeout === 5000 && ratio >= TIMEOUT_MATCH.low && ratio <= TIMEOUT_MATCH.high,
        saw: [
          frozen
            ? `${frozen.slow.count} slow requests in the frozen run, median ${fmtMs(frozen.slow.medianMs)}, against a response timeout of ${fmtMs(timeout)}`
            : 'no frozen run in the result',
        ],
      };
    },
  },
];
