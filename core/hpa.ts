/**
 * An HPA-style autoscaler for cluster workers (lesson 8), as a pure function: it never reads a
 * clock, a process or a socket. The cluster primary (servers/managed-cluster.ts) calls `decide()` once per
 * sync period with the time and each worker's CPU utilization; tests call it with invented ones.
 *
 * The rules are those of the Kubernetes Horizontal Pod Autoscaler
 * (kubernetes.io/docs/tasks/run-application/horizontal-pod-autoscale/, "Algorithm details" and
 * "Configurable scaling behavior"):
 *   - recommendation = ceil(current × averageUtilization / target), where the average is over
 *     ready workers only; no change while averageUtilization / target is within 1 ± tolerance (0.1);
 *   - workers still starting (not listening yet, or listening for less than `initializationMs`) are
 *     left out of the average: a new process's start-up CPU says nothing about the load. When the
 *     recommendation is to scale up and some workers are starting, they count as 0 % busy (the
 *     HPA's conservative rule), so a scale-up already on its way is not asked for twice, and for a
 *     scale-down as exactly on target;
 *   - scale-up: no stabilization, but at most max(`scaleUp.workers`, `scaleUp.percent` % of the
 *     count at the start of the period) added per `scaleUp.periodMs` (Kubernetes default: 4 pods or
 *     100 % per 15 s);
 *   - scale-down: the desired count is the highest recommendation made within the stabilization
 *     window (Kubernetes default 300 s), so a dip in load does not remove workers that the next
 *     second needs again, and the count does not flap between N and N+1;
 *   - the result is clamped to [min, max].
 * Lesson defaults are shortened so a run takes seconds: see DEFAULT_HPA.
 *
 * Utilization is CPU used / CPU quota of the worker, as a fraction (0.6 = 60 % of its quota),
 * like the HPA's CPU utilization relative to a pod's request.
 */

export interface HpaConfig {
  min: number;
  max: number;
  /** Target average utilization, a fraction of each worker's CPU quota (0 < target ≤ 1). */
  target: number;
  /** No change while |average / target − 1| ≤ tolerance. */
  tolerance: number;
  /** Scale-down stabilization window, ms. */
  windowMs: number;
  /** A worker's samples count only once it has listened for this long, ms. */
  initializationMs: number;
  /** At most max(workers, percent % of the count at the period's start) added per period. */
  scaleUp: { workers: number; percent: number; periodMs: number };
}

/** Lesson defaults (the Kubernetes defaults are in parentheses): printed by the cluster primary. */
export const DEFAULT_HPA: HpaConfig = {
  min: 1,
  max: 8,
  target: 0.6,
  tolerance: 0.1, // (0.1)
  windowMs: 10_000, // (300 s)
  initializationMs: 2000, // (cpu-initialization-period 5 min, initial-readiness-delay 30 s)
  scaleUp: { workers: 2, percent: 100, periodMs: 3000 }, // (4 pods or 100 % per 15 s)
};

/** How often the primary runs the controller, ms (Kubernetes: --horizontal-pod-autoscaler-sync-period, 15 s). */
export const DEFAULT_SYNC_MS = 1000;
/**
 * The utilization each sync reads is a worker's CPU over the last this many sync periods, not the
 * last one: Kubernetes' HPA reads metrics that are themselves averages (metrics-server reports CPU
 * usage over its scrape window, 15 s by default, as long as the HPA's sync period). Read over one
 * 1 s period, 40 users on 6 workers gave samples of 0.31-0.86 around a mean of 0.54, and one high
 * sample scaled them to the 8 that 80 users need (in 1 run of 5).
 */
export const METRIC_WINDOW_SYNCS = 3;

/** One worker as the controller sees it at a sync. */
export interface WorkerSample {
  pid: number;
  /** Time it started listening, ms on the caller's clock; undefined while it has not. */
  readyAt?: number;
  /** CPU used over the last sample period / its quota; undefined when there is no sample yet. */
  utilization?: number;
}

/** What the controller remembers between syncs. Treat as opaque; start with initialHpaState(). */
export interface HpaState {
  /** Recommendations within the stabilization window: [time ms, workers]. */
  recommendations: [number, number][];
  /** Scale-ups within the scale-up period: [time ms, workers added]. */
  scaleUps: [number, number][];
}

export function initialHpaState(): HpaState {
  return { recommendations: [], scaleUps: [] };
}

/** Why the controller chose what it chose: the cluster prints it, the lesson explains it. */
export type HpaReason =
  | 'no-metrics' // every worker is still starting
  | 'within-tolerance'
  | 'scale-up'
  | 'scale-up-limited' // the per-period limit capped it
  | 'scale-down'
  | 'stabilizing' // the recommendation is lower, but a higher one is still in the window
  | 'steady'
  | 'clamped'; // min/max moved it

interface HpaDecision {
  /** Workers wanted now (clamped to [min, max]). */
  desired: number;
  /** This sync's own recommendation, before stabilization and limits. */
  recommendation: number;
  /** Mean utilization over ready workers (fraction of quota); undefined without metrics. */
  averageUtilization?: number;
  /** Workers left out of the average because they are starting. */
  starting: number;
  reason: HpaReason;
  state: HpaState;
}

/** Throws a RangeError naming the first value that makes no sense. */
export function validateHpaConfig(c: HpaConfig): void {
  const bad = (what: string) => {
    throw new RangeError(`autoscaler: ${what}`);
  };
  if (!Number.isInteger(c.min) || c.min < 1) bad(`min must be a whole number ≥ 1, got ${c.min}`);
  if (!Number.isInteger(c.max) || c.max < c.min) bad(`max must be a whole number ≥ min (${c.min}), got ${c.max}`);
  if (!(c.target > 0 && c.target <= 1)) bad(`target must be in (0, 1], got ${c.target}`);
  if (!(c.tolerance >= 0 && c.tolerance < 1)) bad(`tolerance must be in [0, 1), got ${c.tolerance}`);
  if (!(c.windowMs >= 0)) bad(`windowMs must be ≥ 0, got ${c.windowMs}`);
  if (!(c.initializationMs >= 0)) bad(`initializationMs must be ≥ 0, got ${c.initializationMs}`);
  if (!(c.scaleUp.workers >= 1 && c.scaleUp.percent >= 0 && c.scaleUp.periodMs >= 0))
    bad('scaleUp needs workers ≥ 1, percent ≥ 0, periodMs ≥ 0');
}

const clamp = (n: number, c: HpaConfig) => Math.min(c.max, Math.max(c.min, n));
/** ceil() that ignores floating-point dust: 3 × 0.8 / 0.6 is 4.000000000000001, and must give 4. */
const ceilFraction = (x: number) => Math.ceil(x - 1e-9);

/**
 * One sync of the controller. `now` is ms on any monotonic clock (the same one as `readyAt`);
 * `workers` are all current workers, starting ones included. Pure: returns the new state.
 */
export function decide(config: HpaConfig, state: HpaState, now: number, workers: readonly WorkerSample[]): HpaDecision {
  const current = workers.length;
  const ready = workers.filter(
    (w) => w.readyAt !== undefined && now - w.readyAt >= config.initializationMs && w.utilization !== undefined,
  );
  const starting = current - ready.length;
  const keep = (s: HpaState) => ({
    recommendations: s.recommendations.filter(([t]) => now - t < config.windowMs),
    scaleUps: s.scaleUps.filter(([t]) => now - t < config.scaleUp.periodMs),
  });

  let recommendation = current;
  let reason: HpaReason = 'steady';
  let average: number | undefined;
  if (ready.length === 0) {
    reason = 'no-metrics';
  } else {
    const sum = ready.reduce((s, w) => s + w.utilization!, 0);
    average = sum / ready.length;
    const ratio = average / config.target;
    if (Math.abs(ratio - 1) <= config.tolerance) {
      reason = 'within-tolerance';
    } else {
      recommendation = ceilFraction(ready.length * ratio);
      if (starting > 0 && recommendation !== current) {
        // Starting workers: for a scale-up they count as 0 % busy, for a scale-down as exactly on
        // target (the HPA's rules for pods without metrics); then the ratio is checked again, and
        // a ratio back within tolerance, or on the other side of 1, means no change.
        const up = recommendation > current;
        const ratio2 = (sum + (up ? 0 : starting * config.target)) / current / config.target;
        const holds = up ? ratio2 > 1 + config.tolerance : ratio2 < 1 - config.tolerance;
        recommendation = holds ? ceilFraction(current * ratio2) : current;
        if (!holds) reason = 'within-tolerance';
      }
    }
  }
  recommendation = clamp(recommendation, config);

  const next = keep(state);
  next.recommendations.push([now, recommendation]);

  let desired = current;
  if (recommendation > current) {
    const added = next.scaleUps.reduce((s, [, n]) => s + n, 0);
    const base = current - added;
    const limit = Math.max(base + config.scaleUp.workers, Math.ceil(base * (1 + config.scaleUp.percent / 100)));
    // Never below the current count: a scale-up limit must not remove workers (if some were
    // removed within the period, the base computed from additions alone can be too low).
    desired = Math.max(current, Math.min(recommendation, limit));
    reason = desired < recommendation ? 'scale-up-limited' : 'scale-up';
  } else {
    const highest = Math.max(...next.recommendations.map(([, n]) => n));
    if (highest < current) {
      desired = highest;
      reason = 'scale-down';
    } else if (recommendation < current) {
      reason = 'stabilizing';
    }
  }
  const clamped = clamp(desired, config);
  if (clamped !== desired) reason = 'clamped';
  desired = clamped;
  if (desired > current) next.scaleUps.push([now, desired - current]);
  return {
    desired,
    recommendation,
    ...(average !== undefined ? { averageUtilization: average } : {}),
    starting,
    reason,
    state: next,
  };
}
