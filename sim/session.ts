/**
 * One simulation that can be stepped: advance simulated time a stretch at a time, act on a replica
 * in between (kill, freeze, thaw, stop, add, remove at the current time), and read what the last
 * whole second looked like. simulate() runs one straight to its end; the Traffic Lab page steps
 * one every frame. No Node.js APIs.
 */
import { summarize, type LatencySummary } from '../results/report/latency.ts';
import { Autoscaler } from './autoscaler.ts';
import { fail, refresh, tryNext } from './balancer.ts';
import { arrival, finish, nextArrival, send, userTimeout } from './clients.ts';
import { complete, enqueue, freeze, kill, ready, retire, start, stop, thaw, timeout } from './replica.ts';
import { exponential } from './rng.ts';
import {
  SIM_POLICIES,
  type FaultAction,
  type SimConfig,
  type SimPolicy,
  type SimResult,
  type TimelineEvent,
} from './types.ts';
import { validate } from './validate.ts';
import { World } from './world.ts';
import { Ev, servesOpenConnections, type ReplicaState, type SimEvent } from './entities.ts';

/** What clients saw in one simulated second: answers, and their latency (ms). */
export interface SecondStats {
  second: number;
  completed: number;
  ok: number;
  failed: number;
  latency: LatencySummary | undefined;
}

/** A replica as it is now. */
export interface ReplicaNow {
  name: string;
  state: ReplicaState;
  /** Out of the balancer's rotation (retired, or marked down by failed tries). */
  down: boolean;
  /** Requests on it, waiting or being served (the hog's too). */
  queue: number;
  /** Client tries it answered so far. */
  served: number;
  /** Busy share of its event loop in the last whole bucket (0..1). */
  utilization: number;
}

const ACTIONS: readonly FaultAction[] = ['kill', 'freeze', 'thaw', 'stop', 'add', 'remove'];

export class SimSession {
  readonly world: World;
  private readonly config: SimConfig;
  private readonly events: TimelineEvent[];
  private readonly autoscaler = new Autoscaler();

  /** Throws a RangeError for a config that makes no sense (see validate). */
  constructor(config: SimConfig) {
    validate(config);
    this.config = config;
    this.events = [...(config.events ?? [])];
    this.world = new World({ ...config, events: this.events }, { route: tryNext, answer: finish, enqueue, fail });
    for (let i = 0; i < config.replicas; i++) this.world.addReplica('up');
    schedule(this.world);
  }

  /** Simulated time now, ms. */
  get now(): number {
    return this.world.now;
  }

  /** True once nothing is left to happen before the run's end (durationMs). */
  get done(): boolean {
    const w = this.world;
    return w.queue.length === 0 || w.queue.peek()!.t > w.end;
  }

  /**
   * Handles every event up to `toMs` (no further than the run's end), or `maxEvents` of them,
   * whichever comes first; the clock then stands at `toMs` unless events were left. Returns the
   * events handled.
   */
  advance(toMs: number, maxEvents = Infinity): number {
    const w = this.world;
    const to = Math.min(toMs, w.end);
    let n = 0;
    while (n < maxEvents && w.queue.length > 0 && w.queue.peek()!.t <= to) {
      handle(w, w.queue.pop()!, this.autoscaler);
      n++;
    }
    if (n < maxEvents && Number.isFinite(to) && to > w.now) w.now = to;
    return n;
  }

  /**
   * Acts now: kill, freeze, thaw or stop replica `replica` (0-based), or add or remove one (the
   * newest goes). Throws a RangeError for an unknown action or replica.
   */
  act(action: FaultAction, replica?: number): void {
    const w = this.world;
    if (!ACTIONS.includes(action)) throw new RangeError(`unknown action '${String(action)}'`);
    const targeted = action !== 'add' && action !== 'remove';
    if (
      targeted &&
      (replica === undefined || !Number.isInteger(replica) || replica < 0 || replica >= w.replicas.length)
    ) {
      throw new RangeError(`a ${action} needs a replica in 0..${w.replicas.length - 1}; got ${replica}`);
    }
    this.events.push({ atMs: w.now, action, ...(targeted ? { replica } : {}) });
    w.at(w.now, Ev.Fault, this.events.length - 1);
  }

  /** Switches the balancer's policy now (as the balancer's POST /__lb/policy does); a RangeError for one the simulator has not. */
  setPolicy(policy: SimPolicy): void {
    if (!(SIM_POLICIES as readonly string[]).includes(policy))
      throw new RangeError(`unknown policy '${String(policy)}'`);
    this.world.setPolicy(policy);
  }

  /**
   * Second `s` (needs config.timeline), summarized once: its histogram is then dropped, so a long
   * live run keeps no more than the seconds not yet read.
   */
  takeSecond(s: number): SecondStats {
    const seconds = this.world.metrics.seconds;
    const x = seconds[s];
    delete seconds[s];
    return {
      second: s,
      completed: x?.completed ?? 0,
      ok: x?.ok2xx ?? 0,
      failed: x?.non2xx ?? 0,
      latency: x ? summarize(x.h) : undefined,
    };
  }

  /** The clients' totals so far: requests sent, answered, failed, retried; latency over the run. */
  totals(): {
    sent: number;
    completed: number;
    failed: number;
    retried: number;
    timeouts: number;
    latency: LatencySummary;
  } {
    const m = this.world.metrics;
    return {
      sent: m.sent,
      completed: m.completed,
      failed: m.failed,
      retried: m.retried,
      timeouts: m.timeouts,
      latency: summarize(m.histogram),
    };
  }

  /** Every replica as it is now; utilization is that of the last whole bucket. */
  replicas(): ReplicaNow[] {
    const w = this.world;
    const b = Math.floor(w.now / w.bucketMs) - 1;
    return w.replicas.map((r) => ({
      name: r.name,
      state: r.state,
      down: r.down,
      queue: r.jobs.size,
      served: r.served,
      utilization: b >= 0 ? Math.min(1, (r.busy[b] ?? 0) / w.bucketMs) : 0,
    }));
  }

  /** The result of the whole run (call once, at its end). */
  result(): SimResult {
    const w = this.world;
    w.metrics.countReplicas(w.now, w.replicas, true);
    const r = w.metrics.result(this.config, w.seed, w.replicas);
    return w.users ? { ...r, users: w.users.report() } : r;
  }
}

/** The timeline's first events: the clients, the hogs, the faults, the refreshes and syncs. */
function schedule(w: World): void {
  const config = w.config;
  if (config.clients.kind === 'open') w.at(nextArrival(config.clients, w.rng, 0), Ev.Arrival);
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
    case Ev.UserTimeout:
      return userTimeout(w, ev.req!);
  }
}
