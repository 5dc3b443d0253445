/**
 * The per-second charts of one autoscale scenario (lesson 8): req/s, p95 and workers as asciichart
 * line charts, and a strip per worker of its CPU share of the quota, one column per sync. Pure.
 */
import asciichart from 'asciichart';
import { makeChalk } from '../report/format.ts';
import type { ScenarioResult } from './result.ts';

/** Per-second series for charts: req/s, p95 (ms), workers (retiring included), from the load's start. */
function series(s: ScenarioResult): { rps: number[]; p95: number[]; workers: number[] } {
  const seconds = Math.max(s.workload.timeline.length, Math.ceil(Math.max(0, ...s.syncs.map((x) => x.t))));
  const rps: number[] = [];
  const p95: number[] = [];
  const workers: number[] = [];
  for (let i = 0; i < seconds; i++) {
    const w = s.workload.timeline[i];
    rps.push(w?.completed ?? 0);
    p95.push(w?.p95 ?? 0);
    const sync = [...s.syncs].reverse().find((x) => x.t <= i + 1);
    workers.push(sync ? sync.alive : 1);
  }
  return { rps, p95, workers };
}

const BLOCKS = ' ▁▂▃▄▅▆▇█';
/** One row per worker: its utilization per sync as a block character (full = 100 % of its quota or more). */
function utilizationStrip(s: ScenarioResult): string[] {
  const pids = [...new Set(s.syncs.flatMap((x) => x.perWorker.map((w) => w.pid)))];
  return pids.map((pid, i) => {
    const cells = s.syncs.map((x) => {
      const w = x.perWorker.find((p) => p.pid === pid);
      if (!w) return ' ';
      if (w.utilization === null) return '·';
      return BLOCKS[Math.min(8, Math.max(1, Math.round(w.utilization * 8)))]!;
    });
    return `  worker ${String(i + 1).padStart(2)} (pid ${String(pid).padStart(7)}) │${cells.join('')}│`;
  });
}

function chart(values: number[], height: number, fmt: (x: number) => string, color: boolean, c: string): string {
  if (values.length === 0) return '';
  const max = Math.max(...values, 1);
  return asciichart.plot(values, {
    height,
    min: 0,
    max,
    format: (x: number) => fmt(x).padStart(9),
    ...(color ? { colors: [c] } : {}),
  });
}

/** The chart lines printed under a scenario's heading, in order. */
export function scenarioCharts(s: ScenarioResult, color: boolean): string[] {
  const c = makeChalk(color);
  const sr = series(s);
  const out = [c.dim('  req/s'), chart(sr.rps, 6, (x) => x.toFixed(0), color, asciichart.green)];
  out.push(
    c.dim('  p95, ms'),
    chart(sr.p95, 6, (x) => x.toFixed(0), color, asciichart.yellow),
  );
  if (s.autoscale)
    out.push(
      c.dim('  workers'),
      chart(sr.workers, 4, (x) => x.toFixed(1), color, asciichart.cyan),
    );
  out.push(
    c.dim('  CPU per worker, share of its quota (█ = all of it, · = starting), one column per sync'),
    ...utilizationStrip(s),
  );
  return out;
}
