/**
 * One simulation's state, shared by the engine's parts (clients, balancer, replicas, autoscaler,
 * metrics): the clock and the event queue, the settings read from the config, the random source
 * and the samplers drawn from it, and the replicas. No Node.js APIs.
 */
import TinyQueue from 'tinyqueue';
import { FAILOVER_DEFAULTS, newHealth, type FailureKind, type HealthRules } from '../core/failover.ts';
import { ipHashKey, PICKERS, roundRobin, type Picker, type Rng } from '../core/policies.ts';
import { sampler } from './dist.ts';
import { Metrics } from './metrics.ts';
import { Users } from './users.ts';
import { seededRng } from './rng.ts';
import type { SimConfig, SimPolicy } from './types.ts';
import type { Ev, Job, Replica, Request, SimEvent } from './entities.ts';

/**
 * The four steps the parts of the simulation call on one another: a client's request goes to the
 * balancer (route), which sends a try to a replica (enqueue); the replica answers the client
 * (answer) or the try fails back to the balancer (fail). sim/session.ts wires them, so clients.ts,
 * balancer.ts and replica.ts import only world.ts and entities.ts, and their module graph has no cycle.
 */
interface Wiring {
  /** balancer.ts tryNext: picks a replica for the request's next try. */
  route(w: World, req: Request): void;
  /** clients.ts finish: the client has its answer (`none`: no replica was even tried). */
  answer(w: World, req: Request, status: number, none?: boolean): void;
  /** replica.ts enqueue: a try (or a hog's request, req undefined) reaches replica `r`. */
  enqueue(w: World, r: Replica, req: Request | undefined, hog: number, probe: boolean): void;
  /** balancer.ts fail: a try failed with `kind`. */
  fail(w: World, req: Request, r: Replica, kind: FailureKind): void;
}

export class World {
  readonly config: SimConfig;
  readonly seed: number;
  readonly rng: Rng;
  readonly bucketMs: number;
  readonly warmupMs: number;
  readonly end: number;
  readonly loadEnd: number;
  readonly method: 'GET' | 'POST';
  readonly fo: {
    retries: number;
    maxFails: number;
    failTimeoutMs: number;
    responseTimeoutMs: number;
    connectTimeoutMs: number;
  };
  readonly rules: HealthRules;
  /** The policy's picker (ip-hash: round robin, for when no replica is open for a key); setPolicy changes it. */
  pick!: Picker;
  /** ip-hash: each client network's key (ipHashKey of an address in it); undefined under the other policies. */
  networkKeys: string[] | undefined;
  readonly stale: boolean;
  readonly pooled: boolean;
  readonly turns: boolean;
  readonly maxRequests: number;
  readonly poolWork: (() => number) | undefined;
  readonly think: (() => number) | undefined;
  readonly pathDelay: (() => number) | undefined;
  readonly pathQueue: (() => number) | undefined;
  readonly hogMs: (() => number)[];
  readonly queue = new TinyQueue<SimEvent>([], (a, b) => a.t - b.t || a.seq - b.seq);
  readonly replicas: Replica[] = [];
  readonly metrics: Metrics;
  /** The open loop's users, when they time out and retry (config.users). */
  readonly users: Users | undefined;
  now = 0;
  /** When the path's server is next free (Lindley: sends arrive in time order, so FIFO needs no queue of its own). */
  pathFreeAt = 0;
  /** The balancer's round-robin cursor. */
  cursor = 0;
  private seq = 0;

  /** The steps the parts call on one another (see Wiring). */
  readonly wire: Wiring;

  constructor(config: SimConfig, wire: Wiring) {
    this.config = config;
    this.wire = wire;
    this.seed = config.seed ?? 1;
    this.rng = seededRng(this.seed);
    this.bucketMs = config.bucketMs ?? 1000;
    this.warmupMs = config.warmupMs ?? 0;
    this.end = config.durationMs;
    this.method = config.method ?? 'GET';
    this.fo = { ...FAILOVER_DEFAULTS, ...config.failover };
    this.rules = { maxFails: this.fo.maxFails, failTimeoutMs: this.fo.failTimeoutMs };
    this.setPolicy(config.policy);
    this.stale = (config.staleMs ?? 0) > 0;
    // The samplers are made in this order, as they always were: the same seed gives the same run.
    this.poolWork = config.pool ? sampler(config.pool.work, this.rng) : undefined;
    this.think =
      config.clients.kind === 'closed' && config.clients.think ? sampler(config.clients.think, this.rng) : undefined;
    this.pathDelay = config.pathDelay ? sampler(config.pathDelay, this.rng) : undefined;
    this.pathQueue = config.pathQueue ? sampler(config.pathQueue, this.rng) : undefined;
    this.hogMs = (config.hogs ?? []).map((h) => sampler(h.ms, this.rng));
    this.maxRequests = config.maxRequests ?? Infinity;
    this.pooled = config.pool !== undefined;
    this.turns = config.loop === 'turns';
    this.loadEnd = Math.min(config.loadMs ?? this.end, this.end);
    this.metrics = new Metrics(this.end, this.bucketMs);
    this.users = config.users ? new Users(config.users, this.loadEnd) : undefined;
  }

  /** Puts an event in the queue. */
  at(t: number, type: Ev, n = 0, job?: Job, req?: Request, epoch = 0): void {
    this.queue.push({ t, seq: this.seq++, type, job, req, n, epoch });
  }

  /** True inside the measured window: answers now count. */
  get measuring(): boolean {
    return this.now >= this.warmupMs && this.now <= this.end;
  }

  /** A new replica `app<n>` in `state` (up: ready at once). */
  addReplica(state: 'up' | 'starting'): Replica {
    const i = this.replicas.length;
    const r: Replica = {
      name: `app${i + 1}`,
      state,
      inFlight: 0,
      available: true,
      down: state !== 'up',
      health: newHealth(),
      live: 0,
      service: sampler(this.config.serviceFor?.[i] ?? this.config.service, this.rng),
      loopFreeAt: 0,
      poolFreeAt: new Array(this.config.pool?.threads ?? 0).fill(0),
      jobs: new Set(),
      epoch: 0,
      headScheduled: false,
      line: [],
      lineHead: 0,
      planned: 0,
      pending: [],
      frozenJobs: [],
      served: 0,
      hogServed: 0,
      cut: 0,
      busy: [],
      occupancy: [],
    };
    if (state === 'up') r.readyAt = this.now;
    this.replicas.push(r);
    return r;
  }

  /** Adds the overlap of [from, to) with each bucket to `series`, in ms (sign -1 takes it back). */
  spread(series: number[], from: number, to: number, sign: number): void {
    to = Math.min(to, this.end); // work planned past the end of the run is not part of it
    if (to <= from) return;
    let b = Math.floor(from / this.bucketMs);
    let t = from;
    while (t < to) {
      const edge = Math.min(to, (b + 1) * this.bucketMs);
      series[b] = (series[b] ?? 0) + sign * (edge - t);
      t = edge;
      b++;
    }
  }

  /**
   * The balancer's policy from now on; the round-robin cursor carries over, as in the kit's
   * balancer. Requests already sent keep the key they had (none, if sent under another policy).
   */
  setPolicy(policy: SimPolicy): void {
    // ip-hash falls back to round robin only when no replica is open for the key (as in the kit's balancer).
    this.pick = policy === 'ip-hash' ? roundRobin : PICKERS[policy];
    this.networkKeys =
      policy === 'ip-hash'
        ? Array.from({ length: this.config.clientNetworks ?? 1 }, (_, n) => ipHashKey(`10.${n >> 8}.${n & 255}.1`))
        : undefined;
  }

  /** ip-hash's key for a request from `client` (-1: the open loop, from a network at random). */
  keyFor(client: number): string | undefined {
    const keys = this.networkKeys;
    if (!keys) return undefined;
    if (keys.length === 1) return keys[0];
    return keys[client >= 0 ? client % keys.length : Math.min(keys.length - 1, Math.floor(this.rng() * keys.length))];
  }

  /** A replica's in-flight count moves by `delta`; the picker sees it now unless load information is stale. */
  setLive(r: Replica, delta: number): void {
    r.live += delta;
    if (!this.stale) r.inFlight = r.live;
  }
}
