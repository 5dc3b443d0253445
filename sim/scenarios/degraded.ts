/**
 * Simulated `degraded` (lesson 4): three replicas, the third's event loop blocked by a hog (three
 * connections of 30 ms requests straight to it); six closed-loop connections of /fast through the
 * balancer, once per policy. measure/sim-vs-lab.ts runs the same configs with measured service
 * times instead of these defaults.
 */
import { POLICIES, type Policy } from '../../servers/lib/policies.ts';
import { DEGRADED_SPEC, render, type DegradedResult } from '../../results/degraded.ts';
import { exp, fixed, type Dist } from '../dist.ts';
import { simulate, type SimConfig, type SimResult } from '../engine.ts';
import { DEFAULT_LOOP, FAST, SIM_MACHINE, simCaption, totalsOf, type Scenario, type ScenarioOptions } from './common.ts';

export interface DegradedParams {
  /** /fast on a replica's event loop (default FAST). */
  fast: Dist;
  /** The hog's requests on the blocked replica (the lab's /stall?ms=30). */
  hog: Dist;
  /** Time outside the replicas per request (balancer, kernel, load generator); none by default. */
  pathDelay?: Dist;
  /** The same as a first-come-first-served server every request passes (engine `pathQueue`); none by default. */
  pathQueue?: Dist;
  connections: number;
  hogConnections: number;
  durationMs: number;
  warmupMs: number;
}

export const DEGRADED_DEFAULTS: DegradedParams = {
  fast: FAST,
  hog: fixed(DEGRADED_SPEC.hogMs),
  connections: DEGRADED_SPEC.connections,
  hogConnections: DEGRADED_SPEC.hogConnections,
  durationMs: 10_000,
  warmupMs: 1000,
};

/** The engine config for one policy. */
export function degradedConfig(policy: Policy, p: DegradedParams, o: ScenarioOptions): SimConfig {
  return {
    seed: o.seed,
    loop: o.loop ?? DEFAULT_LOOP,
    replicas: DEGRADED_SPEC.replicas,
    policy,
    clients: { kind: 'closed', count: p.connections },
    service: p.fast,
    ...(p.pathDelay ? { pathDelay: p.pathDelay } : {}),
    ...(p.pathQueue ? { pathQueue: p.pathQueue } : {}),
    hogs: [{ replica: DEGRADED_SPEC.replicas - 1, ms: p.hog, connections: p.hogConnections }],
    durationMs: p.durationMs,
    warmupMs: p.warmupMs,
  };
}

/**
 * The mean service time (ms) of the path queue (engine `pathQueue`, exponential) at which the
 * model's healthy path carries `throughput` req/s: the degraded topology with the blocked replica
 * taken out (two replicas, least connections, the same closed-loop connections, no hog), as the lab
 * measures its path. Found by bisection; the model's throughput falls as the queue's time grows.
 * 0 when even a path with no queue cannot carry that much (the replicas are then the bottleneck).
 */
export function fitPathQueue(fast: Dist, throughput: number, connections: number, o: ScenarioOptions): number {
  const carried = (meanMs: number) =>
    simulate({
      seed: o.seed,
      loop: o.loop ?? DEFAULT_LOOP,
      replicas: 2,
      policy: 'least-connections',
      clients: { kind: 'closed', count: connections },
      service: fast,
      ...(meanMs > 0 ? { pathQueue: exp(meanMs) } : {}),
      durationMs: 3000,
      warmupMs: 500,
    }).throughput;
  if (carried(0) <= throughput) return 0;
  let lo = 0;
  let hi = (2 * connections * 1000) / throughput; // more than enough: the queue alone would then carry half the rate
  for (let i = 0; i < 30; i++) {
    const mid = (lo + hi) / 2;
    if (carried(mid) > throughput) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

/** Every policy simulated, as the lab experiment's Result. */
export function simulateDegraded(p: DegradedParams, o: ScenarioOptions): { result: DegradedResult; sims: SimResult[] } {
  const sims = POLICIES.map((policy) => simulate(degradedConfig(policy, p, o)));
  const result: DegradedResult = {
    machine: SIM_MACHINE,
    balancer: 'the simulated balancer',
    degraded: 'app3',
    hog: { route: describe(p.hog), connections: p.hogConnections },
    load: { connections: p.connections, durationS: (p.durationMs - p.warmupMs) / 1000, repetitions: 1 },
    policies: sims.map((s) => ({
      policy: s.policy,
      throughput: s.throughput,
      p50: s.latency.p50,
      p95: s.latency.p95,
      p99: s.latency.p99,
      errors: s.counts.failed,
      perReplica: Object.fromEntries(s.replicas.map((r) => [r.name, r.served])),
      generatorCpu: 0,
    })),
  };
  return { result, sims };
}

function describe(d: Dist): string {
  if (d.kind === 'fixed') return `${d.ms} ms requests`;
  if (d.kind === 'exponential') return `requests of ${d.meanMs} ms on average`;
  return 'requests of measured length';
}

export const degraded: Scenario = {
  name: 'degraded',
  mirrors: 'degraded',
  summary: 'one of three replicas blocked by a hog; /fast through the balancer under each policy',
  run(o) {
    const { result, sims } = simulateDegraded(DEGRADED_DEFAULTS, o);
    return { result, render: (color) => render(result, color, simCaption(o)), totals: totalsOf(sims) };
  },
};
