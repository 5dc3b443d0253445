/**
 * What a live run (web/live-run.ts) reads once a second: the balancer's and the replicas' stats,
 * and each replica's row of the second sent to the page.
 */
import { performance } from 'node:perf_hooks';
import type { sustainLoad } from '../measure/lib/load/load.ts';
import { probe, type ProbeResult } from '../measure/lib/load/probe.ts';
import type { BalancerStats, UpstreamStats, ReplicaStats } from '../servers/contracts.ts';
import type { Replica } from '../measure/lib/process/topology.ts';
import type { LiveReplica } from './page/live-settings.ts';

/** A stats request to a replica gets this long: a frozen or hogged one does not answer, and the second must go out on time. */
const STATS_TIMEOUT_MS = 400;
/** A load that runs past one autocannon run's 120 s (sustainLoad). */
export type SustainedLoad = ReturnType<typeof sustainLoad>;

/** One replica of a live run: its process and address, its state as the page shows it, its hog. */
export interface LiveReplicaState {
  replica: Replica;
  state: LiveReplica['state'];
  hog?: SustainedLoad;
  /** Its CPU so far at the last stats that came in, µs, and when (performance.now(), ms). */
  cpuUs?: number;
  cpuAt?: number;
}

/**
 * What the stream reads once a second: the balancer's /__lb/stats and each listed replica's
 * /__replica/stats (undefined: not asked), all at once, each given STATS_TIMEOUT_MS; a request
 * that fails or comes late is undefined. web/bench.ts times the balancer with and without it.
 */
export async function readStats(
  lbUrl: string,
  replicaUrls: (string | undefined)[],
): Promise<{ lb?: ProbeResult<BalancerStats>; replicas: (ProbeResult<ReplicaStats> | undefined)[] }> {
  const ask = <T>(url: string) => probe<T>(url, { timeoutMs: STATS_TIMEOUT_MS }).catch(() => undefined);
  const [lb, replicas] = await Promise.all([
    ask<BalancerStats>(`${lbUrl}/__lb/stats`),
    Promise.all(replicaUrls.map((u) => (u === undefined ? undefined : ask<ReplicaStats>(`${u}/__replica/stats`)))),
  ]);
  return { lb, replicas };
}

/**
 * One replica's row of a second: its state, what the balancer says of it (`u`: down, requests, in
 * flight) and what its own stats say (`s`: CPU and event loop delay). Its utilization is its CPU
 * time over the wall time since its last stats came in (a hogged replica's may have missed a
 * second or two), as a fraction of one core, or null before two readings; `r` keeps this reading.
 */
export function replicaSecond(
  r: LiveReplicaState,
  u: UpstreamStats | undefined,
  s: ReplicaStats | undefined,
): LiveReplica {
  const cpuUs = s?.cpuUs;
  const now = performance.now();
  const utilization =
    cpuUs !== undefined && r.cpuUs !== undefined
      ? Math.round(((cpuUs - r.cpuUs) / 1e3 / (now - r.cpuAt!)) * 100) / 100
      : null;
  if (cpuUs !== undefined) [r.cpuUs, r.cpuAt] = [cpuUs, now];
  return {
    name: r.replica.name,
    state: r.state,
    down: Boolean(u?.down || u?.resting),
    requests: u?.requests ?? 0,
    inFlight: u?.inFlight ?? 0,
    utilization,
    loopDelayMs: s?.loopDelayMs ?? null,
    hogged: r.hog !== undefined,
  };
}
