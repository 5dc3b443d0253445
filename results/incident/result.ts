import type { MachineInfo } from '../report/format.ts';

/**
 * What one diagnosis run of the incident server measured (measure/incident.ts), phase by phase,
 * and the names of the incidents a student chooses from.
 */

/** The incidents, in the order the kit lists them (servers/incidents/index.ts plants them). */
export const INCIDENT_NAMES = ['redos', 'pool', 'keepalive', 'shutdown', 'cache', 'sync-read'] as const;
export type IncidentName = (typeof INCIDENT_NAMES)[number];

/** One paced load on one route, and what the server's event loop did meanwhile. */
export interface PacedPhase {
  route: string;
  /** The rate asked for, req/s. */
  rate: number;
  completed: number;
  errors: number;
  p50Ms: number;
  p99Ms: number;
  /** Event-loop utilization over the phase, 0 to 1 (the server's own reading). */
  utilization: number;
  /** The longest event-loop delay over the phase, ms. */
  delayMaxMs: number;
}

/** The server's heaviest functions by self time in one phase (V8's CPU profiler). */
export interface PhaseProfile {
  phase: string;
  top: { functionName: string; where: string; share: number }[];
}

export interface IncidentResult {
  /** The machine the run was on (the class roll-up reads it). */
  machine: MachineInfo;
  /** What ran: a planted incident named on the command line, one a seed chose, or a file's handlers. */
  subject: { planted: IncidentName; seed?: number } | { handlers: string };
  books: PacedPhase;
  search: PacedPhase;
  /** Cover reads (fs, on the thread pool) with nothing else running, then while /export ran. */
  covers: { idleP50Ms: number; duringExportP50Ms: number; exports: number; exportUtilization: number };
  /** When the server closed a kept-alive connection left idle, against the balancer's idle timeout. */
  idleClose: { closedAfterMs: number | undefined; waitedMs: number; balancerIdleMs: number };
  /** Pages of /books with a new session id each: the heap after a full collection, before and after. */
  pages: { completed: number; heapBeforeMb: number; heapAfterMb: number; gcMs: number };
  /** SIGTERM while 16 kept-alive clients send loans back to back. */
  shutdown: { exitedAfterMs: number | undefined; graceMs: number; answeredAfterSignal: number };
  /**
   * The event-loop utilization of the same paced phases on the server under the CPU profiler,
   * 0 to 1: what the profiler does to the reading.
   */
  underProfiler: { books: number; search: number };
  /** Per phase, when the profile could be read (the server exited on its own). */
  profiles: PhaseProfile[];
  /** Where the profiles and their flame graph pages were written. */
  profileDir: string;
}
