/**
 * Service-time distributions for the simulator, in ms:
 *   fixed        always `ms`
 *   exponential  mean `meanMs` (M/M/1 and friends)
 *   empirical    a value drawn uniformly from `valuesMs`, e.g. evenly spaced quantiles of a
 *                measured histogram (results/latency.ts quantilesMs), which reproduces it
 */
import type { Rng } from '../servers/lib/policies.ts';
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
