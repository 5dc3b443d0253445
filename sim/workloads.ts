/**
 * The simulator's speed workloads (sim/bench.ts in Node, web/bench.ts in the browser): each sized
 * by `maxRequests`, with a duration long enough for all of them. Pure: no Node.js APIs.
 */
import { exp, fixed } from './dist.ts';
import type { SimConfig } from './engine.ts';

/** Workloads: each sized by maxRequests, with a duration long enough for all of them. */
export function workloads(n: number): { name: string; config: SimConfig }[] {
  return [
    {
      name: '3 replicas, 6 closed-loop clients, round robin, 0.1 ms service',
      config: {
        replicas: 3,
        policy: 'round-robin',
        clients: { kind: 'closed', count: 6 },
        service: fixed(0.1),
        maxRequests: n,
        durationMs: n,
      },
    },
    {
      name: '3 replicas, one hogged (degraded), least connections, turns',
      config: {
        replicas: 3,
        policy: 'least-connections',
        loop: 'turns',
        clients: { kind: 'closed', count: 6 },
        service: fixed(0.1),
        hogs: [{ replica: 2, ms: fixed(30), connections: 3 }],
        maxRequests: n,
        durationMs: n,
      },
    },
    {
      name: 'M/M/1 at 80 % (open loop, Poisson)',
      config: {
        replicas: 1,
        policy: 'round-robin',
        clients: { kind: 'open', ratePerS: 800 },
        service: exp(1),
        maxRequests: n,
        durationMs: Math.ceil(n / 0.8) + 1000,
      },
    },
    {
      name: '100 replicas, power of two choices, load 50 ms stale',
      config: {
        replicas: 100,
        policy: 'power-of-two-choices',
        staleMs: 50,
        clients: { kind: 'open', ratePerS: 9000 },
        service: exp(10),
        maxRequests: n,
        durationMs: Math.ceil(n / 9) + 1000,
      },
    },
  ];
}
