/**
 * Service-time distributions for the simulator, in ms:
 *   fixed        always `ms`
 *   exponential  mean `meanMs` (M/M/1 and friends)
 *   empirical    a value drawn uniformly from `valuesMs`, e.g. evenly spaced quantiles of a
 *                measured histogram (results/report/latency.ts quantilesMs), which reproduces it
 */
import type { Rng } from '../core/policies.ts';
import { exponential } from './rng.ts';

export type Dist =
  | { kind: 'fixed'; ms: number }
  | { kind: 'exponential'; meanMs: number }
  | { kind: 'empirical'; valuesMs: number[] };

export const fixed = (ms: number): Dist => ({ kind: 'fixed', ms });
export const exp = (meanMs: number): Dist => ({ kind: 'exponential', meanMs });

/** A sampler for `d`: returns ms. Throws a RangeError for a negative, empty or non-finite distribution. */
export function sampler(d: Dist, rng: Rng): () => number {
  switch (d.kind) {
    case 'fixed':
      check(d.ms, 'fixed ms');
      return () => d.ms;
    case 'exponential':
      check(d.meanMs, 'exponential mean');
      return () => exponential(rng, d.meanMs);
    case 'empirical': {
      const v = d.valuesMs;
      if (v.length === 0) throw new RangeError('an empirical distribution needs at least one value');
      v.forEach((x) => check(x, 'empirical value'));
      return () => v[Math.floor(rng() * v.length)]!;
    }
  }
}

function check(x: number, what: string): void {
  if (!Number.isFinite(x) || x < 0) throw new RangeError(`${what} must be a finite number ≥ 0 ms; got ${x}`);
}

/** Values per distribution built by `withStalls`: enough that a share of 0.2 % still holds one stall. */
const STALL_GRID = 500;

/**
 * An exponential time of mean `meanMs` with a stall of `stallMs` added to a `stallShare` of the
 * draws, as evenly spaced quantiles (an empirical distribution, so it samples like any other).
 * It models a path that now and then stops for a few ms: on two shared cores, the load generator
 * or the balancer waits while another process has the core, and every request behind it waits too.
 * RangeError for a share outside [0, 1] or a negative or non-finite time.
 */
export function withStalls(meanMs: number, stallShare: number, stallMs: number): Dist {
  check(meanMs, 'mean');
  check(stallMs, 'stall');
  if (!(stallShare >= 0 && stallShare <= 1))
    throw new RangeError(`the stall share must be within [0, 1]; got ${stallShare}`);
  const values = Array.from({ length: STALL_GRID }, (_, i) => -meanMs * Math.log(1 - (i + 0.5) / STALL_GRID));
  const stalls = Math.round(stallShare * STALL_GRID);
  for (let i = 0; i < stalls; i++) values[Math.floor(((i + 0.5) * STALL_GRID) / stalls)]! += stallMs;
  return { kind: 'empirical', valuesMs: values };
}

/** The mean of `d`, ms. */
export function meanOf(d: Dist): number {
  if (d.kind === 'fixed') return d.ms;
  if (d.kind === 'exponential') return d.meanMs;
  return d.valuesMs.reduce((a, b) => a + b, 0) / Math.max(d.valuesMs.length, 1);
}
