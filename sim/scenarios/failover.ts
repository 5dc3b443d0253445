/**
 * Simulated `failover` (lesson 4): one of three replicas stopped (SIGTERM), killed (SIGKILL) or
 * frozen (SIGSTOP) at second 5 of an 11 s load of /fast with 8 connections, with the lab's
 * balancer settings (response timeout 1.5 s, max_fails 2 within 5 s, 2 retries); then the kill
 * without retries. The lab's last run, a kill during POST /users, checks a database, which the
 * model has not got: here it is a POST kill whose counts show which tries were retried.
 */
import { render, type FailoverResult, type Fault, type FaultRun } from '../../measure/report/failover.ts';
import { simulate, type FaultAction, type SimResult } from '../engine.ts';
import { DEFAULT_LOOP, FAST, SIM_MACHINE, simCaption, totalsOf, type Scenario } from './common.ts';

const SETTINGS = { responseTimeoutMs: 1500, maxFails: 2, failTimeoutS: 5, retries: 2 };
const DURATION_S = 11;
const FAULT_AT_S = 5;
const SLOW_MS = 1000;
const ACTION: Record<Fault, FaultAction> = { sigterm: 'stop', sigkill: 'kill', sigstop: 'freeze' };

const PLANS: { name: string; fault: Fault; method: 'GET' | 'POST'; retries: number }[] = [
  { name: 'sigterm', fault: 'sigterm', method: 'GET', retries: SETTINGS.retries },
  { name: 'sigkill', fault: 'sigkill', method: 'GET', retries: SETTINGS.retries },
  { name: 'sigstop', fault: 'sigstop', method: 'GET', retries: SETTINGS.retries },
  { name: 'sigkill-without-retries', fault: 'sigkill', method: 'GET', retries: 0 },
];

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
        replicas: 3,
        policy: 'round-robin',
        clients: { kind: 'closed', count: 8 },
        service: FAST,
        method: plan.method,
        failover: { retries: plan.retries, maxFails: SETTINGS.maxFails, failTimeoutMs: SETTINGS.failTimeoutS * 1000, responseTimeoutMs: SETTINGS.responseTimeoutMs },
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
      load: { connections: 8, durationS: DURATION_S, route: '/fast' },
      settings: SETTINGS,
      slowThresholdMs: SLOW_MS,
      runs,
    };
    return { result, render: (color) => simCaption(render(result, color), o), totals: totalsOf(sims) };
  },
};
