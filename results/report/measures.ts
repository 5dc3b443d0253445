/**
 * The numbers behind an experiment's shape lines, named: what a class roll-up plots (every student
 * a point) and what a prediction is checked against. Each experiment's report may list them
 * (Report.measures); a verdict in the shape is a comparison of one of them with a threshold.
 */
import { fmtMs, fmtRate } from './format.ts';

/** Units the kit measures in. `×` is a ratio of two measurements of the same kind. */
type MeasureUnit = 'ms' | 'µs' | 'req/s' | '×' | '%' | 'workers' | 's' | 'loans' | 'requests' | 'MB';

export interface Measure {
  /** Kebab-case, unique within its experiment, stable across versions: what JSON and answers files use. */
  id: string;
  /** For people: what was measured, in the lesson's words. */
  label: string;
  unit: MeasureUnit;
  value: number;
  /** The shape line's key (its tokens without the verdict) this number decides. */
  line?: string;
  /** The threshold the shape compares it with, in the same unit, when there is one. */
  threshold?: number;
}

/** A measure, dropped when its value is not a finite number (a run that could not measure it). */
export function measure(
  id: string,
  label: string,
  unit: MeasureUnit,
  value: number | undefined,
  extra: Pick<Measure, 'line' | 'threshold'> = {},
): Measure[] {
  return value !== undefined && Number.isFinite(value) ? [{ id, label, unit, value, ...extra }] : [];
}

/** `a / b`, or undefined when b is not positive. */
export function ratio(a: number | undefined, b: number | undefined): number | undefined {
  return a !== undefined && b !== undefined && b > 0 ? a / b : undefined;
}

/** The value with its unit, for tables and pages: `3.2×`, `118 ms`, `1,240 req/s`. */
export function formatMeasure(m: Pick<Measure, 'unit' | 'value'>): string {
  const v = m.value;
  const digits = Math.abs(v) >= 100 ? 0 : Math.abs(v) >= 10 ? 1 : 2;
  const n = v.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: 0 });
  if (m.unit === 'ms') return fmtMs(v);
  if (m.unit === 'req/s') return fmtRate(v);
  if (m.unit === '×') return `${n}×`;
  // "1 worker", "1 loan": the units that count things are plural names.
  const unit =
    v === 1 && (m.unit === 'workers' || m.unit === 'loans' || m.unit === 'requests') ? m.unit.slice(0, -1) : m.unit;
  return `${n} ${unit}`;
}
