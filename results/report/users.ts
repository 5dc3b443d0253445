/** What a run of virtual users (measure/lib/load/users.ts) reports: lesson 8's workload, in numbers. */
import type { LatencySummary } from './latency.ts';

export const REQUEST_TYPES = ['signup', 'refresh', 'query'] as const;
export type RequestType = (typeof REQUEST_TYPES)[number];

/** The status each request type must answer with; anything else counts as a failure. */
export const EXPECTED_STATUS: Record<RequestType, number> = { signup: 201, refresh: 200, query: 200 };
/** One second of the run (second 0 starts with the run). */
export interface UsersSecond {
  second: number;
  completed: number;
  /** Requests that failed: a wrong status, a timeout, a connection error. */
  errors: number;
  /** ms, over the requests completed in this second; 0 when none. */
  p95: number;
  max: number;
}

export interface UsersResult {
  users: number;
  thinkMs: number;
  /** Wall time until the last user finished, s. */
  durationS: number;
  iterations: number;
  /** Per request type: answered with the expected status, and failed. */
  counts: Record<RequestType, { ok: number; failed: number }>;
  completed: number;
  errors: number;
  latency: LatencySummary;
  /** Requests completed from `steadyFromS` until `durationS` (all zero without steadyFromS). */
  steadyLatency: LatencySummary;
  /** Per type (the sign-up is the slow one). */
  latencyByType: Record<RequestType, LatencySummary>;
  /** Per type, the requests completed in the steady part (as steadyLatency). */
  steadyByType: Record<RequestType, LatencySummary>;
  timeline: UsersSecond[];
  /** The first few failures, for the report. */
  failures: string[];
}
