/**
 * What the incident server says about itself on /__incident/stats, for the diagnosis run
 * (measure/incident.ts): its heap, the time its garbage collector took, and its event loop. The
 * handlers never see it, so a fix cannot change how it is measured.
 */
import { monitorEventLoopDelay, performance, PerformanceObserver } from 'node:perf_hooks';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';

/** The delay monitor's sampling interval, ms; taken off its figures (an idle loop reads about this). */
const SAMPLE_MS = 10;

/** One reading; the caller subtracts two to get a phase's share. */
export interface IncidentStats {
  pid: number;
  /** The heap in use, MB: after a full collection when asked (?gc), so it counts only what is kept. */
  heapUsedMb: number;
  /** Time spent in garbage collection since the start, ms (perf_hooks 'gc' entries). */
  gcMs: number;
  /** The event loop's time since the start, running callbacks and waiting for events, ms. */
  loopActiveMs: number;
  loopIdleMs: number;
  /** The longest event-loop delay since the previous reading, ms. */
  loopDelayMaxMs: number;
}

/** Starts watching (GC entries, loop delay); read() returns the figures so far. */
export function incidentStats(): { read(collect: boolean): IncidentStats } {
  v8.setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  let gcMs = 0;
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) gcMs += e.duration;
  }).observe({ entryTypes: ['gc'] });
  const delay = monitorEventLoopDelay({ resolution: SAMPLE_MS });
  delay.enable();
  return {
    read(collect) {
      if (collect) gc();
      const elu = performance.eventLoopUtilization();
      const out = {
        pid: process.pid,
        heapUsedMb: Math.round(process.memoryUsage().heapUsed / 1e4) / 100,
        gcMs: Math.round(gcMs * 10) / 10,
        loopActiveMs: Math.round(elu.active),
        loopIdleMs: Math.round(elu.idle),
        loopDelayMaxMs: Math.max(0, Math.round(delay.max / 1e4 - SAMPLE_MS * 100) / 100),
      };
      delay.reset();
      return out;
    },
  };
}
