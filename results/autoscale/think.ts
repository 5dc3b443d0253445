/**
 * Lesson 8's think time, calibrated to the machine (pure): measure/autoscale.ts runs 40 users on
 * one worker first, and when that worker's throughput says the default think time would make 40
 * users ask much more or less than DEMAND_VS_CAPACITY times it, it picks the think time that does.
 */
import { fmtRate } from '../report/format.ts';
import type { AutoscaleResult } from './result.ts';

/**
 * Without --think-ms the think time is calibrated so that 40 users ask this many times what one
 * saturated worker serves (as with Node 20 on the reference machine, 10 users then about 60 % busy).
 * Node 26 spends less CPU per request: at Node 20's think time 40 users asked about 1.6 times one
 * worker, and steady-throughput-vs-1-worker ran 1.30–2.24 over 9 runs (under 1.4 in 2).
 */
export const DEMAND_VS_CAPACITY = 2.1;
const CALIBRATION_TOLERANCE = 0.1;

/**
 * The think time, ms, at which `users` closed-loop users ask DEMAND_VS_CAPACITY × `capacityRps`
 * (the steady req/s of one saturated worker): a user asks `requestsPerIteration` per think time
 * (plus its response times, a few % when served at once, left out). Undefined when `thinkMs` is
 * within CALIBRATION_TOLERANCE of it or there is no capacity; rounded to 10 ms, within [min, max].
 */
export function calibratedThinkMs(
  thinkMs: number,
  capacityRps: number,
  users: number,
  requestsPerIteration: number,
  min = 100,
  max = 10_000,
): number | undefined {
  if (!(capacityRps > 0)) return undefined;
  const target = (users * requestsPerIteration * 1000) / (DEMAND_VS_CAPACITY * capacityRps);
  if (Math.abs(target - thinkMs) <= CALIBRATION_TOLERANCE * thinkMs) return undefined;
  return Math.min(max, Math.max(min, Math.round(target / 10) * 10));
}

/** What the calibration measured: a think time, ms, and what one saturated worker served at it, req/s. */
export interface ThinkMeasurement {
  thinkMs: number;
  capacityRps: number;
}

/**
 * Calibrates the think time on the 40-user run (one saturated worker, `users` of them asking
 * `requestsPerIteration` each): `measure` runs it at a think time, `rpsOf` reads its steady req/s.
 * When the first run calls for another think time (calibratedThinkMs), the run is repeated there,
 * and that repeat is the one kept; when the repeat's own req/s calls for yet another think time,
 * the other scenarios use that one, with no third run (the 40-user worker is saturated at either).
 *
 * Why the repeat counts: a saturated worker's req/s over a --quick steady window (6 s) swings about
 * ±15 % with how many costly sign-ups fall in it, and a first window far enough off to calibrate is
 * mostly an unlucky one. In 20 --quick runs, 8 calibrated, 7 of them on a first window lower than
 * their repeat; in the worst, 232 then 283 req/s, so the think time the first window set (2800 ms)
 * had 40 users ask only 1.7 times what the worker served, and autoscaling served 1.38 times it.
 * `onCalibrated` is told each measurement that moved the think time, the new think time, and
 * whether the 40-user run is measured again at it (only after the first).
 */
export async function calibrateThink<T>(
  thinkMs: number,
  measure: (thinkMs: number) => Promise<T>,
  rpsOf: (t: T) => number,
  shape: { users: number; requestsPerIteration: number },
  onCalibrated: (measured: ThinkMeasurement, nextThinkMs: number, again: boolean) => void = () => {},
): Promise<{ kept: T; thinkMs: number; calibration?: ThinkMeasurement & { repeat?: ThinkMeasurement } }> {
  const first = await measure(thinkMs);
  const measured = { thinkMs, capacityRps: rpsOf(first) };
  const better = calibratedThinkMs(thinkMs, measured.capacityRps, shape.users, shape.requestsPerIteration);
  if (better === undefined) return { kept: first, thinkMs };
  onCalibrated(measured, better, true);
  const kept = await measure(better);
  const repeat = { thinkMs: better, capacityRps: rpsOf(kept) };
  const best = calibratedThinkMs(better, repeat.capacityRps, shape.users, shape.requestsPerIteration);
  if (best === undefined) return { kept, thinkMs: better, calibration: measured };
  onCalibrated(repeat, best, false);
  return { kept, thinkMs: best, calibration: { ...measured, repeat } };
}

/** How the think time was chosen, for the report: a sentence when it was calibrated. */
export function thinkNote(r: Pick<AutoscaleResult, 'thinkMs' | 'calibration'>): string | undefined {
  const k = r.calibration;
  if (!k) return undefined;
  const served = (m: ThinkMeasurement) => `${fmtRate(m.capacityRps)} at ${m.thinkMs} ms`;
  const ask = `they ask about ${DEMAND_VS_CAPACITY}× that`;
  if (k.repeat) {
    return (
      `think time ${r.thinkMs} ms, calibrated: one worker served 40 users ${served(k)}, then ${served(k.repeat)}, and at ${r.thinkMs} ms ` +
      `${ask}; the 40-user row is the ${k.repeat.thinkMs} ms run, and every other scenario used ${r.thinkMs} ms`
    );
  }
  return `think time ${r.thinkMs} ms, calibrated: one worker served 40 users ${served(k)}, and at ${r.thinkMs} ms ${ask}; the 40-user run was repeated, and every scenario used ${r.thinkMs} ms`;
}

/** 10 users should keep one worker this busy, a share of its quota (0.6 here): below 0.45, 40 users
 * ask too little beyond one worker to show MORE_THROUGHPUT; above 0.85, 10 users are no light load. */
export const TEN_USER_UTILIZATION = [0.45, 0.85] as const;
/** Tries of the 10-user scenario at most (see lightLoadDisturbed). */
export const LIGHT_LOAD_TRIES = 3;

/**
 * Measures the 10-user scenario, again while lightLoadDisturbed says its worker was too busy, up to
 * LIGHT_LOAD_TRIES in all, and keeps the least busy try (one without a utilization counts as the
 * busiest). `tries`: every try's utilization in the order they ran (null: none), kept one included.
 * `onRetry` is told each busy utilization and the number of the try about to run.
 */
export async function measureLightLoad<T>(
  measure: () => Promise<T>,
  utilizationOf: (t: T) => number | undefined,
  onRetry: (utilization: number, nextTry: number) => void,
): Promise<{ kept: T; tries: (number | null)[] }> {
  const runs: { t: T; u: number | null }[] = [];
  for (let i = 1; i <= LIGHT_LOAD_TRIES; i++) {
    const t = await measure();
    const u = utilizationOf(t);
    runs.push({ t, u: u ?? null });
    if (!lightLoadDisturbed(u) || i === LIGHT_LOAD_TRIES) break;
    onRetry(u!, i + 1);
  }
  const busy = (x: { u: number | null }) => x.u ?? Infinity;
  const kept = runs.reduce((a, b) => (busy(b) < busy(a) ? b : a));
  return { kept: kept.t, tries: runs.map((x) => x.u) };
}

/**
 * Whether a 10-user run at the calibrated think time should be measured again (never with
 * --think-ms, which turns the calibration off): its worker was
 * busier than TEN_USER_UTILIZATION allows, which the calibration made unlikely on a steady machine.
 * Seen in 1 of 10 runs on Node 24: 91 % busy where the other nine ran 54-67 %, with the same
 * saturated worker serving 281 req/s in the rerun against 341 req/s at calibration 14 s before.
 * The machine had slowed: the 10-user requests queued, and the 40-user steady p50 was only 3.3
 * times theirs (the shape asks 10). A machine that stays slow, or a wrong quota, is busy in every
 * try: the line fails, and the caveats say why.
 */
export function lightLoadDisturbed(utilization: number | undefined): boolean {
  return utilization !== undefined && utilization > TEN_USER_UTILIZATION[1];
}
