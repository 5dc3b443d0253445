/**
 * The `capped-scale-out` experiment's result and parameters (lesson 5): each step's throughput,
 * CPU and database numbers, for the CPU-bound workload and the create-then-read one. Pure.
 */
import type { MachineInfo } from '../report/format.ts';

export interface CappedStep {
  replicas: number;
  /** Completed requests per second after the first wave. */
  throughput: number;
  p50: number;
  p95: number;
  /** Answers whose status was not the one the check expects, plus errors. */
  failedChecks: number;
  requests: number;
  /** Cores' worth of CPU the step's replicas used together. */
  replicaCores: number;
  /**
   * Share of the step each replica spent stopped by its quota, on average (0 to 1): a cgroup's
   * throttled time (the kernel sums it over the CPUs its threads wait on, so it is capped at 1),
   * or the throttle's pauses.
   */
  throttledShare: number;
  /**
   * The shared database: writes (and per second), the share of the step its writer lock was held
   * (0 to 1), and per write the mean time waiting for that lock and holding it (ms).
   */
  db: {
    writes: number;
    writesPerS: number;
    lockBusy: number;
    lockWaitMs: number;
    lockHoldMs: number;
    writeMs: number;
    cores?: number;
  };
  generatorCpu: number;
  busyCores?: number;
}

export interface CappedWorkload {
  name: 'cpu-bound' | 'user-scenario';
  description: string;
  steps: CappedStep[];
}

export interface CappedScaleOutResult {
  machine: MachineInfo;
  balancer: string;
  /** Each replica's CPU quota: cores, the quota's period (ms), and what enforced it (cgroup, throttle). */
  cap: { cores: number; periodMs: number; mode: string };
  /**
   * The shared database: a SQLite file whose every commit waits `commitMs` for a modelled disk
   * flush, holding the writer lock; or a PostgreSQL server, uncapped. For PostgreSQL the steps'
   * `db.cores` is its CPU, and the lock figures are 0 (it has no one writer lock); `writeMs` is
   * each INSERT's round trip.
   */
  database: { kind: 'sqlite'; commitMs: number } | { kind: 'postgres' };
  load: { connections: number; durationS: number };
  workloads: CappedWorkload[];
}

/**
 * The experiment's parameters. A fifth of a core each lets 5 replicas fit in one core of a
 * 2-core laptop, leaving the other to the balancer and the load generator. The user scenario's
 * 4 ms of CPU per request keeps one replica CPU-bound (about 20 creates a second at 0.2 core);
 * 16 ms per commit is the SQLite FAQ's spinning disk (about 60 transactions a second, of which
 * 42-50 are reached: see render), so two replicas keep the writer lock about 60 % busy and three
 * reach its ceiling (70-80 % busy: the busy handler's sleeps leave the rest idle). With 3 ms (26 creates a second each) two replicas already reached the knee and
 * grew only 1.56-1.87× over 20 runs.
 */
export const CAPPED_SPEC = {
  counts: [1, 2, 3, 5],
  cores: 0.2,
  connections: 8,
  /** /work?ms= of the CPU-bound workload. */
  workMs: 5,
  /** ?work= of each user-scenario request: the app's own CPU per request, ms. */
  appWorkMs: 4,
  commitMs: 16,
  stepS: { quick: 2, full: 4 },
} as const;
