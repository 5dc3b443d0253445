/**
 * Shape rules for "throughput by parallelism" sweeps (connections in lesson 3, replicas in
 * lesson 5): it should grow up to the core count and stay flat past it. Pure.
 */
import { CANNOT_SHOW } from './shape.ts';

export interface ScalingPoint {
  /** Connections, replicas, workers: whatever was scaled. */
  n: number;
  /** Completed requests per second. */
  throughput: number;
}

/** Throughput "grows" up to the core count when it reaches this multiple of n=1's. */
export const GROWS_FACTOR = 1.4;
/** It is "flat" past the core count when every step there stays below this multiple of the at-cores value. */
export const FLAT_FACTOR = 1.25;

function points(steps: readonly ScalingPoint[], cores: number) {
  const sorted = [...steps].sort((a, b) => a.n - b.n);
  const upTo = sorted.filter((s) => s.n <= cores);
  return { one: sorted.find((s) => s.n === 1), atCores: upTo.at(-1), past: sorted.filter((s) => s.n > cores) };
}

/** 'grows' | 'does-not-grow' | CANNOT_SHOW (one core: nothing between n=1 and the core count). */
export function growthVerdict(steps: readonly ScalingPoint[], cores: number, factor = GROWS_FACTOR): string {
  const { one, atCores } = points(steps, cores);
  if (!one || !atCores || atCores.n === 1) return CANNOT_SHOW;
  return atCores.throughput >= factor * one.throughput ? 'grows' : 'does-not-grow';
}

/** 'flat' | 'keeps-growing' | CANNOT_SHOW (no step past the core count). */
export function plateauVerdict(steps: readonly ScalingPoint[], cores: number): string {
  const { atCores, past } = points(steps, cores);
  if (!atCores || past.length === 0) return CANNOT_SHOW;
  return past.every((s) => s.throughput <= FLAT_FACTOR * atCores.throughput) ? 'flat' : 'keeps-growing';
}

/**
 * The two ratios the verdicts above compare: throughput at the core count over 1 connection, and
 * the most past the core count over the core count's (undefined where there is no such step).
 */
export function scalingRatios(steps: readonly ScalingPoint[], cores: number): { growth?: number; plateau?: number } {
  const { one, atCores, past } = points(steps, cores);
  const growth =
    one && atCores && atCores.n > 1 && one.throughput > 0 ? atCores.throughput / one.throughput : undefined;
  const plateau =
    atCores && past.length && atCores.throughput > 0
      ? Math.max(...past.map((s) => s.throughput)) / atCores.throughput
      : undefined;
  return { ...(growth !== undefined ? { growth } : {}), ...(plateau !== undefined ? { plateau } : {}) };
}
