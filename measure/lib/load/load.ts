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
import {
  createLatencyHistogram,
  quantilesMs,
  recordMs,
  summarize,
  type LatencyHistogram,
} from '../../../results/report/latency.ts';
import { assertLoopback } from './probe.ts';
import type { TimelineSecond } from '../../../results/report/timeline.ts';
import { headerCounter } from './header-count.ts';
import { markLoad } from './windows.ts';
import type { LoadOptions, LoadResult, RunningLoad, SlowResponses } from './load-types.ts';

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
  if (opts.settledS !== undefined && opts.settleS === undefined)
    throw new KitError('KIT_ERR_USAGE', 'settledS needs settleS');
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
  const records = answerRecords(opts, started);
  let responses = 0;
  const settled = opts.settleS === undefined ? undefined : settledPart(opts, started, () => instance.stop());
  instance.on('response', (client: unknown, status: number, _bytes: number, responseTime: number) => {
    recordMs(histogram, responseTime);
    const counted = opts.countFromMs === undefined || Date.now() >= opts.countFromMs;
    if (counted) header?.answered(client);
    settled?.record(client, responseTime);
    opts.onResponse?.(++responses);
    opts.onAnswer?.(responseTime, status);
    records.response(responseTime, status, counted);
  });
  instance.on('reqError', () => {
    records.error();
    opts.onAnswer?.(0, undefined);
  });
  const result = finish(instance, opts, histogram, cpuBefore, started).then((r) => {
    const s = settled?.summary();
    const q = opts.quantiles ? quantilesMs(histogram, opts.quantiles) : undefined;
    const h = header ? { headerMatched: header.count() } : {};
    return { ...r, ...records.done(), ...(s ? { settled: s } : {}), ...(q ? { quantilesMs: q } : {}), ...h };
  });
  markLoad(result);
  // autocannon refuses some options (an overallRate under 1, say) by returning an emitter with no stop().
  return { stop: () => instance.stop?.(), result };
}

/**
 * What a run keeps of each answer besides its latency histogram: with `timeline`, one bucket per
 * second (completed, 2xx, non-2xx, errors, p99 and max, ms); with `slowMs`, the responses that took
 * that long or longer, counted only when the caller says so (`countFromMs`).
 */
function answerRecords(opts: LoadOptions, started: number) {
  const seconds: { h: LatencyHistogram; completed: number; ok2xx: number; non2xx: number; errors: number }[] = [];
  const bucket = () => {
    const i = Math.floor((performance.now() - started) / 1000);
    while (seconds.length <= i)
      seconds.push({ h: createLatencyHistogram(), completed: 0, ok2xx: 0, non2xx: 0, errors: 0 });
    return seconds[i]!;
  };
  const slow: SlowResponses | undefined =
    opts.slowMs === undefined ? undefined : { thresholdMs: opts.slowMs, count: 0, latenciesMs: [] };
  return {
    response(ms: number, status: number, counted: boolean): void {
      if (opts.timeline) {
        const b = bucket();
        recordMs(b.h, ms);
        b.completed++;
        if (status >= 200 && status < 300) b.ok2xx++;
        else b.non2xx++;
      }
      if (slow && counted && ms >= slow.thresholdMs) {
        slow.count++;
        if (slow.latenciesMs.length < 1000) slow.latenciesMs.push(ms);
      }
    },
    /** A request that got no answer (an error or a timeout). */
    error(): void {
      if (opts.timeline) bucket().errors++;
    },
    /** The parts of the result they make: the timeline, and the slow responses sorted. */
    done(): Pick<LoadResult, 'timeline' | 'slow'> {
      slow?.latenciesMs.sort((a, b) => a - b);
      const timeline: TimelineSecond[] = seconds.map((b, second) => {
        const l = summarize(b.h);
        return {
          second,
          completed: b.completed,
          ok2xx: b.ok2xx,
          non2xx: b.non2xx,
          errors: b.errors,
          p99: b.completed ? l.p99 : 0,
          max: b.completed ? l.max : 0,
        };
      });
      return { ...(opts.timeline ? { timeline } : {}), ...(slow ? { slow } : {}) };
    },
  };
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
      if (
        !(await current.result.then(
          () => true,
          () => false,
        ))
      )
        return;
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
      return {
        completed: h.totalCount,
        durationS: span,
        throughput: Math.round((h.totalCount / span) * 10) / 10,
        latency: summarize(h),
      };
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
