/**
 * When the run's load was on: every load the kit's generators send (load.ts, users.ts) is marked
 * here as a window on the machine's monotonic clock, so that what the servers recorded meanwhile
 * (their CPU profiles under --profile, their event-loop reports) can be cut to the load and leave
 * out start-up, probes and shutdown.
 */
import type { Window } from '../../../results/report/cpuprofile.ts';

/** The machine's monotonic clock in µs: the clock CPU profiles and the servers' loop reports use. */
export function monotonicUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

/** The windows of the run under way, which the harness sets (undefined outside a run). */
let active: Window[] | undefined;

/** Makes `windows` the list loads are added to (markLoad), until it is called with undefined. */
export function collectLoadWindows(windows: Window[] | undefined): void {
  active = windows;
}

/**
 * Records one load, from now until `done` settles, as a window of the run under way, if any: a
 * generator calls it when it starts a load.
 */
export function markLoad(done: Promise<unknown>): void {
  const list = active;
  if (!list) return;
  const fromUs = monotonicUs();
  const end = () => void list.push({ fromUs, toUs: monotonicUs() });
  done.then(end, end);
}
