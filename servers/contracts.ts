/**
 * The JSON bodies the lesson servers answer, as the harness and the tests read them. Each server
 * builds its body with `satisfies` one of these types, so a field renamed on one side fails the
 * type check on the other (measure/lib/load/probe.ts: `probeOk<ReplicaStats>(url)`). Types only: this
 * file holds no code.
 */
import type { ThrottleStats } from './lib/cpu/quota.ts';
import type { WriteStats } from './lib/state/users-db.ts';
import type { StageEvent } from './lib/stages/stamps.ts';

/** Any error answer: what went wrong, the flag or field at fault, and the methods a route allows. */
export interface ErrorBody {
  error: string;
  field?: string;
  allow?: string;
}

/** servers/loan.ts GET /stats: the event loop and the thread pool since the last POST /stats/reset. */
export interface LoanServiceStats {
  pid: number;
  /** The window these figures cover, ms. */
  windowMs: number;
  /** The event loop's delay over the window (perf_hooks' monitor), ms, less its resolution. */
  eventLoopDelay: { maxMs: number; p99Ms: number; meanMs: number; resolutionMs: number };
  /** Event loop utilization over the window, 0 to 1. */
  eventLoopUtilization: number;
  /** UV_THREADPOOL_SIZE, or libuv's default of 4. */
  threadPoolSize: number;
  /** Pooled scrypt checks started and not yet answered. */
  pooledInFlight: number;
  /** The heavy request's scrypt cost, as --heavy-cost takes it. */
  heavyCost: string;
}

/**
 * servers/loan.ts GET /member/verify-*: whose password was checked and whether its key was the
 * stored one (200) or not (401), where the hash ran and how long it took, ms.
 */
export interface VerifyAnswer {
  route: string;
  member: string;
  verified: boolean;
  pid: number;
  /** `yours`: the check in the file given with --verify (lesson 3's exercise), wherever it hashes. */
  hashedOn: 'event-loop' | 'thread-pool' | 'yours';
  ms: number;
}

/** servers/loan.ts GET /books: one book. */
export interface Book {
  id: string;
  title: string;
  author: string;
  available: number;
}

/** A cluster worker's GET /status (and its blocking route's answer): its pid and its own counter. */
export interface WorkerStatus {
  pid: number;
  loanCounter: number;
}

/** Who answered: a replica by its name, a cluster worker by its pid. */
type Identity = { replica: string } | { pid: number };

/** GET /loans on a replica or a worker: the loan counter as this process's store holds it. */
export type LoanCount = Identity & { loans: number };

/** GET /whoami through a balancer (the replica's answer). */
export interface Whoami {
  replica: string;
  pid: number;
}

/** POST /login and GET /me: the member the session belongs to. */
export type MemberAnswer = Identity & { member: string };

/** A user of lesson 5's shared users table (POST /users, GET /users/:id). */
export interface UserRow {
  id: number;
  name: string;
  createdBy: string;
}

/** POST /signup and POST /token (autoscale's workload): a signed session token. */
export type TokenAnswer = Identity & { token: string; member?: string };

/** GET /books/search (autoscale's workload): how many titles matched, and the first ten. */
export type SearchAnswer = Identity & { matches: number; titles: string[] };

/** servers/replica.ts GET /__replica/stats. */
export interface ReplicaStats {
  replica: string;
  pid: number;
  /** Requests served per known route (this route not counted). */
  served: Record<string, number>;
  /** Connections accepted so far, this request's own included. */
  connections: number;
  /** process.cpuUsage() user + system, µs. */
  cpuUs: number;
  /** The event loop's delay over the last second, ms. */
  loopDelayMs: { p99: number; max: number };
  /** With --db: the writes and their commits. */
  db?: WriteStats;
  /** With --cpu-quota: how it is enforced and what it has throttled. */
  quota?: { mode: 'cgroup' | 'throttle'; cores: number; throttle: Partial<ThrottleStats> | undefined };
}

/** One upstream in the balancer's GET /__lb/stats. */
export interface UpstreamStats {
  name: string;
  addr: string;
  /** Taken out by POST /__lb/down. */
  down: boolean;
  /** Resting after max_fails failures (passive health check). */
  resting: boolean;
  requests: number;
  inFlight: number;
  failures: number;
}

/** servers/balancer.ts GET /__lb/stats. */
export interface BalancerStats {
  policy: string;
  twoChoices: 'distinct' | 'with-replacement';
  keepAlive: boolean;
  failover: {
    retries: number;
    maxFails: number;
    failTimeoutMs: number;
    connectTimeoutMs: number;
    responseTimeoutMs: number;
  };
  /** Requests retried on another upstream so far. */
  retried: number;
  upstreams: UpstreamStats[];
}

/** servers/balancer.ts POST /__lb/add: the upstream added and every upstream's name. */
export interface UpstreamAdded {
  upstream: string;
  addr: string;
  upstreams: string[];
}

/** servers/balancer.ts GET /__lb/stages/:sid: the balancer's stamps for one request. */
export interface ProxyStages {
  id: string;
  events: StageEvent[];
}
