/**
 * Steps measured in turns. On a shared 2-vCPU machine a slow stretch (steal from other virtual
 * machines, tens of seconds long here) that falls on one step and not the next makes two equal
 * steps look different. Measured in short slices that take turns, ascending then descending
 * (`turnOrder`), a trend over the run weighs on every step alike; each step's slices are added
 * into one `LoadTally` (counts, seconds, one latency histogram) and summarized once.
 */
import {
  createLatencyHistogram,
  summarize,
  type LatencyHistogram,
  type LatencySummary,
} from '../../../results/report/latency.ts';
import type { LoadResult } from '../load/load-types.ts';

/** What one slice (or all of a step's slices) measured. */
export interface LoadTally {
  /** Latency of the responses counted, µs (see results/report/latency.ts). */
  histogram: LatencyHistogram;
  /** Responses counted. */
  completed: number;
  /** Seconds over which they were counted. */
  seconds: number;
  /** Failed requests and non-2xx answers. */
  errors: number;
  /** The load generator's CPU, cores' worth: the highest of any slice. */
  generatorCpu: number;
}

/** A tally with nothing added yet. */
export function newLoadTally(): LoadTally {
  return { histogram: createLatencyHistogram(), completed: 0, seconds: 0, errors: 0, generatorCpu: 0 };
}

/** Adds a slice into a step's tally (in place). */
export function addSlice(into: LoadTally, slice: LoadTally): void {
  into.histogram.add(slice.histogram);
  into.completed += slice.completed;
  into.seconds += slice.seconds;
  into.errors += slice.errors;
  into.generatorCpu = Math.max(into.generatorCpu, slice.generatorCpu);
}

/**
 * A load run as a slice: its settled part when it had `settleS` (then `histogram` must be the one
 * passed as `settledInto`), otherwise all of it.
 */
export function sliceOf(r: LoadResult, histogram: LatencyHistogram): LoadTally {
  return {
    histogram,
    completed: r.settled ? r.settled.completed : r.counts.completed,
    seconds: r.settled ? r.settled.durationS : r.durationS,
    errors: r.counts.errors + r.counts.non2xx,
    generatorCpu: r.generatorCpu,
  };
}

/** A tally's throughput (req/s, to 0.1) and latency (ms). */
export function summarizeLoadTally(t: LoadTally): { throughput: number; latency: LatencySummary } {
  return {
    throughput: Math.round((t.completed / Math.max(t.seconds, 0.001)) * 10) / 10,
    latency: summarize(t.histogram),
  };
}

/** The order of round `round` (from 0): as given in even rounds, reversed in odd ones. */
export function turnOrder<T>(items: readonly T[], round: number): T[] {
  return round % 2 === 0 ? [...items] : [...items].reverse();
}
