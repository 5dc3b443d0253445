/** Lesson 12's exercises that a run can check (measure/lib/class/exercises.ts). */
import type { NetworkResult } from '../../../../results/network/report.ts';
import { fmtMs } from '../../../../results/report/format.ts';
import type { ExerciseCheck } from '../exercises.ts';

/** Exercise 3's loss, %. */
const LOSS = 2;

export const LESSON_12: readonly ExerciseCheck[] = [
  {
    lesson: 12,
    n: 3,
    title: 'Where is the timeout?',
    runs: [{ script: 'measure/network.ts', args: ['--loss', String(LOSS)] }],
    quickOk: true,
    expect: `at ${LOSS} % loss p50 stays where it was, a connection per request still has a p99 past 200 ms, and a 100 ms timeout without a retry leaves 0.5 to 5 % of requests unanswered, which one retry recovers`,
    check: ([result]) => {
      const r = result as NetworkResult;
      if (r.kernelMissing) return { held: false, saw: [], cannotShow: `the loss rows: ${r.kernelMissing}` };
      const lossy = r.loss.find((x) => x.lossPercent === LOSS && x.connections === 'per-request');
      const base = r.loss.find((x) => x.lossPercent === 0 && x.connections === 'per-request');
      const noRetry = r.timeouts.find((t) => t.retries === 0);
      const retry = r.timeouts.find((t) => t.retries === 1);
      if (!lossy || !base || !noRetry || !retry) return { held: false, saw: [`no ${LOSS} % rows in the result`] };
      const share = noRetry.errors / noRetry.requests;
      return {
        held:
          lossy.p50Ms <= 1.5 * base.p50Ms + 0.5 &&
          lossy.p99Ms >= 200 &&
          share >= 0.005 &&
          share <= 0.05 &&
          retry.errors < noRetry.errors,
        saw: [
          `a connection per request at ${LOSS} %: p50 ${fmtMs(lossy.p50Ms)} (${fmtMs(base.p50Ms)} with none), p99 ${fmtMs(lossy.p99Ms)}`,
          `giving up after 100 ms: ${noRetry.errors} of ${noRetry.requests} unanswered (${(share * 100).toFixed(1)} %) without a retry, ${retry.errors} with one`,
        ],
      };
    },
  },
];
