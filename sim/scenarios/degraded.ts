/**
 * Simulated `degraded` (lesson 4): three replicas, the third's event loop blocked by a hog (three
 * connections of 30 ms requests straight to it); six closed-loop connections of /fast through the
 * balancer, once per policy. measure/sim-vs-lab.ts runs the same configs with measured service
 * times instead of these defaults.
 */
import { POLICIES, type Policy } from '../../servers/lib/policies.ts';
import { render, type DegradedResult } from '../../measure/report/degraded.ts';
import { fixed, type Dist } from '../dist.ts';
import { simulate, type SimConfig, type SimResult } from '../engine.ts';
import { DEFAULT_LOOP, FAST, SIM_MACHINE, simCaption, totalsOf, type Scenario, type ScenarioOptions } from './common.ts';

export interface DegradedParams {
  /** /fast on a replica's event loop (default FAST). */
  fast: Dist;
  /** The hog's requests on the blocked replica (the lab's /stall?ms=30). */
  hog: Dist;
  /** Time outside the replicas per request (balancer, kernel, load generator); none by default. */
  pathDelay?: Dist;
  connections: number;
  hogConnections: number;
  durationMs: number;
  warmupMs: number;
}

export const DEGRADED_DEFAULTS: DegradedParams = { fast: FAST, hog: fixed(30), connections: 6, hogConnections: 3, durationMs: 10_000, warmupMs: 1000 };

/** The engine config for one policy. */
export function degradedConfig(policy: Policy, p: DegradedParams, o: ScenarioOptions): SimConfig {
  return {
    seed: o.seed,
    loop: o.loop ?? DEFAULT_LOOP,
    replicas: 3,
    policy,
    clients: { kind: 'closed', count: p.connections },
    service: p.fast,
    ...(p.pathDelay ? { pathDelay: p.pathDelay } : {}),
    hogs: [{ replica: 2, ms: p.hog, connections: p.hogConnections }],
    durationMs: p.durationMs,
    warmupMs: p.warmupMs,
  };
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
    return { result, render: (color) => simCaption(render(result, color), o), totals: totalsOf(sims) };
  },
};
