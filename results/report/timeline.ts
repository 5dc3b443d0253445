/** A load run's per-second timeline as a table (req/s, errors, p99, max), with labelled seconds. Pure. */
import { fmtMs, fmtRate, makeChalk, makeTable } from './format.ts';

/** One second of a load run (second 0 starts when the load starts). */
export interface TimelineSecond {
  second: number;
  completed: number;
  ok2xx: number;
  non2xx: number;
  /** Requests that got no answer (connection errors, timeouts). */
  errors: number;
  /** ms; 0 when nothing completed. */
  p99: number;
  max: number;
}

/** `marks`: second → a label for that row (e.g. "← SIGKILL app3"). Max latency ≥ 1 s shows in yellow. */
export function renderTimeline(
  timeline: readonly TimelineSecond[],
  marks: Record<number, string>,
  color: boolean,
): string {
  const c = makeChalk(color);
  const table = makeTable(
    ['second', 'req/s', 'errors', 'p99', 'max', ''],
    ['right', 'right', 'right', 'right', 'right', 'left'],
  );
  for (const s of timeline) {
    const errors = s.non2xx + s.errors;
    table.push([
      String(s.second),
      fmtRate(s.completed),
      errors ? c.red(String(errors)) : '0',
      fmtMs(s.p99),
      s.max >= 1000 ? c.yellow(fmtMs(s.max)) : fmtMs(s.max),
      marks[s.second] ? c.bold(marks[s.second]!) : '',
    ]);
  }
  return table.toString();
}
