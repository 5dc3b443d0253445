/**
 * A discrete-event simulation of the lab: clients → balancer → N replicas.
 *
 * The model, in the lab's terms:
 *   - clients: open loop (Poisson arrivals at `ratePerS`: a new request whatever happened to the
 *     last) or closed loop (`count` clients, each sending its next request a think time after its
 *     last answer, like autocannon's connections or lesson 6's users);
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
 *   - an autoscaler (servers/lib/hpa.ts, the cluster primary's own decide()) that adds and retires
 *     replicas from their event-loop utilization.
 * The model has no cost for the balancer, the kernel or the load generator unless `pathDelay`
 * gives one (a delay without a queue) or `pathQueue` does (a queue: in the lab they share the
 * machine's cores, so the time a request spends there grows with the requests beside it).
 *
 * The parts: world.ts (the clock, the event queue, the settings, a replica's states),
 * clients.ts, balancer.ts, replica.ts, autoscaler.ts, metrics.ts (what is counted and reported),
 * types.ts (SimConfig, SimResult), validate.ts; this file schedules the first events and
 * dispatches each one. sim/bench.ts measures the speed. Memory is flat in the number of requests:
 * nothing is kept per request after it ends (histograms and per-bucket series only).
 *
 * No Node.js APIs: the engine also runs in a browser page.
 */
import { Autoscaler } from './autoscaler.ts';
import { fail, refresh, tryNext } from './balancer.ts';
import { arrival, send } from './clients.ts';
import { complete, enqueue, freeze, kill, ready, retire, start, stop, thaw, timeout } from './replica.ts';
import { exponential } from './rng.ts';
import type { SimConfig, SimResult } from './types.ts';
import { validate } from './validate.ts';
import { Ev, servesOpenConnections, World, type SimEvent } from './world.ts';

export type { ClientModel, FaultAction, Hog, ReplicaReport, SimConfig, SimResult, TimelineEvent } from './types.ts';
export { validate } from './validate.ts';
export { REFUSED_MS } from './world.ts';

/** Runs one simulation. Throws a RangeError for a config that makes no sense (see validate). */
export function simulate(config: SimConfig): SimResult {
  validate(config);
  const w = new World(config);
  for (let i = 0; i < config.replicas; i++) w.addReplica('up');
  const autoscaler = new Autoscaler();
  schedule(w);
  while (w.queue.length > 0 && w.queue.peek()!.t <= w.end) handle(w, w.queue.pop()!, autoscaler);
  w.metrics.countReplicas(w.now, w.replicas, true);
  return w.metrics.result(config, w.seed, w.replicas);
}

/** The timeline's first events: the clients, the hogs, the faults, the refreshes and syncs. */
function schedule(w: World): void {
  const config = w.config;
  if (config.clients.kind === 'open') w.at(exponential(w.rng, 1000 / config.clients.ratePerS), Ev.Arrival);
  else for (let c = 0; c < config.clients.count; c++) w.at(0, Ev.Send, c);
  (config.hogs ?? []).forEach((h, i) => {
    if (h.connections) for (let c = 0; c < h.connections; c++) enqueue(w, w.replicas[h.replica]!, undefined, i, false);
    if (h.ratePerS) w.at(exponential(w.rng, 1000 / h.ratePerS), Ev.HogArrival, i);
  });
  (config.events ?? []).forEach((e, i) => w.at(e.atMs, Ev.Fault, i));
  if (w.stale) w.at(config.staleMs!, Ev.Refresh);
  if (config.autoscale) w.at(config.autoscale.syncMs, Ev.Sync);
}

/** A fault of the timeline (config.events). */
function fault(w: World, n: number): void {
  const e = w.config.events![n]!;
  const r = w.replicas[e.replica ?? 0];
  if (e.action === 'kill') kill(w, r!);
  else if (e.action === 'freeze') freeze(w, r!);
  else if (e.action === 'thaw') thaw(w, r!);
  else if (e.action === 'stop') stop(r!);
  else if (e.action === 'add') start(w, w.config.autoscale?.startupMs ?? 0);
  else retire(w);
}

/** A hog's next open-loop request. */
function hogArrival(w: World, n: number): void {
  const h = w.config.hogs![n]!;
  const r = w.replicas[h.replica]!;
  if (servesOpenConnections(r)) enqueue(w, r, undefined, n, false);
  w.at(w.now + exponential(w.rng, 1000 / h.ratePerS!), Ev.HogArrival, n);
}

/** Handles one event at its time. */
function handle(w: World, ev: SimEvent, autoscaler: Autoscaler): void {
  w.now = ev.t;
  w.metrics.events++;
  w.metrics.countReplicas(w.now, w.replicas);
  switch (ev.type) {
    case Ev.Arrival:
      return arrival(w);
    case Ev.Send:
      return send(w, ev.n);
    case Ev.Reach:
      return tryNext(w, ev.req!);
    case Ev.Refused:
      return fail(w, ev.req!, w.replicas[ev.n]!, 'connect');
    case Ev.Complete:
      if (ev.epoch === ev.job!.replica.epoch) complete(w, ev.job!);
      return;
    case Ev.Timeout:
      return timeout(w, ev.job!);
    case Ev.Fault:
      return fault(w, ev.n);
    case Ev.Refresh:
      return refresh(w);
    case Ev.Sync:
      return autoscaler.sync(w);
    case Ev.Ready:
      return ready(w, w.replicas[ev.n]!);
    case Ev.HogArrival:
      return hogArrival(w, ev.n);
  }
}
