/**
 * Simulated `scale-out` (lesson 5): 8 closed-loop connections through the balancer to 1, 2, 3 and
 * 5 replicas (round robin), for the CPU-bound /work?ms=5 and for a create-then-read user scenario.
 * Each simulated replica has a core of its own, so throughput keeps growing past the lab
 * machine's core count: the model shows what more cores would give, the lab what two give.
 */
import { render, SCALE_OUT_SPEC, type ScaleOutResult, type ScaleStep } from '../../results/scale-out/report.ts';
import { exp, fixed, type Dist } from '../dist.ts';
import { simulate, type SimResult } from '../engine.ts';
import { DEFAULT_LOOP, SIM_MACHINE, simCaption, totalsOf, type Scenario } from './common.ts';

const { counts: COUNTS, connections: CONNECTIONS, workMs: WORK_MS } = SCALE_OUT_SPEC;
const WORKLOADS: { name: 'user-scenario' | 'cpu-bound'; description: string; service: Dist }[] = [
  // A create or a read through SQLite: about half a millisecond of a replica's loop (an assumption, not a measurement).
  {
    name: 'user-scenario',
    description: 'POST /users then GET /users/:id (modelled: 0.5 ms on average each)',
    service: exp(0.5),
  },
  { name: 'cpu-bound', description: `GET /work?ms=${WORK_MS} (${WORK_MS} ms of CPU each)`, service: fixed(WORK_MS) },
];

export const scaleOut: Scenario = {
  name: 'scale-out',
  mirrors: 'scale-out',
  summary: 'the same closed-loop load through the balancer to 1, 2, 3 and 5 replicas',
  run(o) {
    const sims: SimResult[] = [];
    const workloads = WORKLOADS.map((w) => ({
      name: w.name,
      description: w.description,
      steps: COUNTS.map((n): ScaleStep => {
        const s = simulate({
          seed: o.seed,
          loop: o.loop ?? DEFAULT_LOOP,
          replicas: n,
          policy: 'round-robin',
          clients: { kind: 'closed', count: CONNECTIONS },
          service: w.service,
          durationMs: 2500,
          warmupMs: 500,
        });
        sims.push(s);
        return {
          replicas: n,
          throughput: s.throughput,
          mean: s.latency.mean,
          p95: s.latency.p95,
          failedChecks: s.counts.failed,
          requests: s.counts.completed,
          generatorCpu: 0,
          ...(w.name === 'user-scenario'
            ? { perReplica: Object.fromEntries(s.replicas.map((r) => [r.name, r.served])) }
            : {}),
        };
      }),
    }));
    const result: ScaleOutResult = {
      machine: SIM_MACHINE,
      balancer: 'the simulated balancer',
      load: { connections: CONNECTIONS, durationS: 2 },
      workloads,
    };
    // The lab's closing sentence is about the machine's cores; a simulated replica has its own.
    return { result, render: (color: boolean) => render(result, color, simCaption(o)), totals: totalsOf(sims) };
  },
};
