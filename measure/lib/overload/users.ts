/**
 * Lesson 11's users: an open loop (the kit's schedule, measure/lib/load/../load/open-loop.ts) whose every
 * request is a user who waits at most a timeout for each attempt, may try again at once when it
 * runs out (up to `retries` more times), and may go through a circuit breaker (cockatiel's) that,
 * once attempts keep failing, refuses every attempt for a while without sending it. Users arrive on
 * schedule whatever the service does; their retries come on top. Bounded: loopback only, at most
 * 600 s of schedule, a cap on attempts in flight.
 *
 * Once the schedule is over no attempt is sent again, so the run ends within one timeout of it.
 *
 * What it counts, per user: answered 200 (good), refused 503 (shed), given up on (every attempt ran
 * out of time, or the breaker refused), and per attempt: when it was sent, so that the load offered
 * to the service can be set beside the load the users made.
 */
import { performance } from 'node:perf_hooks';
import {
  BrokenCircuitError,
  circuitBreaker,
  ConsecutiveBreaker,
  handleAll,
  type CircuitBreakerPolicy,
} from 'cockatiel';
import { Pool } from 'undici';
import { createLatencyHistogram, recordMs, summarize, type LatencySummary } from '../../../results/report/latency.ts';
import { runSchedule } from '../load/open-loop.ts';
import { checkUsers, dueTimes, type Phase } from './schedule.ts';
import { markLoad } from '../load/windows.ts';
import { BREAKER } from '../../../results/overload/spike.ts';

export interface UsersOptions {
  /** The service's origin, on a loopback address. */
  origin: string;
  /** The path of the i-th user's request (0-based). */
  path(i: number): string;
  phases: Phase[];
  /**
   * The service's capacity, req/s: read before each user is scheduled (a pass gives a constant, the
   * worker's speed as it began). Users still come on schedule whatever the service answers.
   */
  capacity(): number;
  /** How long a user waits for each attempt before giving up on it, ms (50 to 60,000). */
  timeoutMs: number;
  /** Attempts after the first, each sent at once when the one before ran out of time (0 to 5). */
  retries: number;
  /** Every attempt through a circuit breaker (see BREAKER). */
  breaker?: boolean;
  /** Keep-alive connections (pipelining 1); an attempt past them waits in the generator, and its wait counts. */
  connections?: number;
  /** The width of the timeline's buckets, ms. */
  bucketMs?: number;
}

/** One bucket of the timeline: users by when they were due, attempts by when they were sent. */
interface Bucket {
  users: number;
  /** Of those users, the ones answered 200, by any attempt. */
  good: number;
  attempts: number;
}

export interface UsersResult {
  /** The schedule's length, s. */
  durationS: number;
  users: number;
  attempts: number;
  good: number;
  shed: number;
  /** 503s that carried a Retry-After of a whole number of seconds, 1 or more. */
  shedWithRetryAfter: number;
  /** Users whose every attempt ran out of time. */
  timedOut: number;
  /** Users the breaker refused (BrokenCircuitError) before an attempt was sent. */
  refusedByBreaker: number;
  /** Users answered with another status, or whose connection failed. */
  otherErrors: number;
  /** Attempts dropped at the in-flight cap (never sent). */
  dropped: number;
  /** Answers 200 per second of schedule: the users served. */
  goodput: number;
  /** Good answers' latency, from the user's due time to the answer, ms. */
  latency: LatencySummary;
  /** The p99 of good answers by the quarter of the schedule their user was due in, ms. */
  quarterP99Ms: [number, number, number, number];
  buckets: Bucket[];
  bucketMs: number;
  /** How late the generator sent users after their due time, ms. */
  lateness: LatencySummary;
  /** The generator's CPU time over its wall time, in cores. */
  generatorCpu: number;
}

const MAX_IN_FLIGHT = 5000;

type Outcome = 'good' | 'shed' | 'timeout' | 'refused' | 'error';
type Attempt = { status: number; retryAfter?: string };

/** One run of users: its connections, its breaker, and what it has counted so far. */
class UsersRun {
  readonly bucketMs: number;
  readonly durationS: number;
  readonly buckets: Bucket[];
  readonly latency = createLatencyHistogram();
  readonly quarters = [0, 1, 2, 3].map(() => createLatencyHistogram());
  readonly lateness = createLatencyHistogram();
  readonly counts = {
    attempts: 0,
    good: 0,
    shed: 0,
    shedWithRetryAfter: 0,
    timedOut: 0,
    refused: 0,
    errors: 0,
    dropped: 0,
  };
  readonly pool: Pool;
  private readonly policy: CircuitBreakerPolicy | undefined;
  private inFlight = 0;
  start = 0;

  constructor(private readonly o: UsersOptions) {
    this.bucketMs = o.bucketMs ?? 250;
    this.durationS = o.phases.reduce((s, p) => s + p.durationS, 0);
    this.buckets = Array.from({ length: Math.ceil((this.durationS * 1000) / this.bucketMs) + 1 }, () => ({
      users: 0,
      good: 0,
      attempts: 0,
    }));
    this.pool = new Pool(o.origin, { connections: o.connections ?? 512, pipelining: 1 });
    this.policy = o.breaker
      ? circuitBreaker(handleAll, {
          halfOpenAfter: BREAKER.halfOpenAfterMs,
          breaker: new ConsecutiveBreaker(BREAKER.consecutive),
        })
      : undefined;
  }

  /** The bucket of a time, ms from the start. */
  bucketAt(ms: number): Bucket {
    return this.buckets[Math.min(this.buckets.length - 1, Math.max(0, Math.floor(ms / this.bucketMs)))]!;
  }

  /** One attempt: its status and Retry-After; TimedOut when it ran out of time. */
  private async attempt(path: string): Promise<Attempt> {
    if (this.inFlight >= MAX_IN_FLIGHT) {
      this.counts.dropped++;
      throw new Error('dropped at the cap');
    }
    this.counts.attempts++;
    this.bucketAt(performance.now() - this.start).attempts++;
    this.inFlight++;
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), this.o.timeoutMs);
    try {
      const r = await this.pool.request({ path, method: 'GET', signal: abort.signal });
      await r.body.text();
      const retryAfter = r.headers['retry-after'];
      return { status: r.statusCode, ...(typeof retryAfter === 'string' ? { retryAfter } : {}) };
    } catch (err) {
      // A timeout is the breaker's failure; an answer of any status is its success.
      if (abort.signal.aborted) throw new TimedOut();
      throw err;
    } finally {
      clearTimeout(timer);
      this.inFlight--;
    }
  }

  /** A user's attempts until answered, refused, or out of attempts; what came of them. */
  private async tries(i: number, dueAt: number): Promise<Outcome> {
    for (let n = 0; n <= this.o.retries; n++) {
      // Once the schedule is over, users stop trying again: the run ends with the last attempt in flight.
      if (n > 0 && performance.now() - this.start > this.durationS * 1000) break;
      let a: Attempt;
      try {
        const send = () => this.attempt(this.o.path(i));
        a = this.policy ? await this.policy.execute(send) : await send();
      } catch (err) {
        if (err instanceof TimedOut) continue;
        return err instanceof BrokenCircuitError ? 'refused' : 'error';
      }
      if (a.status === 200) {
        const ms = performance.now() - dueAt;
        recordMs(this.latency, ms);
        recordMs(this.quarters[Math.min(3, Math.floor(((dueAt - this.start) / (this.durationS * 1000)) * 4))]!, ms);
        return 'good';
      }
      if (a.status !== 503) return 'error';
      if (a.retryAfter !== undefined && /^[1-9]\d*$/.test(a.retryAfter.trim())) this.counts.shedWithRetryAfter++;
      return 'shed';
    }
    return 'timeout';
  }

  /** A user due at `dueAt` (ms on performance.now()), counted in its bucket. */
  async user(i: number, dueAt: number): Promise<void> {
    const b = this.bucketAt(dueAt - this.start);
    b.users++;
    const outcome = await this.tries(i, dueAt);
    if (outcome === 'good') {
      this.counts.good++;
      b.good++;
    } else if (outcome === 'shed') this.counts.shed++;
    else if (outcome === 'timeout') this.counts.timedOut++;
    else if (outcome === 'refused') this.counts.refused++;
    else this.counts.errors++;
  }
}

/** Runs the users to the end of their schedule and of their last attempt. */
export async function runUsers(o: UsersOptions): Promise<UsersResult> {
  checkUsers(o);
  const run = new UsersRun(o);
  const users: Promise<void>[] = [];
  const cpuBefore = process.cpuUsage();
  run.start = performance.now();
  let i = 0;
  const running = (async () => {
    await runSchedule(dueTimes(o.phases, o.capacity), run.start, (at) => {
      recordMs(run.lateness, performance.now() - at);
      users.push(run.user(i++, at));
    });
    await Promise.all(users);
  })();
  markLoad(running);
  try {
    await running;
  } finally {
    await run.pool.close().catch(() => {});
  }
  const wallS = (performance.now() - run.start) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const c = run.counts;
  return {
    durationS: run.durationS,
    users: i,
    attempts: c.attempts,
    good: c.good,
    shed: c.shed,
    shedWithRetryAfter: c.shedWithRetryAfter,
    timedOut: c.timedOut,
    refusedByBreaker: c.refused,
    otherErrors: c.errors,
    dropped: c.dropped,
    goodput: c.good / run.durationS,
    latency: summarize(run.latency),
    quarterP99Ms: run.quarters.map((q) => summarize(q).p99) as [number, number, number, number],
    buckets: run.buckets,
    bucketMs: run.bucketMs,
    lateness: summarize(run.lateness),
    generatorCpu: (cpu.user + cpu.system) / 1e6 / wallS,
  };
}

/** An attempt that ran out of time: the breaker counts it as a failure, the user tries again. */
class TimedOut extends Error {
  constructor() {
    super('timed out');
  }
}
