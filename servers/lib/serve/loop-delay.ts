/** The event loop's delay as a server reports it on its stats route (the replica's /__replica/stats). */
import { monitorEventLoopDelay } from 'node:perf_hooks';

/** How often the delay monitor samples, ms. */
const LOOP_SAMPLE_MS = 10;

/**
 * The event loop's delay over the last whole second, p99 and max in ms (perf_hooks
 * monitorEventLoopDelay, sampled every LOOP_SAMPLE_MS; Node docs). Its samples are the time
 * between two runs of its timer, so an idle loop reads about LOOP_SAMPLE_MS (measured: p50 10.2 ms
 * at a 10 ms resolution); the figures here take that interval off. Read, then reset, once a
 * second, so any number of readers see the same figures.
 */
export function lastSecondLoopDelay(): () => { p99: number; max: number } {
  const h = monitorEventLoopDelay({ resolution: LOOP_SAMPLE_MS });
  h.enable();
  let last = { p99: 0, max: 0 };
  const ms = (ns: number) => Math.max(0, Math.round(ns / 1e3 - LOOP_SAMPLE_MS * 1e3) / 1e3);
  // Read and reset in the check phase (setImmediate), after every timer due now has run, the
  // monitor's own included: a reset clears the time of its last sample, so a reset that ran just
  // before the sample that follows a block would drop the block's delay altogether.
  setInterval(() => {
    setImmediate(() => {
      last = { p99: ms(h.percentile(99)), max: ms(h.max) };
      h.reset();
    });
  }, 1000).unref();
  return () => last;
}
