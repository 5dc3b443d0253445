/**
 * The simulator's public types: what a simulation is told (SimConfig) and what it reports
 * (SimResult). sim/engine.ts runs one; the scenarios and the Traffic Lab build these.
 * No Node.js APIs.
 */
import type { HpaConfig, HpaReason } from '../core/hpa.ts';
import { POLICIES } from '../core/policies.ts';
import type { LatencySummary } from '../results/report/latency.ts';
import type { Dist } from './dist.ts';

/**
 * The policies the simulator runs: the four load-aware ones, and ip-hash (sticky by the client's
 * address, as nginx's ip_hash and the kit's balancer do). The cookie policy needs sessions, which
 * the simulated clients do not keep.
 */
export const SIM_POLICIES = [...POLICIES, 'ip-hash'] as const;
export type SimPolicy = (typeof SIM_POLICIES)[number];

type ClientModel =
  | { kind: 'open'; ratePerS: number; phases?: RatePhase[] }
  | { kind: 'closed'; count: number; think?: Dist };

/** From `atMs` on (until the next phase), open-loop arrivals come at `ratePerS` instead. */
interface RatePhase {
  atMs: number;
  ratePerS: number;
}

/**
 * Open-loop users who give up and try again, as lesson 11's do (measure/lib/overload/users.ts):
 * each waits at most `timeoutMs` for an attempt, then tries again at once, up to `retries` more
 * times, and never after the load has ended. The replica is not told: it finishes the attempt's
 * work for nobody. With `breaker`, every attempt goes through a circuit breaker that behaves as
 * cockatiel's ConsecutiveBreaker with a constant halfOpenAfter.
 */
export interface UsersConfig {
  timeoutMs: number;
  retries: number;
  breaker?: { consecutive: number; halfOpenAfterMs: number };
  /** The width of the users' timeline buckets, ms (by the time a user was due). */
  bucketMs: number;
}

/** A stream of requests sent straight to one replica (not through the balancer), like the lab's hog. */
interface Hog {
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
  policy: SimPolicy;
  /**
   * For ip-hash: how many /24 networks the clients' addresses come from (ip_hash keys on the first
   * three octets). Default 1, as on loopback, where every client is 127.0.0.1 and ip-hash sends
   * them all to one replica. A closed-loop client i is on network i mod n; an open-loop request
   * comes from one of the n at random.
   */
  clientNetworks?: number;
  /** The balancer sees each replica's in-flight count as of the last refresh, every `staleMs` ms; 0 = live. */
  staleMs?: number;
  clients: ClientModel;
  /** The open loop's requests are users who time out and retry (see UsersConfig); open loop only. */
  users?: UsersConfig;
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

interface ReplicaReport {
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
  policy: SimPolicy;
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
  timeline?: {
    second: number;
    completed: number;
    ok2xx: number;
    non2xx: number;
    errors: number;
    p99: number;
    max: number;
  }[];
  autoscale?: { atMs: number; current: number; desired: number; reason: HpaReason; averageUtilization?: number }[];
  /** With config.users: what became of the users (from the start, whatever warmupMs says). */
  users?: UsersReport;
}

/** One bucket of the users' timeline: users by when they were due, attempts by when they were sent. */
export interface UsersBucket {
  users: number;
  /** Of those users, the ones answered 200 by any attempt. */
  good: number;
  attempts: number;
}

export interface UsersReport {
  users: number;
  attempts: number;
  good: number;
  /** Users whose every attempt ran out of time. */
  timedOut: number;
  /** Users the breaker refused before an attempt was sent. */
  refusedByBreaker: number;
  /** Users answered with a failure (a 5xx from the balancer). */
  failed: number;
  /** Attempts the replicas finished, and of those the ones whose user had given up on them. */
  finished: number;
  wasted: number;
  bucketMs: number;
  buckets: UsersBucket[];
}
