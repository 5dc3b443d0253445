/**
 * Simulated `graceful` (lesson 6): app3 of three stopped a second into a 4 s load, gracefully
 * (SIGTERM: it refuses new connections and drains) or abruptly (it exits and its requests are
 * cut), for short requests (/fast, 8 connections) and 500 ms ones (/slow-async?ms=500, 24
 * connections). /slow-async waits on a timer, not the CPU: modelled as pooled work on a pool
 * too large to queue, so each replica holds many at once, as Node does. Three runs each (seeds
 * seed, seed+1, seed+2), as the lab repeats.
 */
import { GRACEFUL_SPEC, render, type GracefulResult, type StopCase } from '../../results/graceful/report.ts';
import { fixed } from '../dist.ts';
import { simulate, type SimConfig, type SimResult } from '../engine.ts';
import { DEFAULT_LOOP, FAST, SIM_MACHINE, simCaption, totalsOf, type Scenario } from './common.ts';

/** How each of the lab's cases is modelled. */
const MODEL: Record<string, Partial<SimConfig>> = {
  fast: { service: FAST },
  'slow-500ms': { service: fixed(0.1), pool: { threads: 1000, work: fixed(500) } },
};
const CASES = GRACEFUL_SPEC.cases.map((c) => ({ ...c, config: MODEL[c.key]! }));
const RUNS = GRACEFUL_SPEC.runs.full;
const DURATION_S = GRACEFUL_SPEC.durationS.full;

export const graceful: Scenario = {
  name: 'graceful',
  mirrors: 'graceful',
  summary: 'graceful (drain) vs abrupt stop of a replica, for short and long requests',
  run(o) {
    const sims: SimResult[] = [];
    const cases: StopCase[] = [];
    for (const c of CASES) {
      for (const mode of GRACEFUL_SPEC.modes) {
        const runs = Array.from({ length: RUNS }, (_, i) => {
          const s = simulate({
            seed: o.seed + i,
            // The 500 ms wait runs on a pool, which only the first-come-first-served loop models; its loop work is 0.1 ms, so the order hardly matters.
            loop: c.config.pool ? 'fifo' : (o.loop ?? DEFAULT_LOOP),
            replicas: GRACEFUL_SPEC.replicas,
            policy: 'round-robin',
            clients: { kind: 'closed', count: c.connections },
            service: FAST,
            ...c.config,
            events: [
              {
                atMs: GRACEFUL_SPEC.stopAtS * 1000,
                action: mode === 'graceful' ? 'stop' : 'kill',
                replica: GRACEFUL_SPEC.replicas - 1,
              },
            ],
            durationMs: DURATION_S * 1000,
          });
          sims.push(s);
          const victim = s.replicas[GRACEFUL_SPEC.replicas - 1]!;
          return {
            inFlight: victim.inFlightAtFault ?? 0,
            cut: victim.cut,
            retried: s.counts.retried,
            clientErrors: s.counts.failed,
            p99: s.latency.p99,
            mean: s.latency.mean,
            max: s.latency.max,
            requests: s.counts.completed,
          };
        });
        cases.push({ key: c.key, route: c.route, connections: c.connections, mode, runs });
      }
    }
    const result: GracefulResult = {
      machine: SIM_MACHINE,
      balancer: 'the simulated balancer',
      victim: `app${GRACEFUL_SPEC.replicas}`,
      durationS: DURATION_S,
      stopAtS: GRACEFUL_SPEC.stopAtS,
      cases,
    };
    return { result, render: (color) => render(result, color, simCaption(o)), totals: totalsOf(sims) };
  },
};
