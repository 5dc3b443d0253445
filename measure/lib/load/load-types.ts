/**
 * What a caller asks of a load run (load.ts) and what it gets back: the options, the result, and a
 * running load to stop early.
 */
import type autocannon from 'autocannon';
import type { LatencyHistogram, LatencySummary } from '../../../results/report/latency.ts';
import type { TimelineSecond } from '../../../results/report/timeline.ts';

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
export interface SlowResponses {
  thresholdMs: number;
  count: number;
  /** Their latencies, ms, sorted (at most the first 1000 kept). */
  latenciesMs: number[];
}

/** A load that is running: stop it early, or wait for its result. */
export interface RunningLoad {
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
