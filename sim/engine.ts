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
 * Speed: a first-come-first-served server's completion time is known when a request joins its
 * queue (max(now, when the server frees) + service), and a turn's when the turn starts, so a
 * replica only needs its next completion in the event queue; a freeze or a kill re-plans the
 * affected queue. sim/bench.ts measures it. Memory is flat in the number of requests: nothing is kept per
 * request after it ends (histograms and per-bucket series only).
 *
 * No Node.js APIs: the engine also runs in a browser page.
 */
import TinyQueue from 'tinyqueue';
import { chooseReplica, type Candidate } from '../servers/lib/choose.ts';
import { FAILOVER_DEFAULTS, failureStatus, mayRetry, newHealth, recordFailure, recordSuccess, type FailureKind, type HealthRules } from '../servers/lib/failover.ts';
import { decide, initialHpaState, METRIC_WINDOW_SYNCS, validateHpaConfig, type HpaConfig, type HpaReason, type HpaState } from '../servers/lib/hpa.ts';
import { PICKERS, type Policy } from '../servers/lib/policies.ts';
import { createLatencyHistogram, recordMs, summarize, type LatencyHistogram, type LatencySummary } from '../measure/lib/latency.ts';
import { sampler, type Dist } from './dist.ts';
import { exponential, seededRng } from './rng.ts';

export type ClientModel = { kind: 'open'; ratePerS: number } | { kind: 'closed'; count: number; think?: Dist };

/** A stream of requests sent straight to one replica (not through the balancer), like the lab's hog. */
export interface Hog {
  replica: number;
  /** Each hog request's time on the event loop. */
  ms: Dist;
  /** Closed loop: this many connections, each sending again as soon as it is answered. */
  connections?: number;
  /** Open loop: Poisson arrivals at this rate. */
  ratePerS?: number;
}

export type FaultAction = 'kill' | 'freeze' | 'thaw' | 'stop' | 'add' | 'remove';

export interface TimelineEvent {
  atMs: number;
  action: FaultAction;
  /** Target replica (0-based) for kill, freeze, thaw, stop; ignored by add and remove (the newest goes). */
  replica?: number;
}

export interface SimConfig {
  /** PRNG seed: the same config and seed give the same result, exactly. Default 1. */
  seed?: number;
  /** Replicas at the start. */
  replicas: number;
  policy: Policy;
  /** The balancer sees each replica's in-flight count as of the last refresh, every `staleMs` ms; 0 = live. */
  staleMs?: number;
  clients: ClientModel;
  /**
   * How a replica's event loop orders waiting requests: 'fifo' (default) in arrival order; 'turns'
   * as Node does, a turn at a time: what arrived during a turn is served in the next, in the order
   * the kernel reports the connections ready (random in the model). No thread pool with 'turns'.
   */
  loop?: 'fifo' | 'turns';
  /** A request's time on a replica's event loop. */
  service: Dist;
  /** Per-replica service time, replacing `service` (e.g. a slower replica). */
  serviceFor?: Record<number, Dist>;
  /** Pooled work after the event-loop part, on a pool of `threads` per replica (UV_THREADPOOL_SIZE). */
  pool?: { threads: number; work: Dist };
  /** Time outside the replicas (client, kernel, balancer) before a request reaches the balancer: a delay, no queue. */
  pathDelay?: Dist;
  /**
   * Time outside the replicas as one first-come-first-served server that every request passes
   * before the balancer picks (before `pathDelay`): the CPU the balancer, the load generator and
   * the kernel share, so the fewer requests are on it, the sooner each gets through.
   */
  pathQueue?: Dist;
  hogs?: Hog[];
  /** Retries follow failover.ts: a GET may be retried after a reset or timeout, a POST only after a refused connection. */
  method?: 'GET' | 'POST';
  failover?: Partial<{ retries: number; maxFails: number; failTimeoutMs: number; responseTimeoutMs: number }>;
  events?: TimelineEvent[];
  /** HPA-style autoscaling of replicas from event-loop utilization (target is a fraction of one core). */
  autoscale?: { hpa: HpaConfig; syncMs: number; startupMs: number };
  /** Clients send until this time, ms; the run ends there (answers after it are not counted, as with a duration-bound load). */
  durationMs: number;
  /** Clients stop sending at this time, ms (default durationMs); the run goes on to durationMs (e.g. to watch a scale-down). */
  loadMs?: number;
  /** Clients stop sending after this many requests. */
  maxRequests?: number;
  /** Answers before this time are not recorded in latency, throughput or served counts. */
  warmupMs?: number;
  /** Resolution of the per-replica series (utilization, queue, workers), ms. Default 1000. */
  bucketMs?: number;
  /** Keep a per-second timeline of answers (req/s, errors, p99, max), as the lab's failover report shows. */
  timeline?: boolean;
  /** Answers at or over this latency are counted as slow (count, median, max). */
  slowMs?: number;
}

export interface ReplicaReport {
  name: string;
  /** Client tries it answered in the measured window. */
  served: number;
  /** Hog requests it answered. */
  hogServed: number;
  /** Busy share of its event loop over the run (0..1). */
  utilization: number;
  /** Requests in it (waiting or being served), time-averaged over the run. */
  meanQueue: number;
  /** Client tries it was running or holding when it was killed or stopped abruptly. */
  cut: number;
  /** Client tries in it when a kill, freeze or stop arrived. */
  inFlightAtFault?: number;
}

export interface SimResult {
  seed: number;
  policy: Policy;
  /** Simulated time covered, ms. */
  simulatedMs: number;
  /** Measured window, ms (duration less warm-up). */
  windowMs: number;
  counts: {
    /** Requests clients sent. */
    sent: number;
    /** Answers in the measured window (2xx and failures). */
    completed: number;
    ok: number;
    /** 502/503/504 answers: the last try failed (reset, timeout, refused) or no replica was open. */
    failed: number;
    /** Requests tried on more than one replica. */
    retried: number;
    /** Tries that ended by the response timeout. */
    timeouts: number;
    /** Events processed (a measure of the engine's work). */
    events: number;
  };
  /** Answers per second in the measured window. */
  throughput: number;
  latency: LatencySummary;
  slow: { count: number; medianMs: number; maxMs: number };
  replicas: ReplicaReport[];
  /** Per bucket: event-loop utilization and mean queue per replica (0 before a replica exists), and the replicas taking new requests at its start. */
  series: { bucketMs: number; utilization: number[][]; queue: number[][]; replicas: number[] };
  timeline?: { second: number; completed: number; ok2xx: number; non2xx: number; errors: number; p99: number; max: number }[];
  autoscale?: { atMs: number; current: number; desired: number; reason: HpaReason; averageUtilization?: number }[];
}

type ReplicaState = 'starting' | 'up' | 'frozen' | 'draining' | 'dead';

interface Replica extends Candidate {
  name: string;
  state: ReplicaState;
  /** Live in-flight count (`inFlight` is what the picker sees: live, or stale). */
  live: number;
  service: () => number;
  loopFreeAt: number;
  poolFreeAt: number[];
  jobs: Set<Job>;
  /** Invalidates completion events planned before a freeze or kill. */
  epoch: number;
  /** The head job's completion is in the event queue (replicas without a pool). */
  headScheduled: boolean;
  /** Planned jobs in the order they finish (replicas without a pool), from lineHead on. */
  line: (Job | undefined)[];
  lineHead: number;
  /** Jobs planned and not finished. */
  planned: number;
  /** Jobs waiting unplanned: for the next turn, or for a thaw. */
  pending: Job[];
  /** Jobs a freeze took back, in order. */
  frozenJobs: Job[];
  /** Got SIGTERM: drains once it runs (kept across a freeze). */
  stopping: boolean;
  /** Its listener is closed (it got SIGTERM while running): new connections are refused, frozen or not. */
  closed: boolean;
  readyAt?: number;
  served: number;
  hogServed: number;
  cut: number;
  inFlightAtFault?: number;
  busy: number[];
  occupancy: number[];
}

interface Request {
  sentAt: number;
  client: number; // -1: open loop
  tried: number[];
  lastKind: FailureKind | undefined;
}

interface Job {
  replica: Replica;
  req: Request | undefined; // undefined: a hog request
  hog: number;
  probe: boolean;
  tryAt: number;
  /** Queue time from here on is not booked yet (set at arrival; moved on by a freeze). */
  occFrom: number;
  start: number;
  loopEnd: number;
  end: number;
  loopMs: number;
  poolMs: number;
  /** 0 pending, 1 answered or failed (a timed-out job still occupies its replica until `end`). */
  settled: 0 | 1;
  timeoutPlanned: boolean;
  /** Its start and end are fixed and booked (false while it waits for a turn or a thaw). */
  planned: boolean;
}

const enum Ev {
  Arrival,
  Send,
  Complete,
  Timeout,
  Fault,
  Refresh,
  Sync,
  Ready,
  HogArrival,
  Reach,
  Refused,
}

/** What a refused connection costs the balancer before it can try elsewhere, ms (a loopback connect and its reset). */
export const REFUSED_MS = 0.1;

interface SimEvent {
  t: number;
  seq: number;
  type: Ev;
  job?: Job;
  req?: Request;
  n: number;
  epoch: number;
}

/** Runs one simulation. Throws a RangeError for a config that makes no sense (see validate). */
export function simulate(config: SimConfig): SimResult {
  validate(config);
  const seed = config.seed ?? 1;
  const rng = seededRng(seed);
  const bucketMs = config.bucketMs ?? 1000;
  const warmupMs = config.warmupMs ?? 0;
  const end = config.durationMs;
  const method = config.method ?? 'GET';
  const fo = { ...FAILOVER_DEFAULTS, ...config.failover };
  const rules: HealthRules = { maxFails: fo.maxFails, failTimeoutMs: fo.failTimeoutMs };
  const pick = PICKERS[config.policy];
  const stale = (config.staleMs ?? 0) > 0;
  const poolWork = config.pool ? sampler(config.pool.work, rng) : undefined;
  const think = config.clients.kind === 'closed' && config.clients.think ? sampler(config.clients.think, rng) : undefined;
  const pathDelay = config.pathDelay ? sampler(config.pathDelay, rng) : undefined;
  const pathQueue = config.pathQueue ? sampler(config.pathQueue, rng) : undefined;
  /** When the path's server is next free (Lindley: sends arrive in time order, so FIFO needs no queue of its own). */
  let pathFreeAt = 0;
  const hogMs = (config.hogs ?? []).map((h) => sampler(h.ms, rng));
  const maxRequests = config.maxRequests ?? Infinity;
  const pooled = config.pool !== undefined;
  const turns = config.loop === 'turns';
  const loadEnd = Math.min(config.loadMs ?? end, end);

  const queue = new TinyQueue<SimEvent>([], (a, b) => a.t - b.t || a.seq - b.seq);
  let seq = 0;
  let now = 0;
  const at = (t: number, type: Ev, n = 0, job?: Job, req?: Request, epoch = 0) => queue.push({ t, seq: seq++, type, job, req, n, epoch });

  const replicas: Replica[] = [];
  const addReplica = (state: ReplicaState): Replica => {
    const i = replicas.length;
    const r: Replica = {
      name: `app${i + 1}`,
      state,
      inFlight: 0,
      available: true,
      down: state !== 'up',
      health: newHealth(),
      live: 0,
      service: sampler(config.serviceFor?.[i] ?? config.service, rng),
      loopFreeAt: 0,
      poolFreeAt: new Array(config.pool?.threads ?? 0).fill(0),
      jobs: new Set(),
      epoch: 0,
      headScheduled: false,
      line: [],
      lineHead: 0,
      planned: 0,
      pending: [],
      frozenJobs: [],
      stopping: false,
      closed: false,
      served: 0,
      hogServed: 0,
      cut: 0,
      busy: [],
      occupancy: [],
    };
    if (state === 'up') r.readyAt = now;
    replicas.push(r);
    return r;
  };
  for (let i = 0; i < config.replicas; i++) addReplica('up');

  // Series: add the overlap of [from, to) with each bucket, in ms (sign -1 takes it back).
  const spread = (series: number[], from: number, to: number, sign: number) => {
    to = Math.min(to, end); // work planned past the end of the run is not part of it
    if (to <= from) return;
    let b = Math.floor(from / bucketMs);
    let t = from;
    while (t < to) {
      const edge = Math.min(to, (b + 1) * bucketMs);
      series[b] = (series[b] ?? 0) + sign * (edge - t);
      t = edge;
      b++;
    }
  };

  // Counters and histograms for the measured window.
  const histogram: LatencyHistogram = createLatencyHistogram();
  const slowHistogram: LatencyHistogram = createLatencyHistogram();
  let sent = 0;
  let completed = 0;
  let ok = 0;
  let failed = 0;
  let retried = 0;
  let timeouts = 0;
  let events = 0;
  const seconds: { completed: number; ok2xx: number; non2xx: number; h: LatencyHistogram }[] = [];
  const decisions: NonNullable<SimResult['autoscale']> = [];
  const replicaCount: number[] = [];

  const setLive = (r: Replica, delta: number) => {
    r.live += delta;
    if (!stale) r.inFlight = r.live;
  };

  // --- clients --------------------------------------------------------------------------
  const send = (client: number) => {
    if (now >= loadEnd || sent >= maxRequests) return;
    sent++;
    const req: Request = { sentAt: now, client, tried: [], lastKind: undefined };
    let reach = now;
    if (pathQueue) reach = pathFreeAt = Math.max(now, pathFreeAt) + pathQueue();
    if (pathDelay) reach += pathDelay();
    if (reach > now) at(reach, Ev.Reach, 0, undefined, req);
    else tryNext(req);
  };

  /** The client gets its answer; `none` when no replica was even tried (then its next request waits REFUSED_MS, not 0). */
  const finish = (req: Request, status: number, none = false) => {
    if (now >= warmupMs && now <= end) {
      if (req.tried.length > 1) retried++;
      const ms = now - req.sentAt;
      completed++;
      if (status < 300) ok++;
      else failed++;
      recordMs(histogram, ms);
      if (config.slowMs !== undefined && ms >= config.slowMs) recordMs(slowHistogram, ms);
      if (config.timeline) {
        const s = (seconds[Math.floor(now / 1000)] ??= { completed: 0, ok2xx: 0, non2xx: 0, h: createLatencyHistogram() });
        s.completed++;
        if (status < 300) s.ok2xx++;
        else s.non2xx++;
        recordMs(s.h, ms);
      }
    }
    if (req.client >= 0) {
      if (think) at(now + think(), Ev.Send, req.client);
      else if (none) at(now + REFUSED_MS, Ev.Send, req.client);
      else send(req.client);
    }
  };

  // --- the balancer ---------------------------------------------------------------------
  let cursor = 0;
  const tryNext = (req: Request): void => {
    const choice = chooseReplica(replicas, req.tried, rules, now, pick, cursor, rng);
    if (!choice) return finish(req, req.lastKind ? failureStatus(req.lastKind) : 503, req.tried.length === 0);
    cursor = choice.cursor;
    const r = replicas[choice.index]!;
    req.tried.push(choice.index);
    if (r.state === 'dead' || r.state === 'draining' || r.state === 'starting' || r.closed) {
      // Refused: the balancer learns it a loopback round trip later (and a client whose every try
      // is refused cannot loop forever at one instant).
      at(now + REFUSED_MS, Ev.Refused, choice.index, undefined, req);
      return;
    }
    setLive(r, 1);
    enqueue(r, req, -1, choice.probe);
  };

  /** A try failed: the balancer records it and retries on another replica when the rules allow. */
  const fail = (req: Request, r: Replica, kind: FailureKind): void => {
    // A failed probe rests the replica again: recordFailure does that for any failed try.
    recordFailure(r.health, rules, now);
    req.lastKind = kind;
    const maxTries = Math.min(fo.retries + 1, replicas.length);
    if (req.tried.length < maxTries && mayRetry(method, kind)) return tryNext(req);
    finish(req, failureStatus(kind));
  };

  // --- replicas -------------------------------------------------------------------------
  /** Fixes `job`'s start and end on its replica's loop (and pool) from `from` on, and books its busy and queue time. */
  const plan = (r: Replica, job: Job, from: number) => {
    job.start = Math.max(from, r.loopFreeAt);
    job.loopEnd = job.start + job.loopMs;
    r.loopFreeAt = job.loopEnd;
    job.end = job.loopEnd;
    if (job.poolMs > 0) {
      let k = 0;
      for (let i = 1; i < r.poolFreeAt.length; i++) if (r.poolFreeAt[i]! < r.poolFreeAt[k]!) k = i;
      job.end = Math.max(job.loopEnd, r.poolFreeAt[k]!) + job.poolMs;
      r.poolFreeAt[k] = job.end;
    }
    spread(r.busy, job.start, job.loopEnd, 1);
    spread(r.occupancy, job.occFrom, job.end, 1);
    job.planned = true;
    r.planned++;
    // With a pool, jobs may finish out of order: each gets its own event. Without one they finish
    // in the order planned, so only the head's completion is in the event queue (a smaller heap).
    if (pooled) at(job.end, Ev.Complete, 0, job, undefined, r.epoch);
    else r.line.push(job);
    if (job.req && !job.timeoutPlanned && job.end - job.tryAt > fo.responseTimeoutMs) {
      job.timeoutPlanned = true;
      at(job.tryAt + fo.responseTimeoutMs, Ev.Timeout, 0, job);
    }
  };

  /** Takes back what a planned `job` would still have done after `t` (a freeze or kill at t). */
  const unplan = (r: Replica, job: Job, t: number) => {
    spread(r.busy, Math.max(job.start, t), job.loopEnd, -1);
    spread(r.occupancy, Math.max(job.occFrom, t), job.end, -1);
    job.occFrom = Math.max(job.occFrom, t);
    // What remains to do, for a thaw: the unfinished part of each phase.
    job.loopMs = Math.max(0, job.loopEnd - Math.max(job.start, t));
    if (job.poolMs > 0) job.poolMs = Math.min(job.poolMs, job.end - Math.max(job.loopEnd, t));
    job.planned = false;
    r.planned--;
  };

  /** Puts the head job's completion in the event queue (replicas without a pool). */
  const scheduleHead = (r: Replica) => {
    if (pooled || r.headScheduled || r.state === 'frozen' || r.lineHead >= r.line.length) return;
    r.headScheduled = true;
    const head = r.line[r.lineHead]!;
    at(head.end, Ev.Complete, 0, head, undefined, r.epoch);
  };

  /**
   * Node's event loop in turns (loop: 'turns'): the requests that arrived while the loop was busy
   * are served in the next turn, in the order the kernel reports their connections ready, which
   * the model takes as random. A FIFO loop serves them in arrival order instead.
   */
  const startTurn = (r: Replica) => {
    const batch = r.pending;
    r.pending = [];
    for (let i = batch.length - 1; i > 0; i--) {
      const k = Math.floor(rng() * (i + 1));
      [batch[i], batch[k]] = [batch[k]!, batch[i]!];
    }
    for (const job of batch) plan(r, job, now);
    scheduleHead(r);
  };

  const enqueue = (r: Replica, req: Request | undefined, hog: number, probe: boolean) => {
    const job: Job = {
      replica: r,
      req,
      hog,
      probe,
      tryAt: now,
      occFrom: now,
      start: 0,
      loopEnd: 0,
      end: 0,
      loopMs: req ? r.service() : hogMs[hog]!(),
      poolMs: req && poolWork ? poolWork() : 0,
      settled: 0,
      timeoutPlanned: false,
      planned: false,
    };
    r.jobs.add(job);
    if (r.state === 'frozen' || (turns && (r.planned > 0 || r.pending.length > 0))) {
      // Waits unplanned: for the thaw, or for the next turn, which starts when this one ends
      // (loopFreeAt). A frozen replica's thaw may never come: plan the timeout now. Otherwise plan
      // it now only if it is already certain; else plan() does when the turn starts, in time.
      r.pending.push(job);
      if (req && (r.state === 'frozen' || r.loopFreeAt + job.loopMs - now > fo.responseTimeoutMs)) {
        job.timeoutPlanned = true;
        at(now + fo.responseTimeoutMs, Ev.Timeout, 0, job);
      }
      return;
    }
    plan(r, job, now);
    scheduleHead(r);
  };

  const complete = (job: Job) => {
    const r = job.replica;
    r.jobs.delete(job);
    job.planned = false;
    r.planned--;
    if (!pooled) {
      r.line[r.lineHead++] = undefined; // let the finished job go
      if (r.lineHead >= 256 && r.lineHead * 2 >= r.line.length) {
        r.line = r.line.slice(r.lineHead);
        r.lineHead = 0;
      }
    }
    r.headScheduled = false;
    if (job.req) {
      if (job.settled === 0) {
        job.settled = 1;
        setLive(r, -1);
        recordSuccess(r.health, job.probe);
        if (now >= warmupMs && now <= end) r.served++;
        finish(job.req, 200);
      }
    } else {
      if (now >= warmupMs && now <= end) r.hogServed++;
      const h = config.hogs![job.hog]!;
      if (h.connections && (r.state === 'up' || r.state === 'frozen') && now < end) enqueue(r, undefined, job.hog, false);
    }
    if (turns && r.planned === 0 && r.pending.length > 0 && r.state !== 'frozen') startTurn(r);
    if (r.state === 'draining' && r.jobs.size === 0) r.state = 'dead';
    scheduleHead(r);
  };

  const timeout = (job: Job) => {
    if (job.settled) return;
    job.settled = 1;
    if (now >= warmupMs) timeouts++;
    const r = job.replica;
    setLive(r, -1);
    fail(job.req!, r, 'timeout');
  };

  const inFlightTries = (r: Replica) => {
    let n = 0;
    for (const j of r.jobs) if (j.req && j.settled === 0) n++;
    return n;
  };

  /** SIGKILL, or an abrupt exit: every try in the replica is reset, new connections are refused. */
  const kill = (r: Replica) => {
    if (r.state === 'dead') return;
    r.inFlightAtFault ??= inFlightTries(r);
    r.state = 'dead';
    r.epoch++;
    r.headScheduled = false;
    const jobs = [...r.jobs];
    r.jobs.clear();
    r.line = [];
    r.lineHead = 0;
    r.pending = [];
    r.frozenJobs = [];
    for (const job of jobs) {
      if (job.planned) unplan(r, job, now);
      else spread(r.occupancy, job.occFrom, now, 1); // it waited unplanned until now
      if (job.req && job.settled === 0) {
        job.settled = 1;
        r.cut++;
        setLive(r, -1);
        fail(job.req, r, 'reset');
      }
    }
  };

  /** SIGSTOP: nothing progresses; what was planned is taken back and kept, in order, for the thaw. */
  const freeze = (r: Replica) => {
    if (r.state !== 'up' && r.state !== 'draining') return;
    r.stopping = r.state === 'draining';
    r.inFlightAtFault ??= inFlightTries(r);
    r.state = 'frozen';
    r.epoch++;
    r.headScheduled = false;
    const planned = pooled ? [...r.jobs].filter((j) => j.planned) : (r.line.slice(r.lineHead) as Job[]);
    for (const job of planned) unplan(r, job, now);
    r.frozenJobs = planned;
    r.line = [];
    r.lineHead = 0;
    for (const job of r.jobs) {
      if (job.req && job.settled === 0 && !job.timeoutPlanned) {
        job.timeoutPlanned = true;
        at(job.tryAt + fo.responseTimeoutMs, Ev.Timeout, 0, job);
      }
    }
  };

  /** SIGCONT: what was cut short goes on first; then what arrived meanwhile (FIFO), or the next turn. */
  const thaw = (r: Replica) => {
    if (r.state !== 'frozen') return;
    r.state = r.stopping ? 'draining' : 'up';
    if (r.stopping) r.closed = true;
    r.epoch++;
    r.loopFreeAt = now;
    r.poolFreeAt.fill(now);
    for (const job of r.frozenJobs) plan(r, job, now);
    r.frozenJobs = [];
    if (!turns) {
      for (const job of r.pending) plan(r, job, now);
      r.pending = [];
    } else if (r.planned === 0 && r.pending.length > 0) startTurn(r);
    if (r.state === 'draining' && r.jobs.size === 0) r.state = 'dead';
    scheduleHead(r);
  };

  /** SIGTERM: refuse new connections, finish what it has, exit. */
  const stop = (r: Replica) => {
    if (r.state === 'dead') return;
    r.inFlightAtFault ??= inFlightTries(r);
    // A frozen process gets the SIGTERM when it is thawed: it stays frozen, and drains then.
    if (r.state === 'frozen') r.stopping = true;
    else {
      r.closed = true;
      r.state = r.jobs.size === 0 ? 'dead' : 'draining';
    }
  };

  const ready = (r: Replica) => {
    if (r.state !== 'starting') return;
    r.state = 'up';
    r.down = false;
    r.readyAt = now;
    r.loopFreeAt = now;
  };

  /** Retires the newest replica that is up: out of rotation, then drained. */
  const retire = () => {
    const r = [...replicas].reverse().find((x) => x.state === 'up' || x.state === 'starting');
    if (!r) return;
    r.down = true;
    r.state = r.jobs.size === 0 || r.state === 'starting' ? 'dead' : 'draining';
  };

  const start = (startupMs: number) => {
    addReplica('starting');
    at(now + startupMs, Ev.Ready, replicas.length - 1);
  };

  // --- autoscaler -----------------------------------------------------------------------
  let hpaState: HpaState = initialHpaState();
  const sync = () => {
    const a = config.autoscale!;
    const live = replicas.filter((r) => r.state === 'up' || r.state === 'starting' || (r.state === 'frozen' && !r.down));
    const b1 = Math.floor(now / bucketMs);
    const samples = live.map((r, i) => {
      const ready = r.readyAt !== undefined && r.readyAt <= now - a.syncMs;
      // As the lab's primary reads it: busy time over the last METRIC_WINDOW_SYNCS periods, none from before the replica was ready.
      const from = Math.max(now - METRIC_WINDOW_SYNCS * a.syncMs, r.readyAt ?? now);
      const b0 = Math.ceil(from / bucketMs);
      let busy = 0;
      for (let b = b0; b < b1; b++) busy += r.busy[b] ?? 0;
      const span = (b1 - b0) * bucketMs;
      return { pid: i, readyAt: r.readyAt, utilization: ready && span > 0 ? Math.min(1, busy / span) : undefined };
    });
    const d = decide(a.hpa, hpaState, now, samples);
    hpaState = d.state;
    decisions.push({ atMs: now, current: live.length, desired: d.desired, reason: d.reason, ...(d.averageUtilization !== undefined ? { averageUtilization: d.averageUtilization } : {}) });
    for (let n = live.length; n < d.desired; n++) start(a.startupMs);
    for (let n = live.length; n > d.desired; n--) retire();
    if (now + a.syncMs <= end) at(now + a.syncMs, Ev.Sync);
  };

  // --- the timeline ---------------------------------------------------------------------
  if (config.clients.kind === 'open') at(exponential(rng, 1000 / config.clients.ratePerS), Ev.Arrival);
  else for (let c = 0; c < config.clients.count; c++) at(0, Ev.Send, c);
  (config.hogs ?? []).forEach((h, i) => {
    if (h.connections) for (let c = 0; c < h.connections; c++) enqueue(replicas[h.replica]!, undefined, i, false);
    if (h.ratePerS) at(exponential(rng, 1000 / h.ratePerS), Ev.HogArrival, i);
  });
  (config.events ?? []).forEach((e, i) => at(e.atMs, Ev.Fault, i));
  if (stale) at(config.staleMs!, Ev.Refresh);
  if (config.autoscale) at(config.autoscale.syncMs, Ev.Sync);

  /** Replicas taking new requests: up (or frozen, as far as anyone can tell), in rotation, not stopping. */
  const liveCount = () => replicas.filter((r) => (r.state === 'up' || (r.state === 'frozen' && !r.stopping)) && !r.down).length;
  let nextCount = 0;
  /** Handles one event at its time. */
  const handle = (ev: SimEvent) => {
    now = ev.t;
    events++;
    while (nextCount * bucketMs <= now) replicaCount[nextCount++] = liveCount();
    switch (ev.type) {
      case Ev.Arrival:
        send(-1);
        if (config.clients.kind === 'open' && now < loadEnd && sent < maxRequests) at(now + exponential(rng, 1000 / config.clients.ratePerS), Ev.Arrival);
        break;
      case Ev.Send:
        send(ev.n);
        break;
      case Ev.Reach:
        tryNext(ev.req!);
        break;
      case Ev.Refused:
        fail(ev.req!, replicas[ev.n]!, 'connect');
        break;
      case Ev.Complete:
        if (ev.epoch === ev.job!.replica.epoch) complete(ev.job!);
        break;
      case Ev.Timeout:
        timeout(ev.job!);
        break;
      case Ev.Fault: {
        const e = config.events![ev.n]!;
        const r = replicas[e.replica ?? 0];
        if (e.action === 'kill') kill(r!);
        else if (e.action === 'freeze') freeze(r!);
        else if (e.action === 'thaw') thaw(r!);
        else if (e.action === 'stop') stop(r!);
        else if (e.action === 'add') start(config.autoscale?.startupMs ?? 0);
        else retire();
        break;
      }
      case Ev.Refresh:
        for (const r of replicas) r.inFlight = r.live;
        at(now + config.staleMs!, Ev.Refresh);
        break;
      case Ev.Sync:
        sync();
        break;
      case Ev.Ready:
        ready(replicas[ev.n]!);
        break;
      case Ev.HogArrival: {
        const h = config.hogs![ev.n]!;
        const r = replicas[h.replica]!;
        if (r.state === 'up' || r.state === 'frozen') enqueue(r, undefined, ev.n, false);
        at(now + exponential(rng, 1000 / h.ratePerS!), Ev.HogArrival, ev.n);
        break;
      }
    }
  };
  while (queue.length > 0 && queue.peek()!.t <= end) handle(queue.pop()!);

  while (nextCount * bucketMs < end) replicaCount[nextCount++] = liveCount();

  const buckets = Math.ceil(end / bucketMs);
  const perBucket = (series: number[]) => Array.from({ length: buckets }, (_, b) => (series[b] ?? 0) / Math.min(bucketMs, end - b * bucketMs));
  const total = (series: number[]) => series.slice(0, buckets).reduce((a, b) => a + (b ?? 0), 0);
  const windowMs = end - warmupMs;
  const slow = summarize(slowHistogram);
  return {
    seed,
    policy: config.policy,
    simulatedMs: end,
    windowMs,
    counts: { sent, completed, ok, failed, retried, timeouts, events },
    throughput: (completed * 1000) / windowMs,
    latency: summarize(histogram),
    slow: { count: slow.count, medianMs: slow.p50, maxMs: slow.max },
    replicas: replicas.map((r) => ({
      name: r.name,
      served: r.served,
      hogServed: r.hogServed,
      utilization: total(r.busy) / end,
      meanQueue: total(r.occupancy) / end,
      cut: r.cut,
      ...(r.inFlightAtFault !== undefined ? { inFlightAtFault: r.inFlightAtFault } : {}),
    })),
    series: { bucketMs, utilization: replicas.map((r) => perBucket(r.busy)), queue: replicas.map((r) => perBucket(r.occupancy)), replicas: replicaCount.slice(0, buckets) },
    ...(config.timeline
      ? {
          timeline: Array.from({ length: Math.ceil(end / 1000) }, (_, s) => {
            const x = seconds[s];
            const sum = x ? summarize(x.h) : undefined;
            return { second: s, completed: x?.completed ?? 0, ok2xx: x?.ok2xx ?? 0, non2xx: x?.non2xx ?? 0, errors: 0, p99: sum?.p99 ?? 0, max: sum?.max ?? 0 };
          }),
        }
      : {}),
    ...(config.autoscale ? { autoscale: decisions } : {}),
  };
}

/** Throws a RangeError naming the first setting that makes no sense. */
export function validate(c: SimConfig): void {
  const bad = (what: string) => {
    throw new RangeError(what);
  };
  if (!Number.isInteger(c.replicas) || c.replicas < 1) bad(`replicas must be a whole number ≥ 1; got ${c.replicas}`);
  if (c.seed !== undefined && (!Number.isInteger(c.seed) || c.seed < -(2 ** 31) || c.seed >= 2 ** 31)) bad(`seed must be a 32-bit whole number; got ${c.seed}`);
  if (c.autoscale) validateHpaConfig(c.autoscale.hpa);
  if (!(c.policy in PICKERS)) bad(`unknown policy '${c.policy}'`);
  if (!(c.durationMs > 0) || !Number.isFinite(c.durationMs)) bad(`durationMs must be > 0; got ${c.durationMs}`);
  if ((c.warmupMs ?? 0) < 0 || (c.warmupMs ?? 0) >= c.durationMs) bad(`warmupMs must be in [0, durationMs); got ${c.warmupMs}`);
  if (c.clients.kind === 'open' && !(c.clients.ratePerS > 0)) bad(`an open loop needs ratePerS > 0; got ${c.clients.ratePerS}`);
  if (c.clients.kind === 'closed' && (!Number.isInteger(c.clients.count) || c.clients.count < 1)) bad(`a closed loop needs count ≥ 1; got ${c.clients.count}`);
  if ((c.staleMs ?? 0) < 0) bad(`staleMs must be ≥ 0; got ${c.staleMs}`);
  if ((c.bucketMs ?? 1000) <= 0) bad(`bucketMs must be > 0; got ${c.bucketMs}`);
  if (c.pool && (!Number.isInteger(c.pool.threads) || c.pool.threads < 1)) bad(`a pool needs threads ≥ 1; got ${c.pool.threads}`);
  if (c.pool && c.loop === 'turns') bad('loop \'turns\' has no thread pool model: use the default fifo loop with a pool');
  for (const h of c.hogs ?? []) {
    if (!Number.isInteger(h.replica) || h.replica < 0 || h.replica >= c.replicas) bad(`a hog's replica must be 0..${c.replicas - 1}; got ${h.replica}`);
    if (!h.connections && !h.ratePerS) bad('a hog needs connections or ratePerS');
  }
  for (const e of c.events ?? []) {
    if (!(e.atMs >= 0)) bad(`an event's atMs must be ≥ 0; got ${e.atMs}`);
    if (e.action !== 'add' && e.action !== 'remove' && (e.replica === undefined || !Number.isInteger(e.replica) || e.replica < 0 || e.replica >= c.replicas)) {
      bad(`a ${e.action} event needs a replica in 0..${c.replicas - 1}; got ${e.replica}`);
    }
  }
  if (c.autoscale && c.autoscale.syncMs % (c.bucketMs ?? 1000) !== 0) bad('autoscale.syncMs must be a multiple of bucketMs (utilization is read from the buckets)');
}
