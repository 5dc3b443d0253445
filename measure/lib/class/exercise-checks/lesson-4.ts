/** Lesson 4's exercises (where requests go) that a run can check (measure/lib/class/exercises.ts). */
import {
  AWARE,
  blockedShare,
  DEGRADED_SPEC,
  P95_FACTOR,
  SMALL_SHARE,
  TAIL_FACTOR,
  type DegradedResult,
  type PolicyRun,
} from '../../../../results/degraded/report.ts';
import { fmtMs, fmtRate } from '../../../../results/report/format.ts';
import { FAST } from '../../../../sim/scenarios/common.ts';
import { meanOf } from '../../../../sim/dist.ts';
import { STALE, type StaleRow } from '../../../../sim/scenarios/stale.ts';
import type { ExerciseCheck } from '../exercises.ts';

const P95_APART = 10;

/** The hog's requests queued on the blocked replica: FIFO makes every /fast request there wait for all of them, ms. */
const HOG_QUEUE_MS = DEGRADED_SPEC.hogConnections * DEGRADED_SPEC.hogMs;
/** The latency histogram keeps 3 significant digits: a recorded value is within 0.1 % (results/report/latency.ts). */
const HISTOGRAM_PRECISION = 0.001;

/** sim/run.ts --json: the loop it ran with and the mirrored experiment's Result. */
interface SimJson<R> {
  loop: 'turns' | 'fifo';
  result: R;
}

const policyOf = (r: DegradedResult, name: string): PolicyRun | undefined => r.policies.find((p) => p.policy === name);
const blind = (r: DegradedResult) => r.policies.filter((p) => !AWARE.includes(p.policy));
const aware = (r: DegradedResult) => r.policies.filter((p) => AWARE.includes(p.policy));
const pct = (x: number) => `${(100 * x).toFixed(1)} %`;

/** One row of a degraded result: its percentiles and the blocked replica's share. */
function describePolicy(r: DegradedResult, p: PolicyRun): string {
  return `${p.policy}: p50 ${fmtMs(p.p50)}, p95 ${fmtMs(p.p95)}, p99 ${fmtMs(p.p99)}, ${fmtRate(p.throughput)}, ${r.degraded} served ${pct(blockedShare(p, r.degraded))}`;
}

/** The load-aware policies win: each blind policy's p95 at least P95_FACTOR × each aware one's, and the aware ones send the blocked replica under SMALL_SHARE. */
function awareWin(r: DegradedResult): boolean {
  const a = aware(r);
  const b = blind(r);
  if (a.length !== AWARE.length || b.length === 0) return false;
  const worstAware = Math.max(...a.map((p) => p.p95));
  return b.every((p) => p.p95 >= P95_FACTOR * worstAware) && a.every((p) => blockedShare(p, r.degraded) < SMALL_SHARE);
}

/** The stale scenario's least connections and two choices rows with old load information, by age. */
function staleRace(results: unknown[]): { ageMs: number; least: StaleRow; two: StaleRow }[] {
  return results
    .map((x) => (x as SimJson<{ staleMs: number; rows: StaleRow[] }>).result)
    .map((r) => {
      const row = (policy: string) => r.rows.find((w) => w.policy === policy && w.staleMs === r.staleMs);
      return { ageMs: r.staleMs, least: row('least-connections')!, two: row('power-of-two-choices')! };
    })
    .filter((x) => x.least && x.two)
    .sort((a, b) => a.ageMs - b.ageMs);
}

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
        held:
          r.twoChoices === 'with-replacement' && two !== undefined && least !== undefined && two >= P95_APART * least,
        saw: [
          `p95: power of two choices ${two === undefined ? '–' : fmtMs(two)}, least connections ${least === undefined ? '–' : fmtMs(least)}, round robin ${fmtMs(p95('round-robin') ?? NaN)}`,
        ],
      };
    },
  },
  {
    lesson: 4,
    n: 2,
    title: 'Medians hide',
    runs: [{ script: 'measure/degraded.ts', args: [] }],
    quickOk: true,
    expect: `round robin's p95 and p99 are waits behind the hog (over ${DEGRADED_SPEC.hogMs} ms) while its p50 stays at least ${TAIL_FACTOR}x lower, near the healthy replicas'`,
    check: ([result]) => {
      const r = result as DegradedResult;
      const rr = policyOf(r, 'round-robin');
      return {
        held: rr !== undefined && rr.p95 >= TAIL_FACTOR * rr.p50 && rr.p95 >= DEGRADED_SPEC.hogMs && rr.p99 >= rr.p95,
        saw: rr
          ? [describePolicy(r, rr), `round robin's p95 is ${(rr.p95 / rr.p50).toFixed(0)}x its p50`]
          : ['no round robin row in the result'],
      };
    },
  },
  {
    lesson: 4,
    n: 3,
    title: "nginx versus the kit's balancer",
    runs: [{ script: 'measure/degraded.ts', args: ['--lb', 'nginx'] }],
    quickOk: true,
    expect: `through nginx the same policies win: least_conn and random two least_conn send the blocked replica under ${SMALL_SHARE * 100} % and keep p95 at least ${P95_FACTOR}x below round robin's and random's`,
    check: ([result]) => {
      const r = result as DegradedResult;
      return {
        held: r.balancer === 'nginx' && awareWin(r),
        saw: [`balancer: ${r.balancer}`, ...r.policies.map((p) => describePolicy(r, p))],
      };
    },
  },
  {
    lesson: 4,
    n: 5,
    title: 'FIFO or turns?',
    runs: [
      { script: 'sim/run.ts', args: ['--scenario', 'degraded'] },
      { script: 'sim/run.ts', args: ['--scenario', 'degraded', '--loop', 'fifo'] },
    ],
    quickOk: true,
    expect: `under FIFO round robin's p95 and p99 are both the ${HOG_QUEUE_MS} ms of the hog's queued requests (plus a few /fast ones); in turns they are over a hog request longer; the load-aware policies do not change`,
    check: (results) => {
      const [turns, fifo] = results as SimJson<DegradedResult>[];
      const rr = (x: SimJson<DegradedResult> | undefined) => (x ? policyOf(x.result, 'round-robin') : undefined);
      const [t, f] = [rr(turns), rr(fifo)];
      // Under FIFO a /fast request on the blocked replica waits for the 3 hog requests and, at most, every other connection's /fast one.
      const high = (HOG_QUEUE_MS + DEGRADED_SPEC.connections * meanOf(FAST)) * (1 + HISTOGRAM_PRECISION);
      const low = HOG_QUEUE_MS * (1 - HISTOGRAM_PRECISION);
      const fifoExact = f !== undefined && f.p95 >= low && f.p99 <= high;
      const turnsLonger = t !== undefined && t.p95 >= HOG_QUEUE_MS + DEGRADED_SPEC.hogMs;
      const awareSame = [turns, fifo].every(
        (x) =>
          x !== undefined &&
          aware(x.result).every((p) => p.p95 < DEGRADED_SPEC.hogMs && blockedShare(p, x.result.degraded) < SMALL_SHARE),
      );
      return {
        held: turns?.loop === 'turns' && fifo?.loop === 'fifo' && fifoExact && turnsLonger && awareSame,
        saw: [turns, fifo].flatMap((x) =>
          x
            ? [
                `${x.loop}: ${x.result.policies.map((p) => `${p.policy} p95 ${fmtMs(p.p95)} p99 ${fmtMs(p.p99)}`).join(', ')}`,
              ]
            : [],
        ),
      };
    },
  },
  {
    lesson: 4,
    n: 6,
    title: 'How old may load information be?',
    runs: [5, 1, 2, 20, 200].map((ms) => ({
      script: 'sim/run.ts' as const,
      args: ['--scenario', 'stale', '--requests', '200000', '--stale-ms', String(ms)],
    })),
    quickOk: true,
    expect: `least connections' p99 beats power of two choices' with the freshest load information and loses to it from an age below the ${STALE.serviceMs} ms service time`,
    check: (results) => {
      const race = staleRace(results);
      const lost = race.find((x) => x.least.p99 >= x.two.p99);
      const first = race[0];
      return {
        held:
          race.length === results.length &&
          first !== undefined &&
          first.least.p99 < first.two.p99 &&
          lost !== undefined &&
          lost.ageMs < STALE.serviceMs,
        saw: [
          ...race.map(
            (x) =>
              `${x.ageMs} ms old: p99 least connections ${fmtMs(x.least.p99)}, power of two choices ${fmtMs(x.two.p99)}`,
          ),
          lost
            ? `least connections stops beating power of two choices at ${lost.ageMs} ms, against a mean service time of ${STALE.serviceMs} ms`
            : 'least connections beat power of two choices at every age',
        ],
      };
    },
  },
];
