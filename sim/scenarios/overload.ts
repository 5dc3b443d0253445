/**
 * Simulated `overload` (lesson 11), its spike: one replica that serves one request at a time in
 * arrival order, each taking the service time (lesson 11's hash costs the same every time), and
 * users from an open loop at half its capacity, a spike of 2.5× for a second, then half again
 * (SPIKE_PLANS). Each user waits the lab's 500 ms for an attempt; the three kinds of users are the
 * lab's: no retries, 2 retries at once, and 2 retries through the lab's circuit breaker. The
 * replica finishes every attempt it was sent, given up on or not, as the lab's service does.
 *
 * measure/overload.ts runs the same with the service time it measured, beside its own spike runs.
 */
import { fmtMs } from '../../results/report/format.ts';
import type { SpikeClients, SpikePlan, SpikeRun } from '../../results/overload/report.ts';
import { renderSpikes } from '../../results/overload/render.ts';
import { BREAKER, SPIKE_PLANS, spikeRunOf } from '../../results/overload/spike.ts';
import { fixed } from '../dist.ts';
import { simulate, type SimResult } from '../engine.ts';
import { SIM_MACHINE, totalsOf, type Scenario } from './common.ts';

/** The lab's users: each attempt waits this long (ms), and a retrying user tries again this many times. */
const TIMEOUT_MS = 500;
const RETRIES = 2;
/** The scenario's service time alone, ms: a hash on this machine took 8.4 to 17 ms. */
const SERVICE_MS = 10;
/** A response timeout for the balancer longer than any run, so that only the users give up. */
const NO_BALANCER_TIMEOUT_MS = 3_600_000;

interface SpikeModel {
  serviceMs: number;
  timeoutMs: number;
  retries: number;
  plan: SpikePlan;
  seed: number;
  /** The breaking users' breaker, where it differs from the lab's (BREAKER): the tests take it apart. */
  breaker?: typeof BREAKER;
}

/** One spike run of one kind of users, simulated. */
function simulateOne(m: SpikeModel, clients: SpikeClients): { run: SpikeRun; sim: SimResult } {
  const { plan } = m;
  const capacity = 1000 / m.serviceMs;
  const spikeAt = plan.beforeS * 1000;
  const afterAt = (plan.beforeS + plan.spikeS) * 1000;
  const loadMs = afterAt + plan.afterS * 1000;
  const retries = clients === 'no-retries' ? 0 : m.retries;
  const sim = simulate({
    seed: m.seed,
    replicas: 1,
    policy: 'round-robin',
    loop: 'fifo',
    service: fixed(m.serviceMs),
    clients: {
      kind: 'open',
      ratePerS: plan.baseMultiple * capacity,
      phases: [
        { atMs: spikeAt, ratePerS: plan.spikeMultiple * capacity },
        { atMs: afterAt, ratePerS: plan.baseMultiple * capacity },
      ],
    },
    users: {
      timeoutMs: m.timeoutMs,
      retries,
      bucketMs: plan.bucketMs,
      ...(clients === 'breaker' ? { breaker: m.breaker ?? BREAKER } : {}),
    },
    failover: { retries: 0, responseTimeoutMs: NO_BALANCER_TIMEOUT_MS },
    loadMs,
    // The lab's run ends within one timeout of its schedule (no attempt is sent after it).
    durationMs: loadMs + m.timeoutMs,
  });
  const u = sim.users!;
  const run = spikeRunOf({ clients, retries, capacity }, u, plan, u, 0);
  return { run, sim };
}

/** The lab's three kinds of users through the same spike, simulated. */
export function simulateSpikes(m: SpikeModel): { runs: SpikeRun[]; sims: SimResult[] } {
  const out = (['no-retries', 'retries', 'breaker'] as const).map((c) => simulateOne(m, c));
  return { runs: out.map((o) => o.run), sims: out.map((o) => o.sim) };
}

export const overload: Scenario = {
  name: 'overload',
  mirrors: 'overload',
  summary: 'a spike past capacity with users who time out: retries keep it overloaded, a breaker lets it recover',
  run(o) {
    const model: SpikeModel = {
      serviceMs: SERVICE_MS,
      timeoutMs: TIMEOUT_MS,
      retries: RETRIES,
      plan: SPIKE_PLANS.full,
      seed: o.seed,
    };
    const { runs, sims } = simulateSpikes(model);
    const caption = `simulated (seed ${o.seed}; one replica, first come, first served, ${fmtMs(SERVICE_MS)} a request; no cost for the load generator)`;
    return {
      result: {
        machine: SIM_MACHINE,
        serviceMs: SERVICE_MS,
        timeoutMs: TIMEOUT_MS,
        retries: RETRIES,
        plan: model.plan,
        spikes: runs,
      },
      render: (color) => renderSpikes(runs, model, color, caption),
      totals: totalsOf(sims),
    };
  },
};
