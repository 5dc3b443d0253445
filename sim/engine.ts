/**
 * A discrete-event simulation of the lab: clients → balancer → N replicas.
 *
 * The model, in the lab's terms:
 *   - clients: open loop (Poisson arrivals at `ratePerS`: a new request whatever happened to the
 *     last) or closed loop (`count` clients, each sending its next request a think time after its
 *     last answer, like autocannon's connections or lesson 8's users);
 *   - the balancer picks a replica for each try with the balancer's own code (policies.ts pickers
 *     through choose.ts, failover.ts health and retry rules), optionally from stale load counts
 *     (`staleMs`: it sees each replica's requests in flight as they were at the last refresh);
 *   - each replica is one event loop: one request on the CPU at a time, first come first served
 *     (`loop: 'fifo'`, the default) or in turns as Node serves them (`loop: 'turns'`: what arrived
 *     during a turn is served in the next, in random order), optionally followed by pooled work on
 *     a thread pool of K threads (libuv's, per process);
 *   - faults on a timeline: kill (SIGKILL: in-flight tries reset, connections refused), freeze /
 *     thaw (SIGSTOP / SIGCONT: nothing progresses, tries time out), stop (SIGTERM: refuse new
 *     connections, drain, exit), add / remove replicas, and hogs that block a replica's event loop;
 *   - an autoscaler (core/hpa.ts, the cluster primary's own decide()) that adds and retires
 *     replicas from their event-loop utilization.
 * The model has no cost for the balancer, the kernel or the load generator unless `pathDelay`
 * gives one (a delay without a queue) or `pathQueue` does (a queue: in the lab they share the
 * machine's cores, so the time a request spends there grows with the requests beside it).
 *
 * The parts: world.ts (the clock, the event queue, the settings, a replica's states),
 * clients.ts, balancer.ts, replica.ts, autoscaler.ts, metrics.ts (what is counted and reported),
 * types.ts (SimConfig, SimResult), validate.ts; session.ts schedules the first events and
 * dispatches each one, a stretch of simulated time at a time (the Traffic Lab page steps it
 * live). sim/bench.ts measures the speed. Memory is flat in the number of requests: nothing is
 * kept per request after it ends (histograms and per-bucket series only).
 *
 * No Node.js APIs: the engine also runs in a browser page.
 */
import { SimSession } from './session.ts';
import type { SimConfig, SimResult } from './types.ts';

export type { FaultAction, SimConfig, SimPolicy, SimResult, TimelineEvent } from './types.ts';
export { SIM_POLICIES } from './types.ts';
export { validate } from './validate.ts';
export { REFUSED_MS } from './entities.ts';
export { SimSession, type ReplicaNow, type SecondStats } from './session.ts';

/** Runs one simulation to its end. Throws a RangeError for a config that makes no sense (see validate). */
export function simulate(config: SimConfig): SimResult {
  const session = new SimSession(config);
  session.advance(Infinity);
  return session.result();
}
