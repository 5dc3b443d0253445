/**
 * What a simulation's world is made of: its events, the requests and the jobs they become on a
 * replica, and the replicas with their states (starting, up, frozen, draining, dead) and what each
 * state accepts. Types and pure predicates; sim/world.ts holds the state that changes.
 */
import type { Candidate } from '../core/choose.ts';
import type { FailureKind } from '../core/failover.ts';

export const enum Ev {
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
  UserTimeout,
}

export interface SimEvent {
  t: number;
  seq: number;
  type: Ev;
  job?: Job;
  req?: Request;
  n: number;
  epoch: number;
}

/** A client's request, across its tries. */
export interface Request {
  sentAt: number;
  client: number; // -1: open loop
  tried: number[];
  lastKind: FailureKind | undefined;
  /** ip-hash's key: the client's network (undefined under the other policies). */
  key: string | undefined;
  /** With SimConfig.users: the user this request is an attempt of. */
  user?: User;
  /** The user gave up on this attempt (its timeout came first); the replica still finishes it. */
  gaveUp?: boolean;
  /** The attempt's user has its answer: its timeout does nothing. */
  answered?: boolean;
  /** How the breaker let this attempt through: as one of many (closed) or as its half-open trial. */
  through?: 'closed' | 'trial';
}

/** An open-loop user (SimConfig.users): due at `dueAt`, with `attempts` sent so far. */
export interface User {
  dueAt: number;
  attempts: number;
}

/** One try (or one hog request) on one replica. */
export interface Job {
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

/**
 * A replica's life, one state at a time (sim/replica.ts moves it):
 *   starting → up                      (ready)
 *   up ⇄ frozen                        (freeze, thaw)
 *   up → draining → dead                (stop: the listener closes, what it holds finishes)
 *   frozen → frozen-stopping → draining (a SIGTERM while frozen acts once it is thawed)
 *   draining ⇄ frozen-draining          (freeze, thaw: the listener stays closed)
 *   any → dead                          (kill)
 * `down` (Candidate's) is separate: taken out of the balancer's rotation (retired).
 */
export type ReplicaState = 'starting' | 'up' | 'frozen' | 'frozen-stopping' | 'frozen-draining' | 'draining' | 'dead';

export interface Replica extends Candidate {
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
  readyAt?: number;
  served: number;
  hogServed: number;
  cut: number;
  inFlightAtFault?: number;
  busy: number[];
  occupancy: number[];
}

/** Frozen, in any of its three forms: nothing on it progresses. */
export const isFrozen = (r: Replica): boolean =>
  r.state === 'frozen' || r.state === 'frozen-stopping' || r.state === 'frozen-draining';

/**
 * The one test of "can it take new work": its listener accepts a new connection (a frozen
 * process's kernel still queues connections; a draining or closed one refuses them).
 */
export const acceptsConnections = (r: Replica): boolean =>
  r.state === 'up' || r.state === 'frozen' || r.state === 'frozen-stopping';

/** A connection it already has (a hog's) gets its next request served: it has not begun to drain. */
export const servesOpenConnections = (r: Replica): boolean => r.state === 'up' || isFrozen(r);

/** What a refused connection costs the balancer before it can try elsewhere, ms (a loopback connect and its reset). */
export const REFUSED_MS = 0.1;
