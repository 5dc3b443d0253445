/**
 * Simulated `failover` (lesson 6): one of three replicas stopped (SIGTERM), killed (SIGKILL) or
 * frozen (SIGSTOP) under a load of /fast, with the lab's own spec (FAILOVER_SPEC: the full run's
 * timing, the balancer's settings); then the kill without retries. The lab's last run, a kill
 * during POST /users, checks a database, which the model has not got, so it is left out.
 */
import { render } from '../../results/failover/report.ts';
import { FAILOVER_SPEC, type FailoverResult, type Fault, type FaultRun } from '../../results/failover/result.ts';
import { simulate, type FaultAction, type SimResult } from '../engine.ts';
import { DEFAULT_LOOP, FAST, SIM_MACHINE, simCaption, totalsOf, type Scenario } from './common.ts';

const { settings: SETTINGS, slowMs: SLOW_MS } = FAILOVER_SPEC;
const DURATION_S = FAILOVER_SPEC.durationS.full;
const FAULT_AT_S = FAILOVER_SPEC.faultAtS.full;
const ACTION: Record<Exclude<Fault, 'vanish'>, FaultAction> = { sigterm: 'stop', sigkill: 'kill', sigstop: 'freeze' };
// The lab's last run checks its database for POSTs stored twice; the model has none. Nor has it
// connections, so a vanished address (a connect that gets no answer) is the lab's alone.
const PLANS = FAILOVER_SPEC.plans.filter(
  (p): p is typeof p & { fault: Exclude<Fault, 'vanish'> } => p.name !== 'post-during-kill' && p.fault !== 'vanish',
);

export const failover: Scenario = {
  name: 'failover',
  mirrors: 'failover',
  summary: 'a replica stopped, killed or frozen under load; retries and the response timeout',
  run(o) {
    const sims: SimResult[] = [];
    const runs: FaultRun[] = PLANS.map((plan) => {
      const s = simulate({
        seed: o.seed,
        loop: o.loop ?? DEFAULT_LOOP,
        replicas: FAILOVER_SPEC.replicas,
        policy: 'round-robin',
        clients: { kind: 'closed', count: FAILOVER_SPEC.connections },
        service: FAST,
        method: plan.method,
        failover: {
          retries: plan.retries,
          maxFails: SETTINGS.maxFails,
          failTimeoutMs: SETTINGS.failTimeoutS * 1000,
          responseTimeoutMs: SETTINGS.responseTimeoutMs,
        },
        events: [{ atMs: FAULT_AT_S * 1000, action: ACTION[plan.fault], replica: 2 }],
        durationMs: DURATION_S * 1000,
        timeline: true,
        slowMs: SLOW_MS,
      });
      sims.push(s);
      return {
        name: plan.name,
        fault: plan.fault,
        method: plan.method,
        retries: plan.retries,
        faultAtS: FAULT_AT_S,
        timeline: s.timeline!,
        totals: { completed: s.counts.completed, ok2xx: s.counts.ok, non2xx: s.counts.failed, errors: 0 },
        retried: s.counts.retried,
        slow: s.slow,
        p99: s.latency.p99,
        max: s.latency.max,
      };
    });
    const result: FailoverResult = {
      machine: SIM_MACHINE,
      balancer: 'the simulated balancer',
      policy: 'round-robin',
      victim: 'app3',
      load: { connections: FAILOVER_SPEC.connections, durationS: DURATION_S, route: FAILOVER_SPEC.route },
      settings: { ...SETTINGS },
      slowThresholdMs: SLOW_MS,
      runs,
    };
    return { result, render: (color) => render(result, color, simCaption(o)), totals: totalsOf(sims) };
  },
};
