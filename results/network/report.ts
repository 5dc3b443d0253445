/**
 * Result and shape of the `network` experiment (lesson 12): a replica behind a real link, made of a
 * toxic proxy (latency) and, as root on Linux, a network namespace whose veth link drops packets
 * (nftables) and limits bandwidth (tbf). Five findings: (a) a connection per request pays two
 * round trips where keep-alive pays one, so keep-alive is worth more the longer the round trip; (b)
 * a little loss leaves p50 where it was and sends p99 past the retransmission timeout (200 ms; 1 s
 * for a lost SYN), whatever the number of connections; (c) a client timeout shorter than that
 * timeout turns a lost packet into an error, and one retry recovers it; (d) a hedge sent after
 * about the p95 cuts p99 for a few per cent more load; (e) a large export through a narrow link
 * takes its size over the bandwidth, with the event loop idle, and backpressure keeps the server's
 * memory flat. Pure.
 */
import { CANNOT_SHOW, line } from '../report/shape.ts';

/** a: sequential requests at one round-trip time. */
export interface RttRow {
  /** The round trip the proxy adds (half each way), ms. */
  rttMs: number;
  connections: 'keep-alive' | 'per-request';
  requests: number;
  p50Ms: number;
  p99Ms: number;
}

/** b: requests from several connections at once through a link that drops some packets. */
export interface LossRow {
  /** The share of packets to the replica's link dropped at random, %. */
  lossPercent: number;
  connections: 'keep-alive' | 'per-request';
  concurrency: number;
  requests: number;
  p50Ms: number;
  p99Ms: number;
  /** Answered requests that took 200 ms or more (Linux's least retransmission timeout), and 1 s or more (a lost SYN's). */
  over200Ms: number;
  over1s: number;
  errors: number;
}

/** c: keep-alive through the same loss, giving up on an attempt after a timeout, with or without one retry. */
export interface TimeoutRow {
  lossPercent: number;
  timeoutMs: number;
  retries: 0 | 1;
  requests: number;
  /** Requests that got no answer. */
  errors: number;
  attempts: number;
  p99Ms: number;
}

/** d: keep-alive through the same loss, a hedge sent when no answer has come after `afterMs`. */
interface HedgeRow {
  lossPercent: number;
  /** The hedge's delay: the p95 of the same requests with no loss, ms. */
  afterMs: number;
  requests: number;
  hedges: number;
  attempts: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
}

/** e: one export (lesson 9's route) through a link of limited bandwidth. */
export interface BandwidthRow {
  backpressure: boolean;
  bytes: number;
  /** The link's rate, bytes per second. */
  bytesPerS: number;
  /** Where the limit was: tbf on the namespace's link, or the toxic proxy's bandwidth toxic. */
  limitedBy: 'tbf' | 'proxy';
  /** From the request to the last byte, ms. */
  ms: number;
  /** The export server's event-loop utilization over the transfer, 0 to 1. */
  loopUtilization: number;
  /** The most bytes the server's response held in memory, waiting for the socket (writableLength). */
  queuedMaxBytes: number;
}

export interface NetworkResult {
  machine: import('../report/format.ts').MachineInfo;
  /** `namespace`: the replica in a network namespace across a veth link; `proxy`: the toxic proxy on loopback alone. */
  link: 'namespace' | 'proxy';
  /** Why the kernel's parts (loss, tbf) did not run: "needs root on Linux". */
  kernelMissing?: string;
  rtt: RttRow[];
  loss: LossRow[];
  timeouts: TimeoutRow[];
  hedge?: HedgeRow;
  bandwidth: BandwidthRow[];
  /** Answers that were not the route's (a 200 with the wrong body, or another status). */
  wrongAnswers: number;
}

/** Linux's least retransmission timeout (TCP_RTO_MIN, include/net/tcp.h), ms. */
export const RTO_MIN_MS = 200;
/** The initial retransmission timeout, for a SYN that had no answer (RFC 6298 §2.1; TCP_TIMEOUT_INIT), ms. */
export const SYN_RTO_MS = 1000;

/**
 * Round trips a request pays over and above the round trip with no latency: keep-alive one, a
 * connection per request two (the handshake, then the request). Measured at 5 ms: 0.98 to 1.02 and
 * 1.97 to 2.03; the ranges leave room for a scheduler's late timer.
 */
const ONE_TRIP = [0.7, 1.4] as const;
const TWO_TRIPS = [1.6, 2.6] as const;
/** The largest RTT's advantage for keep-alive (per-request p50 less keep-alive p50) over the smallest's, at least. */
const ADVANTAGE_GROWTH = 3;
/** Loss barely moves p50: at most this many times the lossless p50, plus 0.5 ms. */
const P50_MOVED = 1.5;
/** With 1 % loss at least this share of requests wait a retransmission timeout (measured 1.5 to 2.5 %: about two packets a request could lose). */
const SOME_WAIT = 0.005;
/**
 * Without a retry a request whose packet is lost fails: about the loss's share of requests. A retry
 * recovers them when at most this share of that many still fail (expected 5 % of them, those whose
 * retry lost its packet too; measured 0.4 to 0.75 % of requests at 5 % loss, 8 to 15 % of that many).
 */
const RETRY_LEAVES = 1 / 3;
/** At 5 % loss at least this share of connections per request wait a second for their SYN (measured 3 to 5 %). */
const LOST_SYNS = 0.01;
/** The errors without a retry are at least this share of requests (measured 4 to 6 % at 5 % loss). */
const ERRORS_WITHOUT_RETRY = 0.01;
/** A hedge costs at most this much extra load (measured 7 to 12 % after the p95, at 5 % loss). */
const HEDGE_EXTRA = 0.25;
/** The export took its size over the bandwidth within this ratio (TCP's headers add about 3 %; tbf's burst takes some off). */
const TRANSFER_RATIO = [0.8, 1.25] as const;
/** The export server's loop is idle: at most this utilization while it sends (measured 1 to 4 %). */
const IDLE = 0.2;
/** With backpressure the server holds at most this much of the response (measured 64 to 128 KiB: a chunk or two). */
const FLAT_BYTES = 1024 * 1024;

const rttRow = (r: NetworkResult, rtt: number, c: RttRow['connections']) =>
  r.rtt.find((x) => x.rttMs === rtt && x.connections === c);
const lossRow = (r: NetworkResult, loss: number, c: LossRow['connections']) =>
  r.loss.find((x) => x.lossPercent === loss && x.connections === c);
const between = (x: number, [lo, hi]: readonly [number, number]) => x >= lo && x <= hi;

/** Round trips a request paid at the largest RTT, over the smallest's p50; undefined without both. */
export function roundTrips(r: NetworkResult, c: RttRow['connections']): number | undefined {
  const rtts = [...new Set(r.rtt.map((x) => x.rttMs))].sort((a, b) => a - b);
  const lo = rttRow(r, rtts[0]!, c);
  const hi = rttRow(r, rtts.at(-1)!, c);
  if (!lo || !hi || hi.rttMs === lo.rttMs) return undefined;
  return (hi.p50Ms - lo.p50Ms) / (hi.rttMs - lo.rttMs);
}

/** Keep-alive's advantage at an RTT: the per-request p50 less the keep-alive p50, ms. */
export function advantageMs(r: NetworkResult, rtt: number): number | undefined {
  const k = rttRow(r, rtt, 'keep-alive');
  const p = rttRow(r, rtt, 'per-request');
  return k && p ? p.p50Ms - k.p50Ms : undefined;
}

function advantageGrows(r: NetworkResult): string {
  const rtts = [...new Set(r.rtt.map((x) => x.rttMs))].sort((a, b) => a - b);
  const adv = rtts.map((x) => advantageMs(r, x));
  if (rtts.length < 2 || adv.some((a) => a === undefined)) return CANNOT_SHOW;
  const grows = adv.every((a, i) => i === 0 || a! > adv[i - 1]!);
  return grows && adv.at(-1)! >= ADVANTAGE_GROWTH * Math.max(adv[0]!, 0.1) ? 'grows-with-rtt' : 'flat';
}

function trips(r: NetworkResult, c: RttRow['connections'], want: readonly [number, number], name: string): string {
  const t = roundTrips(r, c);
  if (t === undefined) return CANNOT_SHOW;
  return between(t, want) ? name : 'other';
}

/** A verdict from a row, CANNOT_SHOW when it is absent (no kernel, or not run). */
function of<T>(row: T | undefined, ok: (x: T) => boolean, yes: string, no: string): string {
  if (!row) return CANNOT_SHOW;
  return ok(row) ? yes : no;
}

function p50Barely(r: NetworkResult, loss: number): string {
  const base = lossRow(r, 0, 'per-request');
  return of(
    lossRow(r, loss, 'per-request'),
    (x) => !!base && x.p50Ms <= P50_MOVED * base.p50Ms + 0.5,
    'barely-moves',
    'moves',
  );
}

/** The run's own loss level (the highest of part b), or 5 when part b did not run. */
const lossOf = (r: NetworkResult) => Math.max(0, ...r.loss.map((x) => x.lossPercent)) || 5;

/** a: round trips. */
function rttLines(r: NetworkResult): string[] {
  return [
    line('network', 'rtt', 'keep-alive', 'round-trips', trips(r, 'keep-alive', ONE_TRIP, 'one')),
    line('network', 'rtt', 'per-request', 'round-trips', trips(r, 'per-request', TWO_TRIPS, 'two')),
    line('network', 'rtt', 'keep-alive-advantage', advantageGrows(r)),
  ];
}

/** b: loss at 1 % and at the run's level. */
function lossLines(r: NetworkResult): string[] {
  const top = lossOf(r);
  const at = `loss-${top}%`;
  const waits = (x: LossRow) => x.over200Ms >= SOME_WAIT * x.requests;
  return [
    line('network', 'loss-1%', 'p50', p50Barely(r, 1)),
    line('network', 'loss-1%', 'retransmission-waits', of(lossRow(r, 1, 'per-request'), waits, 'some', 'none')),
    line('network', at, 'p50', p50Barely(r, top)),
    ...(['per-request', 'keep-alive'] as const).map((c) =>
      line(
        'network',
        at,
        c,
        'p99',
        of(lossRow(r, top, c), (x) => x.p99Ms >= RTO_MIN_MS, 'retransmission-timeout', 'low'),
      ),
    ),
    line(
      'network',
      at,
      'per-request',
      'lost-syn',
      of(lossRow(r, top, 'per-request'), (x) => x.over1s >= LOST_SYNS * x.requests, 'waits-one-second', 'none'),
    ),
  ];
}

/** c and d: the client's timeout, its retry, and its hedge. */
function clientLines(r: NetworkResult): string[] {
  const noRetry = r.timeouts.find((t) => t.retries === 0);
  const retry = r.timeouts.find((t) => t.retries === 1);
  const recovered = (x: TimeoutRow) => x.errors <= RETRY_LEAVES * (x.lossPercent / 100) * x.requests;
  const cheap = (h: HedgeRow) => h.hedges > 0 && h.hedges <= HEDGE_EXTRA * h.requests;
  return [
    line(
      'network',
      'timeout-below-rto',
      'no-retry',
      of(noRetry, (x) => x.errors >= ERRORS_WITHOUT_RETRY * x.requests, 'errors', 'none'),
    ),
    line('network', 'timeout-below-rto', 'one-retry', 'errors', of(retry, recovered, 'recovered', 'remain')),
    line(
      'network',
      'timeout-below-rto',
      'one-retry',
      'p99',
      of(retry, (x) => x.p99Ms < RTO_MIN_MS, 'below-rto', 'above'),
    ),
    line(
      'network',
      'hedged',
      'p99',
      of(r.hedge, (h) => h.p99Ms < RTO_MIN_MS, 'below-rto', 'unchanged'),
    ),
    line('network', 'hedged', 'extra-load', of(r.hedge, cheap, 'a-few-percent', 'large')),
  ];
}

/** e: the export through a narrow link. */
function bandwidthLines(r: NetworkResult): string[] {
  const honour = r.bandwidth.find((b) => b.backpressure);
  const ignore = r.bandwidth.find((b) => !b.backpressure);
  const ideal = (b: BandwidthRow) => between(b.ms / ((1000 * b.bytes) / b.bytesPerS), TRANSFER_RATIO);
  const flat = (b: BandwidthRow) =>
    b.queuedMaxBytes <= FLAT_BYTES && !!ignore && ignore.queuedMaxBytes >= 4 * Math.max(b.queuedMaxBytes, 1);
  return [
    line('network', 'bandwidth', 'export-time', of(honour, ideal, 'size-over-bandwidth', 'other')),
    line(
      'network',
      'bandwidth',
      'event-loop',
      of(honour, (b) => b.loopUtilization <= IDLE, 'idle', 'busy'),
    ),
    line('network', 'bandwidth', 'memory', of(honour, flat, 'flat-with-backpressure', 'grows')),
  ];
}

/** The shape lines. */
export function shape(r: NetworkResult): string[] {
  return [
    ...rttLines(r),
    ...lossLines(r),
    ...clientLines(r),
    ...bandwidthLines(r),
    line('network', 'answers', r.wrongAnswers === 0 ? 'right' : 'wrong'),
  ];
}
