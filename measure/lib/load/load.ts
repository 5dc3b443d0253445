/**
 * Load: autocannon drives a closed loop of `connections` keep-alive connections (pipelining 1),
 * bounded by a duration and, optionally, a request count. Every response's time is recorded in
 * µs into an HDR histogram (autocannon's 'response' event); counts come from autocannon and are
 * checked to add up. The generator's own CPU use is measured, since it shares the machine.
 */
import autocannon from 'autocannon';
import type { EventEmitter } from 'node:events';
import { performance } from 'node:perf_hooks';
import { KitError } from '../../../lib/errors.ts';
import { createLatencyHistogram, quantilesMs, recordMs, summarize, type LatencyHistogram, type LatencySummary } from '../../../results/report/latency.ts';
import { assertLoopback } from './probe.ts';
import type { TimelineSecond } from '../../../results/report/timeline.ts';
import { headerCounter } from './header-count.ts';

export interface LoadOptions {
  url: string;
  connections: number;
  /** Seconds; the run ends then whatever else is set. At most 120. */
  durationS: number;
  /** Stop after this many requests (optional). */
  amount?: number;
  method?: 'GET' | 'POST';
  /** Cap on the request rate across all connections, req/s (autocannon's overallRate); unbounded without. */
  rate?: number;
  /** Per-request timeout in s (autocannon's default is 10). */
  timeoutS?: number;
  /** A sequence of requests each connection repeats (autocannon's `requests`), e.g. create then read. */
  requests?: autocannon.Request[];
  /** Also keep a per-second timeline (completed, non-2xx, errors, p99), for runs with a fault in them. */
  timeline?: boolean;
  /** Also count responses that took at least this many ms, and keep their latencies. */
  slowMs?: number;
  /**
   * Also summarize only the responses that complete at least this many s after the start: a closed
   * loop's first wave waits less than a full turn (its requests start together), so the steady
   * state begins about one latency in. `durationS` includes these seconds.
   */
  settleS?: number;
  /** With `settleS`: also record the settled responses here (to merge several runs into one histogram). */
  settledInto?: LatencyHistogram;
  /**
   * With `settleS`: the settled part also waits until every connection has had its first answer,
   * and then lasts `settledS` seconds (the run stops; `durationS` stays the upper bound). New
   * connections to a busy process wait to be accepted: libuv accepts one connection per event loop
   * iteration (libuv PR #3696; measured on Node 20 to 26), so on a CPU-bound route the k-th of N new
   * connections gets its first answer after about k turns of the ones before it, N²/2 requests'
   * time in all (0.7 s for 16 connections to a 5 ms route here, 11 s for 64).
   */
  settledS?: number;
  /** Also return this many evenly spaced latency quantiles (`quantilesMs`), e.g. 1000 for the simulator. */
  quantiles?: number;
  /** Called with every answer's time (ms) and status, and with status undefined for a request that got none (an error or a timeout). */
  onAnswer?: (ms: number, status: number | undefined) => void;
  /** Called after every response with the number of responses so far (e.g. to act halfway through). */
  onResponse?: (responses: number) => void;
  /** Also count the responses whose header `name` (lower case) matches `pattern`, e.g. x-upstream-addr naming two replicas. */
  countHeader?: { name: string; pattern: RegExp };
  /**
   * Count slow responses (`slowMs`) and header matches (`countHeader`) only from this wall-clock
   * time on (Date.now(), ms): a lead-in's answers are left out, as an access log read from the
   * same time leaves out its lines.
   */
  countFromMs?: number;
}

/** Responses at or over a threshold. */
interface SlowResponses {
  thresholdMs: number;
  count: number;
  /** Their latencies, ms, sorted (at most the first 1000 kept). */
  latenciesMs: number[];
}

/** A load that is running: stop it early, or wait for its result. */
interface RunningLoad {
  stop(): void;
  result: Promise<LoadResult>;
}

export interface LoadResult {
  connections: number;
  /** Wall time of the run, s. */
  durationS: number;
  /** Completed responses per second. */
  throughput: number;
  counts: { sent: number; completed: number; ok2xx: number; non2xx: number; errors: number; timeouts: number };
  latency: LatencySummary;
  /** CPU the load generator (this process) used, as a fraction of one core over the run. */
  generatorCpu: number;
  /** With `timeline`: one entry per second of the run. */
  timeline?: TimelineSecond[];
  /** With `slowMs`. */
  slow?: SlowResponses;
  /** With `settleS`: the responses after it, their throughput (req/s) over the same span, and latency. */
  settled?: { completed: number; durationS: number; throughput: number; latency: LatencySummary };
  /** With `quantiles`: the latency distribution as evenly spaced quantiles, ms (see latency.ts quantilesMs). */
  quantilesMs?: number[];
  /** With `countHeader`: the responses whose header matched. */
  headerMatched?: number;
}

/** autocannon's sample interval, ms: a run ends within this long after its duration. */
const SAMPLE_MS = 50;

/** Runs one bounded load and returns its counts, throughput (req/s) and latency (ms). */
export function runLoad(opts: LoadOptions): Promise<LoadResult> {
  try {
    return startLoad(opts).result;
  } catch (err) {
    return Promise.reject(err);
  }
}

/**
 * Starts one bounded load (it ends after `durationS` at the latest) and returns at once, so the
 * caller can run something else meanwhile and stop it early. Throws KIT_ERR_USAGE for a target
 * that is not loopback or a duration outside (0, 120] s.
 */
export function startLoad(opts: LoadOptions): RunningLoad {
  assertLoopback(new URL(opts.url));
  if (opts.settledS !== undefined && opts.settleS === undefined) throw new KitError('KIT_ERR_USAGE', 'settledS needs settleS');
  if (!(opts.durationS > 0 && opts.durationS <= 120)) {
    throw new KitError('KIT_ERR_USAGE', `a load run lasts from 0 to 120 s; got ${opts.durationS}`);
  }
  const histogram = createLatencyHistogram();
  const header = opts.countHeader ? headerCounter(opts.countHeader) : undefined;
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  // Without a callback autocannon returns an EventEmitter that is also a promise of the result.
  const instance = autocannon({
    url: opts.url,
    connections: opts.connections,
    duration: opts.durationS,
    ...(opts.amount ? { amount: opts.amount } : {}),
    ...(opts.rate ? { overallRate: opts.rate } : {}),
    method: opts.method ?? 'GET',
    pipelining: 1,
    // autocannon ends a run at its first sample tick after the duration: with its default 1 s
    // ticks a 1 s run lasted 1 or 2 s, whichever tick won the race, and a 0.8 s one lasted 1 s.
    sampleInt: SAMPLE_MS,
    timeout: opts.timeoutS ?? 10,
    ...(opts.requests ? { requests: opts.requests } : {}),
    ...(header ? { setupClient: header.setup } : {}),
  }) as unknown as EventEmitter & PromiseLike<autocannon.Result> & { stop(): void };
  const seconds: { h: ReturnType<typeof createLatencyHistogram>; completed: number; ok2xx: number; non2xx: number; errors: number }[] = [];
  const bucket = () => {
    const i = Math.floor((performance.now() - started) / 1000);
    while (seconds.length <= i) seconds.push({ h: createLatencyHistogram(), completed: 0, ok2xx: 0, non2xx: 0, errors: 0 });
    return seconds[i]!;
  };
  const slow: SlowResponses | undefined = opts.slowMs === undefined ? undefined : { thresholdMs: opts.slowMs, count: 0, latenciesMs: [] };
  let responses = 0;
  const settled = opts.settleS === undefined ? undefined : settledPart(opts, started, () => instance.stop());
  instance.on('response', (client: unknown, status: number, _bytes: number, responseTime: number) => {
    recordMs(histogram, responseTime);
    const counted = opts.countFromMs === undefined || Date.now() >= opts.countFromMs;
    if (counted) header?.answered(client);
    settled?.record(client, responseTime);
    opts.onResponse?.(++responses);
    opts.onAnswer?.(responseTime, status);
    if (opts.timeline) {
      const b = bucket();
      recordMs(b.h, responseTime);
      b.completed++;
      if (status >= 200 && status < 300) b.ok2xx++;
      else b.non2xx++;
    }
    if (slow && counted && responseTime >= slow.thresholdMs) {
      slow.count++;
      if (slow.latenciesMs.length < 1000) slow.latenciesMs.push(responseTime);
    }
  });
  if (opts.timeline) instance.on('reqError', () => bucket().errors++);
  if (opts.onAnswer) instance.on('reqError', () => opts.onAnswer!(0, undefined));
  const timeline = (): TimelineSecond[] | undefined =>
    opts.timeline
      ? seconds.map((b, second) => {
          const l = summarize(b.h);
          return { second, completed: b.completed, ok2xx: b.ok2xx, non2xx: b.non2xx, errors: b.errors, p99: b.completed ? l.p99 : 0, max: b.completed ? l.max : 0 };
        })
      : undefined;
  const result = finish(instance, opts, histogram, cpuBefore, started).then((r) => {
    const t = timeline();
    if (slow) slow.latenciesMs.sort((a, b) => a - b);
    const s = settled?.summary();
    const q = opts.quantiles ? quantilesMs(histogram, opts.quantiles) : undefined;
    const h = header ? { headerMatched: header.count() } : {};
    return { ...r, ...(t ? { timeline: t } : {}), ...(slow ? { slow } : {}), ...(s ? { settled: s } : {}), ...(q ? { quantilesMs: q } : {}), ...h };
  });
  // autocannon refuses some options (an overallRate under 1, say) by returning an emitter with no stop().
  return { stop: () => instance.stop?.(), result };
}

/**
 * A load longer than one run's 120 s: `opts` started again each time its run ends, until stopped
 * or `totalS` has passed (a run started late lasts only the time left), or a run fails. `done`
 * resolves when the last run has ended.
 */
export function sustainLoad(opts: LoadOptions, totalS: number): { stop: () => Promise<void>; done: Promise<void> } {
  const until = performance.now() + totalS * 1000;
  let stopped = false;
  let current = startLoad({ ...opts, durationS: Math.min(opts.durationS, totalS) });
  const done = (async () => {
    for (;;) {
      // A run that fails (a refused option, say) is not started again: that would spin until totalS.
      if (!(await current.result.then(() => true, () => false))) return;
      const leftS = (until - performance.now()) / 1000;
      if (stopped || leftS < 0.5) return;
      current = startLoad({ ...opts, durationS: Math.min(opts.durationS, leftS) });
    }
  })();
  return {
    done,
    stop: async () => {
      stopped = true;
      current.stop();
      await done;
    },
  };
}

/**
 * The settled part of a run (`settleS`, `settledS`): records the responses that complete inside
 * it, and with `settledS` starts it at the first moment every connection has been answered (but
 * not before `settleS`) and stops the run `settledS` later.
 */
function settledPart(opts: LoadOptions, started: number, stop: () => void) {
  const h = createLatencyHistogram();
  const earliest = started + (opts.settleS ?? 0) * 1000;
  const answered = opts.settledS === undefined ? undefined : new Set<unknown>();
  let from = answered ? Infinity : earliest;
  return {
    record(client: unknown, ms: number): void {
      if (answered && from === Infinity) {
        answered.add(client);
        if (answered.size < opts.connections) return;
        from = Math.max(earliest, performance.now());
        setTimeout(stop, from + opts.settledS! * 1000 - performance.now()).unref();
      } else if (performance.now() >= from) {
        recordMs(h, ms);
        if (opts.settledInto) recordMs(opts.settledInto, ms);
      }
    },
    /** Empty (0 completed over 0.001 s) when not every connection was answered. */
    summary(): NonNullable<LoadResult['settled']> {
      const span = from === Infinity ? 0.001 : Math.max(0.001, (performance.now() - from) / 1000);
      return { completed: h.totalCount, durationS: span, throughput: Math.round((h.totalCount / span) * 10) / 10, latency: summarize(h) };
    },
  };
}

async function finish(
  instance: PromiseLike<autocannon.Result>,
  opts: LoadOptions,
  histogram: ReturnType<typeof createLatencyHistogram>,
  cpuBefore: NodeJS.CpuUsage,
  started: number,
): Promise<LoadResult> {
  const result = await instance;
  const wallS = (performance.now() - started) / 1000;
  const runS = result.duration > 0 ? result.duration : wallS;
  const cpu = process.cpuUsage(cpuBefore);
  const completed = result['2xx'] + result.non2xx;
  return {
    connections: opts.connections,
    durationS: runS,
    throughput: Math.round((completed / runS) * 10) / 10,
    counts: {
      sent: result.requests.sent,
      completed,
      ok2xx: result['2xx'],
      non2xx: result.non2xx,
      errors: result.errors,
      timeouts: result.timeouts,
    },
    latency: summarize(histogram),
    generatorCpu: Math.round(((cpu.user + cpu.system) / 1e6 / wallS) * 100) / 100,
  };
}
