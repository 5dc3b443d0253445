/**
 * A closed-loop workload of virtual users, like a k6 script with a fixed number of VUs (lesson 8).
 * Each user loops until the run's time is up: one expensive sign-up (`POST /signup`, scrypt on the
 * worker's thread pool), then three rounds of a token refresh (`POST /token/refresh`) and 10 light
 * queries (`GET /books?q=`), then a think time. A user sends its next request only after the
 * previous one was answered, so the offered load depends on how fast the server answers: that is
 * what "closed loop" means, and why latency, not errors, is what grows when the server is short of
 * CPU.
 *
 * autocannon cannot pause between requests (no think time), so the loop is written here, on
 * undici (one Client, i.e. one connection, per user per iteration: a new connection is what lets
 * node:cluster's round robin give a new worker its share; a kept-alive one stays on its worker, as
 * `keepAlive` shows).
 * Latencies are recorded in HDR histograms (latency.ts), per second and in total.
 *
 * Bounds: at most 120 s, at most MAX_ITERATIONS per user, every request times out after
 * `requestTimeoutMs`. Only loopback URLs are accepted (KIT_ERR_USAGE otherwise).
 */
import { setMaxListeners } from 'node:events';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'undici';
import { KitError } from '../../../lib/errors.ts';
import { createLatencyHistogram, recordMs, summarize, type LatencyHistogram } from '../../../results/report/latency.ts';
import { assertLoopback } from './probe.ts';
import { markLoad } from './windows.ts';
import {
  EXPECTED_STATUS,
  REQUEST_TYPES,
  type RequestType,
  type UsersResult,
  type UsersSecond,
} from '../../../results/report/users.ts';

/** Rounds per iteration, and queries per round (the script: 3 × (refresh + 10 queries)). */
const ROUNDS = 3;
const QUERIES_PER_ROUND = 10;
/** Requests in one complete iteration. */
export const REQUESTS_PER_ITERATION = 1 + ROUNDS * (1 + QUERIES_PER_ROUND);
const MAX_ITERATIONS = 10_000;
/** The longest pause, in means: the exponential's rare long tail is cut here. */
export const THINK_CAP = 5;

/**
 * One think pause, ms: exponential with mean `meanMs`, cut at THINK_CAP means (the mean falls by
 * 0.7 %), as workload designs commonly model think time ("Performance Workload Design", Faban).
 * Not a narrow pause: with pauses uniform in [0.5, 1.5] × the mean, users that one saturated worker
 * served side by side finished together and came back together, in waves, and that worker's steady
 * throughput swung from 5.1 to 9.7 iterations/s between runs (8.2 to 8.8 with exponential pauses).
 */
export function thinkPauseMs(meanMs: number, random = Math.random()): number {
  return Math.min(THINK_CAP, -Math.log1p(-random)) * meanMs;
}
const WORDS = ['river', 'night', 'garden', 'iron', 'stone', 'winter', 'glass', 'north'];

interface UsersOptions {
  /** Base URL of the server, e.g. http://127.0.0.1:3001 (loopback only). */
  url: string;
  users: number;
  /** How long users keep starting iterations, s (0 < d ≤ 120). An iteration under way is finished. */
  durationS: number;
  /** Mean think time after each iteration, ms (each pause drawn by thinkPauseMs). */
  thinkMs: number;
  /** Also summarize the requests completed from this second of the run on (the settled part). */
  steadyFromS?: number;
  /** Per-request timeout, ms (default 10 000). */
  requestTimeoutMs?: number;
  /** Called once per elapsed second with that second's sample (for progress). */
  onSecond?: (s: UsersSecond) => void;
  /**
   * One connection per user for the whole run instead of one per iteration. It is reopened only
   * after a pause longer than about 3 s: Node's http.Server announces its 5 s keepAliveTimeout
   * (`Keep-Alive: timeout=5`), and undici closes an idle connection 2 s before that
   * (keepAliveTimeoutThreshold), so that no request races the server's close. node:cluster can
   * give a new worker only those users (lesson 8, exercise 3).
   */
  keepAlive?: boolean;
}

/** A running workload: stop it early, or wait for its result. */
interface RunningUsers {
  stop(): void;
  result: Promise<UsersResult>;
}

/** What a run recorded: latencies in total, settled, per request type and per second; counts; failures. */
class UsersRecord {
  readonly total = createLatencyHistogram();
  readonly steady = createLatencyHistogram();
  readonly byType = Object.fromEntries(REQUEST_TYPES.map((t) => [t, createLatencyHistogram()])) as Record<
    RequestType,
    LatencyHistogram
  >;
  readonly steadyByType = Object.fromEntries(REQUEST_TYPES.map((t) => [t, createLatencyHistogram()])) as Record<
    RequestType,
    LatencyHistogram
  >;
  readonly counts = Object.fromEntries(REQUEST_TYPES.map((t) => [t, { ok: 0, failed: 0 }])) as UsersResult['counts'];
  readonly seconds: { h: LatencyHistogram; completed: number; errors: number }[] = [];
  readonly failures: string[] = [];
  iterations = 0;
  #reported = 0;

  constructor(
    readonly started: number,
    readonly steadyFrom: number,
    readonly endAt: number,
    readonly onSecond: ((s: UsersSecond) => void) | undefined,
  ) {}

  /** The bucket of the second `at` falls in; reports every second that has ended. */
  bucket(at: number) {
    const i = Math.floor((at - this.started) / 1000);
    while (this.seconds.length <= i) this.seconds.push({ h: createLatencyHistogram(), completed: 0, errors: 0 });
    while (this.onSecond && this.#reported < i) this.onSecond(this.sample(this.#reported++));
    return this.seconds[i]!;
  }

  sample(i: number): UsersSecond {
    const b = this.seconds[i]!;
    const l = b.completed ? summarize(b.h) : undefined;
    return { second: i, completed: b.completed, errors: b.errors, p95: l?.p95 ?? 0, max: l?.max ?? 0 };
  }

  ok(type: RequestType, ms: number, now: number): void {
    recordMs(this.total, ms);
    recordMs(this.byType[type], ms);
    if (now >= this.steadyFrom && now < this.endAt) {
      recordMs(this.steady, ms);
      recordMs(this.steadyByType[type], ms);
    }
    const b = this.bucket(now);
    recordMs(b.h, ms);
    b.completed++;
    this.counts[type].ok++;
  }

  fail(type: RequestType, why: string): void {
    this.counts[type].failed++;
    this.bucket(performance.now()).errors++;
    if (this.failures.length < 10) this.failures.push(`${type}: ${why}`);
  }

  result(opts: UsersOptions): UsersResult {
    const now = performance.now();
    this.bucket(now);
    const sum = (k: 'ok' | 'failed') => REQUEST_TYPES.reduce((n, t) => n + this.counts[t][k], 0);
    return {
      users: opts.users,
      thinkMs: opts.thinkMs,
      durationS: (now - this.started) / 1000,
      iterations: this.iterations,
      counts: this.counts,
      completed: sum('ok'),
      errors: sum('failed'),
      latency: summarize(this.total),
      steadyLatency: summarize(this.steady),
      latencyByType: Object.fromEntries(
        REQUEST_TYPES.map((t) => [t, summarize(this.byType[t])]),
      ) as UsersResult['latencyByType'],
      steadyByType: Object.fromEntries(
        REQUEST_TYPES.map((t) => [t, summarize(this.steadyByType[t])]),
      ) as UsersResult['steadyByType'],
      timeline: this.seconds.map((_, i) => this.sample(i)),
      failures: this.failures,
    };
  }
}

/** A user's request: JSON body in, JSON body out; undefined when it failed (and was recorded as failed). */
type Call = (
  client: Client,
  type: RequestType,
  method: 'GET' | 'POST',
  path: string,
  token?: string,
  body?: object,
) => Promise<Record<string, unknown> | undefined>;

/**
 * The requests of a run's users, recorded in `rec`: each resolves with the JSON body, or undefined
 * after recording a failure (a wrong status, an error, or no answer within `timeoutMs`, ms).
 */
function requester(rec: UsersRecord, timeoutMs: number): Call {
  return async (client, type, method, path, token, body) => {
    const t0 = performance.now();
    try {
      const res = await client.request({
        method,
        path,
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      const text = await res.body.text();
      const now = performance.now();
      if (res.statusCode !== EXPECTED_STATUS[type]) {
        rec.fail(type, `HTTP ${res.statusCode} ${text.slice(0, 120)}`);
        return undefined;
      }
      rec.ok(type, now - t0, now);
      return JSON.parse(text) as Record<string, unknown>;
    } catch (err) {
      rec.fail(type, (err as Error).message);
      return undefined;
    }
  };
}

/** One iteration of user `id` (its `n`th): a sign-up, then ROUNDS of a token refresh and QUERIES_PER_ROUND searches, until a request fails. */
async function iteration(call: Call, client: Client, id: number, n: number): Promise<void> {
  const signup = await call(client, 'signup', 'POST', '/signup', undefined, { name: `u${id}-${n}` });
  let token = signup?.token as string | undefined;
  for (let r = 0; r < ROUNDS && token; r++) {
    const refreshed = await call(client, 'refresh', 'POST', '/token/refresh', token);
    token = refreshed?.token as string | undefined;
    for (let q = 0; q < QUERIES_PER_ROUND && token; q++) {
      await call(client, 'query', 'GET', `/books?q=${WORDS[(id + n + q) % WORDS.length]}`, token);
    }
  }
}

/** Starts the users at once (each after a random offset within one think time) and returns. */
export function startUsers(opts: UsersOptions): RunningUsers {
  const base = new URL(opts.url);
  assertLoopback(base);
  if (!(opts.durationS > 0 && opts.durationS <= 120))
    throw new KitError('KIT_ERR_USAGE', `a workload lasts from 0 to 120 s; got ${opts.durationS}`);
  if (!(Number.isInteger(opts.users) && opts.users >= 1 && opts.users <= 500))
    throw new KitError('KIT_ERR_USAGE', `users must be a whole number from 1 to 500; got ${opts.users}`);
  const timeoutMs = opts.requestTimeoutMs ?? 10_000;
  const started = performance.now();
  const endAt = started + opts.durationS * 1000;
  const stopper = new AbortController();
  // Each thinking user's sleep listens on the signal; past 10 listeners Node warns of a leak.
  setMaxListeners(opts.users + 1, stopper.signal);
  const rec = new UsersRecord(started, started + (opts.steadyFromS ?? Infinity) * 1000, endAt, opts.onSecond);

  const call = requester(rec, timeoutMs);

  const user = async (id: number) => {
    await sleep(Math.random() * opts.thinkMs, undefined, { signal: stopper.signal }).catch(() => {});
    // undici's own idle timeout (4 s by default) is raised so that the server's Keep-Alive hint, less undici's 2 s margin, decides.
    const open = () =>
      new Client(base.origin, {
        pipelining: 1,
        connectTimeout: timeoutMs,
        ...(opts.keepAlive ? { keepAliveTimeout: 600_000, keepAliveMaxTimeout: 600_000 } : {}),
      });
    const kept = opts.keepAlive ? open() : undefined;
    for (let n = 0; n < MAX_ITERATIONS && performance.now() < endAt && !stopper.signal.aborted; n++) {
      const client = kept ?? open();
      try {
        await iteration(call, client, id, n);
        rec.iterations++;
      } finally {
        if (!kept) await client.close().catch(() => {});
      }
      // Think, but not past the end: a user whose time is up stops now, not after its pause.
      const think = Math.min(thinkPauseMs(opts.thinkMs), endAt - performance.now());
      if (think > 0) await sleep(think, undefined, { signal: stopper.signal }).catch(() => {});
    }
    await kept?.close().catch(() => {});
  };

  const result = Promise.all(Array.from({ length: opts.users }, (_, i) => user(i))).then(() => rec.result(opts));
  markLoad(result);
  return { stop: () => stopper.abort(), result };
}
