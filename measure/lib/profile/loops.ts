/**
 * The event loop of every server process while the load was on: its utilization (the share of the
 * time it was running callbacks rather than waiting for events) and its longest delay, read from
 * the lines each process wrote (servers/lib/serve/loop-report.ts) and cut to the load's windows
 * (load/windows.ts). Printed under every experiment's table: utilization says how busy a loop was,
 * the delay how long a request could wait for it; CPU % says neither, since a process waiting on
 * its thread pool uses CPU with an idle loop.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { collectLoadWindows, monotonicUs } from '../load/windows.ts';
import { makeChalk, makeTable } from '../../../results/report/format.ts';
import type { Window } from '../../../results/report/cpuprofile.ts';
import type { LoopLine } from '../../../servers/lib/serve/loop-report.ts';

/** Servers that only start and watch a program that is not Node (Redis, PostgreSQL, nginx): their loop says nothing. */
const WRAPPERS = new Set(['redis', 'postgres', 'nginx']);

/** One process's loop over the load. */
interface LoopRow {
  name: string;
  pid: number;
  /** Event-loop utilization over the load, 0 to 1; undefined under the CPU profiler, which makes it read busy. */
  utilization: number | undefined;
  /** The longest delay of its loop during the load, ms. */
  delayMaxMs: number;
  /** How long the lines cover, s. */
  coveredS: number;
}

/**
 * Reads every `<pid>.jsonl` in `dir` and sums, per process, the lines whose interval ended inside
 * one of `windows` (µs); a process with no such line, or a wrapper of a program that is not Node,
 * is left out. Sorted by name, then pid.
 */
export function readLoops(dir: string, windows: readonly Window[]): LoopRow[] {
  const rows: LoopRow[] = [];
  for (const file of existsSync(dir) ? readdirSync(dir) : []) {
    const pid = Number(/^(\d+)\.jsonl$/.exec(file)?.[1]);
    if (!pid) continue;
    const lines = readFileSync(path.join(dir, file), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as LoopLine)
      .filter((l) => windows.some((w) => l.atUs > w.fromUs && l.atUs <= w.toUs));
    const name = lines[0]?.name;
    if (!name || WRAPPERS.has(name)) continue;
    const active = lines.reduce((n, l) => n + l.activeMs, 0);
    const idle = lines.reduce((n, l) => n + l.idleMs, 0);
    rows.push({
      name,
      pid,
      utilization: lines.some((l) => l.profiled) ? undefined : active + idle > 0 ? active / (active + idle) : 0,
      delayMaxMs: Math.max(...lines.map((l) => l.delayMaxMs)),
      coveredS: (active + idle) / 1000,
    });
  }
  return rows.sort((a, b) => a.name.localeCompare(b.name) || a.pid - b.pid);
}

/** The rows as a table for people, under a heading that says what the two measures mean. */
export function renderLoops(rows: readonly LoopRow[], color: boolean): string {
  const c = makeChalk(color);
  const table = makeTable(
    ['process', 'pid', 'event loop utilization', 'event loop delay max', 'during load'],
    ['left', 'right', 'right', 'right', 'right'],
  );
  for (const r of rows) {
    table.push([
      r.name,
      String(r.pid),
      r.utilization === undefined ? '– (profiled)' : `${Math.round(r.utilization * 100)} %`,
      `${r.delayMaxMs.toFixed(1)} ms`,
      `${r.coveredS.toFixed(1)} s`,
    ]);
  }
  return [
    c.bold("Each server process's event loop while the load was on"),
    c.dim(
      '  utilization: the share of the time the loop ran code instead of waiting for events; delay: how late a timer ran',
    ),
    table.toString(),
  ].join('\n');
}

/**
 * One run's event-loop watch: a folder the servers write their reports to (Lab.loopReportDir),
 * and the load's windows. begin() before the run, end() after it, rows() once the servers have
 * stopped, dispose() at the end, whatever happened.
 */
export class LoopWatch {
  readonly dir = mkdtempSync(path.join(os.tmpdir(), 'nsl-loops-'));
  /** The loads of the run (load/windows.ts), on the monotonic clock. */
  readonly loads: Window[] = [];
  /** The whole run: the window of a run that sent no load through the kit's generators. */
  run: Window = { fromUs: monotonicUs(), toUs: Infinity };

  begin(): void {
    this.run = { fromUs: monotonicUs(), toUs: Infinity };
    collectLoadWindows(this.loads);
  }

  end(): void {
    collectLoadWindows(undefined);
    this.run = { ...this.run, toUs: monotonicUs() };
  }

  /** Each server process's loop during the load (or the run, when it sent none). */
  rows(): LoopRow[] {
    return readLoops(this.dir, this.loads.length ? this.loads : [this.run]);
  }

  dispose(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
