/** Lesson 8's exercises that a run can check (measure/lib/class/exercises.ts). */
import { MORE_THROUGHPUT } from '../../../../results/autoscale/report.ts';
import { stats, type AutoscaleResult } from '../../../../results/autoscale/result.ts';
import { computeStats, type SharedComputeResult } from '../../../../results/shared-compute/report.ts';
import { fmtMs, fmtRate } from '../../../../results/report/format.ts';
import { upAfterDown, type SimAutoscaleRow } from '../../../../sim/scenarios/autoscale.ts';
import type { ExerciseCheck } from '../exercises.ts';

/** Exercise 1's window, s. */
const LONG_WINDOW_S = 30;

/** sim/run.ts --json for the autoscale scenario: its rows and the load's length. */
interface SimAutoscaleJson {
  result: { loadS: number; hpa: { windowMs: number; tolerance: number }; rows: SimAutoscaleRow[] };
}

/** The shared row with the 100 ms period: its share of throttled periods (undefined when not counted). */
function throttledShare(r: SharedComputeResult): { share?: number; p99: number; text: string } {
  const row = r.scenarios.find((s) => s.name === 'shared-100ms');
  if (!row) return { p99: NaN, text: 'no 100 ms row in the result' };
  const st = computeStats(row, r.quota);
  const share = st.periods ? st.throttled! / st.periods : undefined;
  const periods =
    share === undefined
      ? 'throttled periods not counted'
      : `throttled in ${st.throttled} of ${st.periods} periods (${Math.round(share * 100)} %)`;
  return {
    ...(share !== undefined ? { share } : {}),
    p99: st.queryP99,
    text: `${r.quota} core, 100 ms period: ${periods}, search p99 ${fmtMs(st.queryP99)}`,
  };
}

export const LESSON_8: readonly ExerciseCheck[] = [
  {
    lesson: 8,
    n: 1,
    title: 'A longer window',
    runs: [{ script: 'measure/autoscale.ts', args: ['--window-s', String(LONG_WINDOW_S)] }],
    quickOk: true,
    expect: `after the load the extra workers stay the whole ${LONG_WINDOW_S} s window (less one sync) before the count goes back to one, and cost worker·s all that time`,
    check: ([result]) => {
      const r = result as AutoscaleResult;
      const windowS = r.hpa.windowMs / 1000;
      const auto = r.scenarios.filter((s) => s.autoscale);
      const stayed = (back: number | undefined) => back !== undefined && back >= windowS - r.hpa.syncMs / 1000;
      return {
        held: windowS === LONG_WINDOW_S && auto.length > 0 && auto.every((s) => stayed(s.backToMinS)),
        saw: auto.length
          ? auto.map((s) => {
              const st = stats(s, r.hpa.syncMs);
              const back =
                s.backToMinS === undefined
                  ? 'not back to 1 worker within the wait'
                  : `back to 1 worker ${s.backToMinS.toFixed(1)} s after the load`;
              return `${s.name}: ${back} (window ${windowS} s), ${st.workerSecondsAfter} worker·s after the load against ${st.workerSeconds} during it`;
            })
          : ['no autoscaled scenario in the result'],
      };
    },
  },
  {
    lesson: 8,
    n: 3,
    title: 'Keep-alive',
    runs: [{ script: 'measure/autoscale.ts', args: ['--quick', '--keep-alive'] }],
    quickOk: true,
    expect: `kept-alive users still reach the new workers (a connection idle for about 3 s is closed, undici's 2 s margin under Node's 5 s keepAliveTimeout, and the user's next request opens a new one): autoscaled steady throughput at least ${MORE_THROUGHPUT}× one worker's`,
    check: ([result]) => {
      const r = result as AutoscaleResult;
      const get = (name: string) => {
        const s = r.scenarios.find((x) => x.name === name);
        return s && stats(s, r.hpa.syncMs);
      };
      const one = get('fixed-1w-40u');
      const auto = get('auto-40u');
      const ratio = one && auto && one.steadyRps > 0 ? auto.steadyRps / one.steadyRps : 0;
      return {
        held: r.keepAlive === true && ratio >= MORE_THROUGHPUT,
        saw: [
          r.keepAlive
            ? 'each user kept one connection (--keep-alive)'
            : 'the users opened a connection per iteration: not the exercise',
          one && auto
            ? `40 users, steady: ${fmtRate(auto.steadyRps)} autoscaled (up to ${auto.maxWorkers} workers) against ${fmtRate(one.steadyRps)} on one worker (${ratio.toFixed(2)}×)`
            : 'a 40-user scenario is missing',
        ],
      };
    },
  },
  {
    lesson: 8,
    n: 4,
    title: 'Flapping',
    runs: [
      { script: 'sim/run.ts', args: ['--scenario', 'autoscale'] },
      { script: 'sim/run.ts', args: ['--scenario', 'autoscale', '--window-s', '0'] },
      { script: 'sim/run.ts', args: ['--scenario', 'autoscale', '--tolerance', '0'] },
      { script: 'sim/run.ts', args: ['--scenario', 'autoscale', '--window-s', '0', '--tolerance', '0'] },
    ],
    quickOk: true,
    expect:
      'the autoscaled count flaps (a scale-up after a scale-down during the load) only with neither the window nor the tolerance; with either guard alone it does not',
    check: (results) => {
      const runs = (results as SimAutoscaleJson[]).map((j) => {
        const { rows, loadS, hpa } = j.result;
        const flaps = rows.filter((x) => x.maxWorkers > 1).reduce((n, x) => n + upAfterDown(x.workers, loadS), 0);
        return { flaps, label: `window ${hpa.windowMs / 1000} s, tolerance ${hpa.tolerance}` };
      });
      const [defaults, noWindow, noTolerance, neither] = runs;
      return {
        held:
          runs.length === 4 &&
          neither!.flaps > 0 &&
          defaults!.flaps === 0 &&
          noWindow!.flaps === 0 &&
          noTolerance!.flaps === 0,
        saw: runs.map((x) => `${x.label}: ${x.flaps} scale-up(s) after a scale-down during the load`),
      };
    },
  },
  {
    lesson: 8,
    n: 5,
    title: 'Half a core, same period',
    runs: [
      { script: 'measure/shared-compute.ts', args: ['--cpu-quota', '0.5'] },
      { script: 'measure/shared-compute.ts', args: [] },
    ],
    quickOk: true,
    expect: 'with 0.5 core the 100 ms row is throttled in a smaller share of its periods than with the default 0.25',
    check: ([half, quarter]) => {
      const h = half as SharedComputeResult;
      const q = quarter as SharedComputeResult;
      const a = throttledShare(h);
      const b = throttledShare(q);
      return {
        held:
          h.quota === 0.5 && q.quota === 0.25 && a.share !== undefined && b.share !== undefined && a.share < b.share,
        saw: [a.text, b.text],
      };
    },
  },
];
