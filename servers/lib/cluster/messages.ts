/**
 * The IPC messages of the cluster servers (servers/cluster.ts, managed-cluster.ts), declared once: the commands a
 * launcher sends its primary, the events the primary sends back, and what workers tell their
 * primary. The primary sends them; the experiments, the tests and the Traffic Lab read them with
 * the `isEvent` guard instead of declaring the shapes again.
 */
import type { HpaReason } from '../../../core/hpa.ts';
import type { CpuSample, PauseRequest } from '../cpu/quota.ts';

/** Launcher → primary. */
export type LauncherCommand = { cmd: 'kill-worker'; pid?: number } | { cmd: 'rolling-restart' };

/**
 * How often a worker's CPU quota stopped it since it began listening: periods it ran in (a
 * cgroup's nr_periods; the throttle's wall-clock periods; absent for the throttle's bucket),
 * periods throttled in (the throttle: its pauses) and the time throttled, ms.
 */
export interface WorkerThrottle {
  periods?: number;
  throttled: number;
  throttledMs: number;
}

/** One sync of the autoscaler: what it saw and decided. */
export interface AutoscaleEvent {
  event: 'autoscale';
  /** When, ms since the epoch (the primary's wall clock). */
  at: number;
  current: number;
  desired: number;
  recommendation: number;
  averageUtilization?: number;
  reason: HpaReason;
  /** Per worker; `throttle`: how often its CPU quota stopped it so far (absent without a quota). */
  workers: { pid: number; ready: boolean; utilization?: number; throttle?: WorkerThrottle }[];
  retiring: number[];
}

/** Primary → launcher. */
export type PrimaryEvent =
  | { event: 'worker-replaced'; old: number; pid: number }
  | { event: 'worker-killed'; pid: number }
  | { event: 'kill-failed'; pid?: number; reason: string }
  | { event: 'rolling-restart-step'; old: number; pid: number }
  | { event: 'rolling-restart-done'; replaced: { old: number; pid: number }[] }
  | { event: 'rolling-restart-failed'; reason: string; replaced?: { old: number; pid: number }[] }
  | AutoscaleEvent;

/** Worker → primary. */
export type WorkerMessage = { type: 'port-in-use'; port: number } | CpuSample | PauseRequest;

/** A guard for one kind of primary event: `isEvent('worker-replaced')(m)`. */
export function isEvent<K extends PrimaryEvent['event']>(
  kind: K,
): (m: unknown) => m is Extract<PrimaryEvent, { event: K }> {
  return (m: unknown): m is Extract<PrimaryEvent, { event: K }> =>
    typeof m === 'object' && m !== null && (m as { event?: unknown }).event === kind;
}
