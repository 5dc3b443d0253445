/**
 * An open-loop load on undici: requests are scheduled at intended times, a fixed interval apart or
 * as Poisson arrivals, and each is sent when its time comes, whatever the server is doing. Its
 * latency runs from the intended time, so a server that stalls is charged for every request that
 * fell due meanwhile, including those still waiting for a free connection in the generator. A
 * closed loop (autocannon) sends nothing while its connections wait, and so records only one
 * sample per connection for the whole stall: coordinated omission (wrk2's README; k6's "open and
 * closed models"). Bounded: loopback targets only, a duration of at most 600 s, and a cap on the
 * requests in flight, past which a due request is not sent but counted.
 *
 * The generator is a process on the same machine, and its own timer can run late: a request sent
 * 40 ms after its time is still timed from its time, so 40 ms of the generator's own delay are
 * charged to the server. So it reports how late it was, and says when that lateness, not the
 * server, set the latency.
 */
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { KitError } from '../../../lib/errors.ts';
import { createLatencyHistogram, recordMs, summarize, type LatencySummary } from '../../../results/report/latency.ts';
import { assertLoopback } from './probe.ts';
import { markLoad } from './windows.ts';
import { exponential, seededRng } from '../../../sim/rng.ts';

interface OpenLoopOptions {
  /** The target, on a loopback address. */
  url: string;
  /** Intended requests per second, 1 to 20,000. */
  rate: number;
  /** How long requests are scheduled for, s (0, 600]: the Traffic Lab's longest live run. */
  durationS: number;
  /** `fixed`: one every 1/rate s; `poisson`: exponential gaps of mean 1/rate s, from `seed`. */
  arrivals?: 'fixed' | 'poisson';
  seed?: number;
  /** Requests in flight (sent or waiting for a connection) past which a due request is dropped. */
  maxInFlight?: number;
  /** Keep-alive connections to the target (pipelining 1): requests past them wait in the generator. */
  connections?: number;
  /**
   * A request unanswered this long after it was written to a connection fails, s. One still waiting
   * for a free connection waits on: that wait is what an open loop measures (maxInFlight bounds it).
   */
  timeoutS?: number;
  /**
   * Where latency starts: `intended` (the default, and the only honest choice); `written`, when the
   * request was written to a connection, is coordinated omission again, kept for the test that
   * shows the experiment's shape fails without the intended time.
   */
  timeFrom?: 'intended' | 'written';
  /** Called with each answer: its latency, ms; its intended send time and its end, ms on performance.now(). */
  onAnswer?(ms: number, status: number, intendedAt: number, endAt: number): void;
  /**
   * Called for each request that got no answer (a reset, a timeout) with the ms since it was due,
   * and with 0 for each one dropped at the cap; not for those abandoned by a stop (`signal`).
   */
  onFailure?(ms: number): void;
  /** Ends the run early, even while it waits for the last answers: those in flight are abandoned. */
  signal?: AbortSignal;
}

interface OpenLoopResult {
  intendedRate: number;
  durationS: number;
  /** Requests sent, answered (any status), failed (no answer, or a status of 400 and up), dropped at the cap. */
  sent: number;
  answered: number;
  errors: number;
  dropped: number;
  /** Answers per second of the scheduled duration. */
  achievedRate: number;
  /** From the intended send time (or the write, with timeFrom `written`), ms. */
  latency: LatencySummary;
  /** How late the generator sent each request after its intended time, ms. */
  lateness: LatencySummary;
  /** True when the generator's lateness, not the server, set the latency (see generatorLimited). */
  generatorLimited: boolean;
  /** The generator's CPU time over its wall time, in cores. */
  generatorCpu: number;
}

/** A due request more than this late counts as late, ms: a timer's usual slack is about 1 ms. */
const LATE_MS = 5;
const MAX_RATE = 20_000;

/**
 * The generator limited the run when its p99 lateness is at least this share of the p99 latency:
 * the latency it measured was then mostly its own delay in sending (a busy generator process).
 */
const GENERATOR_SHARE = 0.5;

/** The intended send times, ms after the start, one at a time, until `durationS` (made as needed: a long run holds none). */
function* arrivalTimes(rate: number, durationS: number, arrivals: 'fixed' | 'poisson', seed = 1): Generator<number> {
  const end = durationS * 1000;
  if (arrivals === 'fixed') {
    for (let i = 0; i * (1000 / rate) < end; i++) yield i * (1000 / rate);
    return;
  }
  // The simulator's seeded generator and exponential gaps (sim/rng.ts): the same arrivals it models.
  const rng = seededRng(seed);
  for (let t = exponential(rng, 1000 / rate); t < end; t += exponential(rng, 1000 / rate)) yield t;
}

/** Every intended send time of a run, ms after its start (for tests and small runs). */
export function schedule(rate: number, durationS: number, arrivals: 'fixed' | 'poisson', seed = 1): number[] {
  return [...arrivalTimes(rate, durationS, arrivals, seed)];
}

/** Checks the options; KIT_ERR_USAGE naming the one out of range. */
function check(o: OpenLoopOptions): void {
  assertLoopback(new URL(o.url));
  if (!(o.rate >= 1 && o.rate <= MAX_RATE))
    throw new KitError('KIT_ERR_USAGE', `an open loop's rate is 1 to ${MAX_RATE} req/s; got ${o.rate}`);
  if (!(o.durationS > 0 && o.durationS <= 600))
    throw new KitError('KIT_ERR_USAGE', `an open loop lasts from 0 to 600 s; got ${o.durationS}`);
}

/**
 * The sending half: `send(intendedAt)` sends one request now (or drops it at the cap) and records
 * its lateness and, when it ends, its latency; `settled` resolves once `stop()` was called and no
 * request is left in flight.
 */
function sender(o: OpenLoopOptions, pool: Pool, url: URL) {
  const maxInFlight = o.maxInFlight ?? 10_000;
  const latency = createLatencyHistogram();
  const lateness = createLatencyHistogram();
  const counts = { sent: 0, answered: 0, errors: 0, dropped: 0 };
  let inFlight = 0;
  let stopped = false;
  let settle!: () => void;
  const settled = new Promise<void>((resolve) => (settle = resolve));
  const maybeSettled = () => stopped && inFlight === 0 && settle();

  const end = (ok: boolean, status: number, from: number, intendedAt: number) => {
    inFlight--;
    const endAt = performance.now();
    if (ok) {
      counts.answered++;
      if (status >= 400) counts.errors++;
      recordMs(latency, endAt - from);
      o.onAnswer?.(endAt - from, status, intendedAt, endAt);
    } else {
      counts.errors++;
      if (!o.signal?.aborted) o.onFailure?.(endAt - from);
    }
    maybeSettled();
  };

  const send = (intendedAt: number) => {
    recordMs(lateness, performance.now() - intendedAt);
    if (inFlight >= maxInFlight) {
      counts.dropped++;
      o.onFailure?.(0);
      return;
    }
    counts.sent++;
    inFlight++;
    let writtenAt = intendedAt;
    let status = 0;
    const from = () => (o.timeFrom === 'written' ? writtenAt : intendedAt);
    pool.dispatch(
      { origin: url.origin, path: url.pathname + url.search, method: 'GET' },
      {
        // Called as undici writes the request to a connection: after any wait for a free one.
        onRequestStart: () => void (writtenAt = performance.now()),
        onResponseStart: (_c: unknown, statusCode: number) => void (status = statusCode),
        onResponseData: () => {},
        onResponseEnd: () => end(true, status, from(), intendedAt),
        onResponseError: () => end(false, status, from(), intendedAt),
      },
    );
  };
  const stop = () => {
    stopped = true;
    maybeSettled();
  };
  return { send, stop, settled, counts, latency, lateness };
}

/**
 * The scheduling half: calls `send` with each intended time (ms on performance.now()) once it has
 * come, catching up at once on any that came while the timer was late; resolves when the schedule
 * is done or `signal` aborts.
 */
export function runSchedule(times: Iterator<number>, start: number, send: (at: number) => void, signal?: AbortSignal) {
  return new Promise<void>((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    let next = times.next();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const tick = () => {
      const now = performance.now();
      while (!signal?.aborted && !next.done && start + next.value <= now) {
        send(start + next.value);
        next = times.next();
      }
      if (!signal?.aborted && !next.done) timer = setTimeout(tick, Math.max(0, start + next.value - performance.now()));
      else done();
    };
    signal?.addEventListener('abort', done, { once: true });
    tick();
  });
}

/** Runs one open-loop load to its end (or its signal) and returns what it measured. */
export async function runOpenLoop(o: OpenLoopOptions): Promise<OpenLoopResult> {
  check(o);
  const url = new URL(o.url);
  const timeoutMs = (o.timeoutS ?? 10) * 1000;
  const pool = new Pool(url.origin, {
    connections: o.connections ?? 16,
    pipelining: 1,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });
  const s = sender(o, pool, url);
  const cpuBefore = process.cpuUsage();
  const start = performance.now();
  // A stop, whenever it comes (while sending or while waiting for the last answers), abandons the
  // requests in flight and those queued for a connection: each ends at once, as a failure.
  const abandon = () => void pool.destroy().catch(() => {});
  if (o.signal?.aborted) abandon();
  o.signal?.addEventListener('abort', abandon, { once: true });
  markLoad(s.settled);
  try {
    await runSchedule(arrivalTimes(o.rate, o.durationS, o.arrivals ?? 'fixed', o.seed), start, s.send, o.signal);
    s.stop();
    await s.settled;
  } finally {
    o.signal?.removeEventListener('abort', abandon);
    await pool.close().catch(() => {});
  }
  const wallS = (performance.now() - start) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const latency = summarize(s.latency);
  const lateness = summarize(s.lateness);
  return {
    intendedRate: o.rate,
    durationS: o.durationS,
    ...s.counts,
    achievedRate: s.counts.answered / Math.min(o.durationS, wallS),
    latency,
    lateness,
    generatorLimited: lateness.p99 > LATE_MS && lateness.p99 >= GENERATOR_SHARE * Math.max(latency.p99, 1e-3),
    generatorCpu: (cpu.user + cpu.system) / 1e6 / wallS,
  };
}
