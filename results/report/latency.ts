/**
 * Latency histograms: hdr-histogram-js, values recorded in integer microseconds.
 *
 * autocannon's own histogram keeps whole milliseconds (a loopback p50 reads 0) and reports no p95,
 * so the load driver records every response time here instead (see DESIGN.md, Measurement rules).
 * 3 significant digits: any value is within 0.1 % of what was recorded (HdrHistogram docs).
 */
import * as hdr from 'hdr-histogram-js';

export type LatencyHistogram = hdr.Histogram;

/** Latency percentiles in ms (from µs, so 0.25 ms is 0.25, not 0). */
export interface LatencySummary {
  count: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  mean: number;
}

/** A histogram for 1 µs .. 1 hour, 3 significant digits, auto-resizing. */
export function createLatencyHistogram(): LatencyHistogram {
  return hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: 3_600_000_000,
    numberOfSignificantValueDigits: 3,
    autoResize: true,
  });
}

/** Records one latency given in ms (fractional) as integer µs. */
export function recordMs(h: LatencyHistogram, ms: number): void {
  h.recordValue(Math.max(1, Math.round(ms * 1000)));
}

/** p50/p95/p99/max/mean in ms, rounded to µs; all zero for an empty histogram. */
export function summarize(h: LatencyHistogram): LatencySummary {
  const ms = (us: number) => Math.round(us) / 1000;
  if (h.totalCount === 0) return { count: 0, p50: 0, p95: 0, p99: 0, max: 0, mean: 0 };
  return {
    count: h.totalCount,
    p50: ms(h.getValueAtPercentile(50)),
    p95: ms(h.getValueAtPercentile(95)),
    p99: ms(h.getValueAtPercentile(99)),
    max: ms(h.maxValue),
    mean: ms(h.mean),
  };
}

/**
 * `points` evenly spaced quantiles of `h` in ms (the midpoints of equal-probability slices: the
 * 0.05th, 0.15th, … percentiles for 1000 points), so drawing one uniformly reproduces the
 * recorded distribution (the simulator's empirical service times). Empty for an empty histogram.
 */
export function quantilesMs(h: LatencyHistogram, points = 1000): number[] {
  if (h.totalCount === 0) return [];
  return Array.from(
    { length: points },
    (_, i) => Math.round(h.getValueAtPercentile((100 * (i + 0.5)) / points)) / 1000,
  );
}

/** Median of a non-empty list (the mean of the middle two for an even count). */
export function median(values: number[]): number {
  if (values.length === 0) throw new RangeError('median of an empty list');
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}
