/**
 * The `autoscale` experiment's result (lesson 8), and the numbers its table and shape read from
 * each scenario. Pure.
 *
 * "Steady" numbers come from the end of each load, when the closed loop and the autoscaler have
 * settled: the second half of a fixed scenario's load, the last third of an autoscaled one's.
 * A steady p95 is over every request completed in those seconds, a steady req/s their mean.
 */
import type { WorkerThrottle } from '../../servers/lib/cluster/messages.ts';
import type { HpaConfig } from '../../core/hpa.ts';
import type { MachineInfo } from '../report/format.ts';
import type { ThinkMeasurement } from './think.ts';
import type { UsersResult } from '../report/users.ts';

export type Scenario = 'fixed-1w-10u' | 'fixed-1w-40u' | 'auto-40u' | 'auto-80u';

/** One sync of the cluster's controller, as the experiment saw it. */
export interface SyncSample {
  /** s since the load began. */
  t: number;
  /** Workers counted by the controller (retiring ones excluded), and what it wanted. */
  workers: number;
  desired: number;
  /** Workers draining after a scale-down. */
  retiring: number;
  /** Worker processes alive after this sync acted: desired plus retiring. */
  alive: number;
  reason: string;
  /** The controller's own recommendation this sync, before the stabilization window and the scale-up limit (absent in results from before it was reported). */
  recommendation?: number;
  /** Mean utilization of ready workers (fraction of the quota). */
  average?: number;
  /** Each worker's utilization over the last sync period (fraction of the quota); null while it has none. */
  perWorker: { pid: number; utilization: number | null; throttle?: WorkerThrottle }[];
}

export interface ScenarioResult {
  name: Scenario;
  users: number;
  autoscale: boolean;
  /** Planned load, s, and when the last user finished, s after the start. */
  loadS: number;
  loadEndS: number;
  /** The cluster's "cpu quota: ..." line (how the quota was enforced). */
  quotaLine: string;
  workload: UsersResult;
  syncs: SyncSample[];
  /** Autoscaled: s after the load until the workers were back to min (absent: not within the wait). */
  backToMinS?: number;
}

export interface AutoscaleResult {
  machine: MachineInfo;
  /** CPU quota per worker, cores. */
  quota: number;
  quotaLine: string;
  thinkMs: number;
  /**
   * When calibrated: the first 40-user run's think time, ms, and its steady req/s (one saturated
   * worker); `repeat`, when the repeated 40-user run (the one shown) moved the think time again.
   */
  calibration?: ThinkMeasurement & { repeat?: ThinkMeasurement };
  /** When the 10-user scenario was measured again (measureLightLoad): every try's mean utilization, fraction of the quota, in order (null: none); the least busy was kept. */
  lightLoadTries?: (number | null)[];
  /** The sign-up's scrypt cost. */
  signupCost: string;
  /** --keep-alive: each user kept one connection for the run (absent: one per iteration). */
  keepAlive?: boolean;
  hpa: HpaConfig & { syncMs: number };
  scenarios: ScenarioResult[];
}

/** The numbers the table and the shape use, for one scenario. */
interface ScenarioStats {
  total: number;
  errors: number;
  peakRps: number;
  steadyRps: number;
  /** p50 and p95 of the requests completed in the steady window, ms. */
  steadyP50: number;
  steadyP95: number;
  p95: number;
  maxWorkers: number;
  /** Integral of live worker processes (retiring included) over the load, worker·s. */
  workerSeconds: number;
  /** The same after the load, until the end of the run: what the stabilization window costs, worker·s. */
  workerSecondsAfter: number;
  /** The first sync that asked for more workers: s from the load's start, and its number since (1 = the first). */
  firstScaleUpS?: number;
  firstScaleUpSync?: number;
  /** Mean workers over the steady window (what the window still holds of a start-up peak included). */
  steadyWorkers: number;
  /**
   * Mean of the controller's recommendations over the steady window: the count the steady load
   * asks for. Unlike steadyWorkers it is not held up by the scale-down window, which in a --quick
   * run keeps a start-up peak through the whole steady window (40 users on Node 24: 6–7 workers at
   * 30 % while recommending 4). Falls back to the worker count for results without it.
   */
  steadyRecommendation: number;
  /** Mean utilization of the ready workers during the load, fraction of the quota. */
  meanUtilization?: number;
  /** Syncs during the load that added workers after an earlier sync had removed some: flapping. */
  upAfterDown: number;
}

/** Seconds of the load counted as steady: [from, to). */
export function steadyWindow(s: Pick<ScenarioResult, 'loadS' | 'autoscale'>): [number, number] {
  const from = s.autoscale ? Math.ceil((s.loadS * 2) / 3) : Math.ceil(s.loadS / 2);
  return [from, s.loadS];
}

export function stats(s: ScenarioResult, syncMs: number): ScenarioStats {
  const [from, to] = steadyWindow(s);
  const inLoad = s.workload.timeline.filter((x) => x.second < s.loadS);
  const steady = inLoad.filter((x) => x.second >= from && x.second < to);
  const during = s.syncs.filter((x) => x.t <= s.loadEndS);
  const afterStart = s.syncs.filter((x) => x.t >= 0);
  const firstUpIndex = afterStart.findIndex((x) => x.desired > x.workers);
  const firstUp = afterStart[firstUpIndex];
  const steadySyncs = s.syncs.filter((x) => x.t >= from && x.t < to);
  const averages = during.map((x) => x.average).filter((a): a is number => a !== undefined);
  return {
    total: s.workload.completed,
    errors: s.workload.errors,
    peakRps: Math.max(0, ...inLoad.map((x) => x.completed)),
    steadyRps: steady.length ? steady.reduce((n, x) => n + x.completed, 0) / steady.length : 0,
    steadyP50: s.workload.steadyLatency.p50,
    steadyP95: s.workload.steadyLatency.p95,
    p95: s.workload.latency.p95,
    maxWorkers: Math.max(1, ...s.syncs.map((x) => x.workers)),
    workerSeconds: Math.round(during.reduce((n, x) => n + x.alive, 0) * (syncMs / 1000)),
    workerSecondsAfter: Math.round(
      s.syncs.filter((x) => x.t > s.loadEndS).reduce((n, x) => n + x.alive, 0) * (syncMs / 1000),
    ),
    ...(firstUp ? { firstScaleUpS: firstUp.t, firstScaleUpSync: firstUpIndex + 1 } : {}),
    steadyWorkers: steadySyncs.length ? steadySyncs.reduce((n, x) => n + x.workers, 0) / steadySyncs.length : 1,
    steadyRecommendation: steadySyncs.length
      ? steadySyncs.reduce((n, x) => n + (x.recommendation ?? x.workers), 0) / steadySyncs.length
      : 1,
    ...(averages.length ? { meanUtilization: averages.reduce((a, b) => a + b, 0) / averages.length } : {}),
    upAfterDown: during.filter((x, i) => x.desired > x.workers && during.slice(0, i).some((y) => y.desired < y.workers))
      .length,
  };
}
