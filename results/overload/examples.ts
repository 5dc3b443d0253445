/**
 * An overload run as this machine measured it (--quick, 2 cores) and, per shape line, a change that
 * fails it: test/unit/report-examples.test.ts checks each fails its own line and no other.
 */
import type { ReportExamples } from '../report/shape.ts';
import type { OverloadPass, OverloadResult, SpikeClients, SpikeRun } from './report.ts';
import { HEALTHY } from './example-run.ts';

const pass = (r: OverloadResult, kind: OverloadPass['kind'], multiple: number): OverloadPass =>
  r.passes.find((p) => p.kind === kind && p.multiple === multiple)!;
const spike = (r: OverloadResult, clients: SpikeClients): SpikeRun => r.spikes.find((s) => s.clients === clients)!;
const model = (r: OverloadResult, clients: SpikeClients): SpikeRun => r.model!.find((s) => s.clients === clients)!;

export const examples: ReportExamples<OverloadResult> = {
  healthy: () => structuredClone(HEALTHY),
  broken: {
    // The generator's own process short of CPU: its lateness, not the service, set the latency.
    'overload  generator  sent': (r) => void (pass(r, 'timeout', 2).latenessP99Ms = 80),
    // A capacity measured too high: half of it was already past what the worker could do.
    'overload  queue  below-capacity  p99-and-queue': (r) =>
      void Object.assign(pass(r, 'queue', 0.5), { quarterP99Ms: [24, 90, 180, 260], queueLastQuarter: 19 }),
    // A bounded queue (a shedder left on): the wait stops growing once the line is full.
    'overload  queue  above-capacity  p99': (r) => void (pass(r, 'queue', 2).quarterP99Ms = [240, 280, 300, 290]),
    'overload  queue  above-capacity  queue-length': (r) =>
      void Object.assign(pass(r, 'queue', 2), { queueFirstQuarter: 20, queueLastQuarter: 22 }),
    // A service that drops a request whose user has gone: the line holds only users still waiting.
    'overload  timeouts  above-capacity  goodput': (r) => void (pass(r, 'timeout', 2).goodputLateHalf = 70),
    'overload  timeouts  above-capacity  work-for-users-gone': (r) => void (pass(r, 'timeout', 2).wasted = 0),
    // A shedder that refuses too late (after the request has waited): its users time out too.
    'overload  shedding  above-capacity  goodput': (r) => void (pass(r, 'shed', 2).goodputLateHalf = 20),
    'overload  shedding  above-capacity  accepted-p99': (r) => void (pass(r, 'shed', 2).acceptedP99Ms = null),
    // A refusal without Retry-After.
    'overload  shedding  refused': (r) => void (pass(r, 'shed', 2).shedWithRetryAfter = 0),
    // Users who do not retry after all: the service recovers, and offers what the users send.
    'overload  retries  after-spike  offered-load': (r) => void (spike(r, 'retries').attemptsPerUserAfter = 1),
    'overload  retries  after-spike': (r) => void (spike(r, 'retries').recoveredAfterMs = 750),
    // A spike long enough that the line it leaves outlasts the run, even without retries.
    'overload  no-retries  after-spike': (r) => void (spike(r, 'no-retries').recoveredAfterMs = null),
    // A breaker that never opens: it is the retries run again.
    'overload  breaker  after-spike': (r) => void (spike(r, 'breaker').recoveredAfterMs = null),
    // The model's users who do not retry after all; a model whose line outlasts the run; a breaker that never opens.
    'overload  model  retries  after-spike': (r) => void (model(r, 'retries').recoveredAfterMs = 1000),
    'overload  model  no-retries  after-spike': (r) => void (model(r, 'no-retries').recoveredAfterMs = null),
    'overload  model  breaker  after-spike': (r) => void (model(r, 'breaker').recoveredAfterMs = null),
  },
};
