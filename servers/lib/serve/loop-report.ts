/**
 * Loaded before a lesson server (`node --import`, by the harness) when NSL_LOOP_REPORT_DIR is set:
 * every REPORT_MS it appends one line to `<dir>/<pid>.jsonl` with how busy the event loop was since
 * the line before (event-loop utilization, perf_hooks.performance.eventLoopUtilization) and its
 * longest delay (perf_hooks.monitorEventLoopDelay). A cluster's workers inherit the --import, so
 * each writes a file of its own. The harness cuts the lines to the load's windows (measure/lib/
 * profile/loops.ts); the timestamps are on the machine's monotonic clock, which every process
 * shares, in µs.
 *
 * The server itself is not changed: a timer that is unref'd, one short synchronous append per
 * REPORT_MS (measured: under 0.1 ms), and V8's own counters.
 */
import cluster from 'node:cluster';
import { appendFileSync } from 'node:fs';
import path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';

/** How often a line is written, ms: a quick run's load lasts about two seconds. */
const REPORT_MS = 250;
/** The delay monitor's sampling interval, ms; an idle loop reads about this much, so it is taken off. */
const SAMPLE_MS = 10;

/** One line of the report: what the loop did over the REPORT_MS before `atUs`. */
export interface LoopLine {
  /** The end of the interval, µs on the monotonic clock (process.hrtime). */
  atUs: number;
  /** The server (the script's name) and, for a cluster's worker, `-worker` after it. */
  name: string;
  /** Time the loop spent running JavaScript and native callbacks over the interval, ms. */
  activeMs: number;
  /** Time it spent waiting for events, ms. */
  idleMs: number;
  /** The longest any timer waited past its time over the interval, ms. */
  delayMaxMs: number;
  /**
   * True when the process runs under V8's CPU profiler (--cpu-prof), which makes the loop read
   * busy: an idle loop reads 95 % utilized under it (measured here, Node 20 on Linux).
   */
  profiled: boolean;
}

function start(dir: string): void {
  const script = path.basename(process.argv[1] ?? 'node').replace(/\.(mjs|ts)$/, '');
  const name = cluster.isWorker ? `${script}-worker` : script;
  const file = path.join(dir, `${process.pid}.jsonl`);
  const delay = monitorEventLoopDelay({ resolution: SAMPLE_MS });
  delay.enable();
  const profiled = process.execArgv.some((a) => a.startsWith('--cpu-prof'));
  let last = performance.eventLoopUtilization();
  setInterval(() => {
    const now = performance.eventLoopUtilization();
    const d = performance.eventLoopUtilization(now, last);
    last = now;
    const line: LoopLine = {
      atUs: Number(process.hrtime.bigint() / 1000n),
      name,
      activeMs: Math.round(d.active * 100) / 100,
      idleMs: Math.round(d.idle * 100) / 100,
      delayMaxMs: Math.max(0, Math.round(delay.max / 1e4 - SAMPLE_MS * 100) / 100),
      profiled,
    };
    delay.reset();
    try {
      appendFileSync(file, JSON.stringify(line) + '\n');
    } catch {
      // The harness removed the folder: the run is over, and so is the report.
    }
  }, REPORT_MS).unref();
}

const dir = process.env.NSL_LOOP_REPORT_DIR;
if (dir) start(dir);
