/**
 * The balancer's failover rules, as pure functions (no Node.js APIs, clock passed in), so the
 * kit's balancer, the simulator and the tests share them:
 *
 * Passive health checks (like nginx's max_fails / fail_timeout, ngx_http_upstream_module): a
 * replica that fails `maxFails` times, each failure within `failTimeoutMs` of the one before,
 * rests for `failTimeoutMs`; then exactly one request probes it (the others keep skipping it until
 * that probe answers), and a probe that succeeds puts it back. A failure is a connection that
 * could not be made, a connection reset before any response byte, or a response timeout; an HTTP
 * error status is an answer, not a failure. `maxFails` 0 turns the checks off. A lone replica is
 * never taken out (nginx ignores max_fails for a single server), and when every replica rests the
 * balancer tries them all again rather than refuse everyone (nginx does the same: "all peers
 * failed, mark them as live for quick recovery", ngx_http_upstream_round_robin.c).
 *
 * Retries (like nginx's proxy_next_upstream error timeout): a request is tried on another replica
 * when connecting failed (whatever its method: nothing reached the replica), or when the connection
 * was reset or timed out before any response byte, but then only for idempotent methods (RFC 9110
 * §9.2.2). A POST that may have reached a replica is never sent again: it could create a second
 * loan. Since nginx 1.9.13 nginx follows the same rule for non-idempotent requests.
 */

/**
 * Failover defaults of both balancers. max_fails 2 and fail_timeout 5 s are the lesson's (nginx's
 * own defaults are 1 and 10 s); connect 2 s is short for a lab (nginx: proxy_connect_timeout 60 s);
 * the response timeout, 10 s, is nginx's proxy_read_timeout (60 s) shortened the same way and still
 * longer than any lesson route (at most 10 s by design, MAX_MS in servers/replica.ts).
 */
export const FAILOVER_DEFAULTS = {
  retries: 2,
  maxFails: 2,
  failTimeoutMs: 5000,
  connectTimeoutMs: 2000,
  responseTimeoutMs: 10_000,
} as const;

/** What went wrong with one try. */
export type FailureKind = 'connect' | 'connect-timeout' | 'reset' | 'timeout';

export interface HealthRules {
  /** Failures that make a replica rest; 0 disables passive health checks. */
  maxFails: number;
  /** The window the failures must fall in, and how long the replica then rests, ms. */
  failTimeoutMs: number;
}

/** One replica's passive-health state. */
export interface HealthState {
  /** Failures so far in the current run of failures. */
  fails: number;
  /** When the last failure happened, ms (the injected clock's). */
  lastFailAt: number;
  /** Rests until this time, ms; 0 = not resting. */
  restUntil: number;
  /** A probe request is out after a rest (only one at a time). */
  probing: boolean;
}

export function newHealth(): HealthState {
  return { fails: 0, lastFailAt: 0, restUntil: 0, probing: false };
}

/**
 * Whether the balancer may send this replica a request now: 'yes', 'probe' (its rest is over: this
 * one request tests it, and it rests again until the probe answers), or 'no'.
 */
export function admission(state: HealthState, rules: HealthRules, now: number): 'yes' | 'probe' | 'no' {
  if (rules.maxFails === 0 || state.fails < rules.maxFails) return 'yes';
  if (state.probing || now < state.restUntil) return 'no';
  return 'probe';
}

/** Marks a probe as sent: other requests skip the replica until it answers. */
export function startProbe(state: HealthState): void {
  state.probing = true;
}

/** Records a failure; returns true when it makes the replica rest. */
export function recordFailure(state: HealthState, rules: HealthRules, now: number): boolean {
  state.probing = false;
  if (rules.maxFails === 0) return false;
  if (state.fails > 0 && now - state.lastFailAt > rules.failTimeoutMs && state.fails < rules.maxFails) state.fails = 0; // an old failure: a new window
  state.fails++;
  state.lastFailAt = now;
  if (state.fails < rules.maxFails) return false;
  state.restUntil = now + rules.failTimeoutMs;
  return true;
}

/**
 * Records an answer. Only the probe's answer puts a resting replica back: a request sent before
 * the rest began may still answer (a draining replica finishes its work) without the replica
 * taking new connections.
 */
export function recordSuccess(state: HealthState, wasProbe: boolean): void {
  if (!wasProbe) return;
  state.fails = 0;
  state.restUntil = 0;
  state.probing = false;
}

/** Forgets every failure (used when all replicas rest: they all get another chance). */
export function resetHealth(state: HealthState): void {
  Object.assign(state, newHealth());
}

/** Idempotent request methods (RFC 9110 §9.2.2): sending one twice has the effect of sending it once. */
const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE']);

export function isIdempotent(method: string): boolean {
  return IDEMPOTENT.has(method.toUpperCase());
}

/**
 * How many tries one request may have: the first, then up to `retries` more, each on a replica not
 * tried yet, so never more than there are replicas (nginx: proxy_next_upstream_tries counts the
 * first try too, and a request is tried on each server at most once).
 */
export function triesAllowed(retries: number, replicas: number): number {
  return Math.min(retries + 1, replicas);
}

/** May a request with `method` that failed with `kind` go to another replica? */
export function mayRetry(method: string, kind: FailureKind): boolean {
  return kind === 'connect' || kind === 'connect-timeout' || isIdempotent(method);
}

/** Error codes that mean the connection was never made, so the request never left the balancer. */
const CONNECT_CODES = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL', 'ENOTFOUND']);

/**
 * Classifies a failed try from its error code: 'connect' when no connection was made,
 * 'connect-timeout' when making it took too long (undici's own connect timer); else 'reset' (the
 * request may have reached the replica). The caller's own timers are the caller's to tell apart.
 */
export function classifyError(code: string | undefined): FailureKind {
  if (code === 'UND_ERR_CONNECT_TIMEOUT') return 'connect-timeout';
  return code !== undefined && CONNECT_CODES.has(code) ? 'connect' : 'reset';
}

/** HTTP status the client gets when the last try failed this way (as nginx: 504 for either timeout, else 502). */
export function failureStatus(kind: FailureKind): 502 | 504 {
  return kind === 'timeout' || kind === 'connect-timeout' ? 504 : 502;
}

/** One try of a request, for the retry log. */
export interface Attempt {
  replica: string;
  /** The replica's host:port (for the access log); the retry line names the replica only. */
  addr?: string;
  /** The answer's status, or 502/504 for a failed try. */
  status: number;
  ms: number;
  /** The error code of a failed try. */
  code?: string;
}

/**
 * The retry log line both balancers print for a request tried more than once:
 *   retry: GET /fast app3 502 0.4ms ECONNREFUSED -> app1 200 1.0ms
 */
export function retryLine(method: string, path: string, attempts: readonly Attempt[]): string {
  const tries = attempts.map((a) => `${a.replica} ${a.status} ${a.ms.toFixed(1)}ms${a.code ? ` ${a.code}` : ''}`);
  return `retry: ${method} ${path} ${tries.join(' -> ')}`;
}

/** Parses a retry line back into its tries (undefined for any other line). */
export function parseRetryLine(text: string): { method: string; path: string; attempts: Attempt[] } | undefined {
  const m = /^retry: (\S+) (\S+) (.*)$/.exec(text);
  if (!m) return undefined;
  const attempts = m[3]!.split(' -> ').map((t) => {
    const [replica, status, ms, code] = t.split(' ');
    return { replica: replica!, status: Number(status), ms: Number.parseFloat(ms ?? '0'), ...(code ? { code } : {}) };
  });
  return { method: m[1]!, path: m[2]!, attempts };
}
