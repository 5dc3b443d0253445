/**
 * The `stages` experiment's shape for the parts about the server's own handling: a blocked event
 * loop, a slow reader (backpressure) and a body limit. Three shares of the server's time
 * (DRAIN_SHARE, AT_FINISH_SHARE, MOST_SHARE), a ratio (LATE_FACTOR) and two byte sizes (FEW_CHUNKS
 * chunks, a request head), each with the reason for its value. Never a stage's length in µs.
 */
import { EXPORT_CHUNK_BYTES } from '../../servers/lib/stages/export.ts';
import { line } from '../report/shape.ts';
import {
  at,
  between,
  group,
  longestStage,
  medianOf,
  part,
  type StagedRequest,
  type StagesGroup,
  type StagesPart,
  type StagesResult,
} from './report.ts';

/**
 * The queue a write()-honouring server keeps is "a few chunks" up to this many of them: the
 * stream's highWaterMark (16 KiB before Node 22, 64 KiB since) plus the chunk that crossed it,
 * at most two 64 KiB chunks, with room to spare.
 */
export const FEW_CHUNKS = 4;
/** "Most of the body" is at least this share of it. */
export const MOST_SHARE = 0.5;
/**
 * The handler "ends at finish" when finish comes at most this share of the server's time
 * (headers-parsed → finish) after handler-end: it held on until its last chunk was taken. Its
 * "long before" is MOST_SHARE or more: the handler was done while most of the time was still to go.
 */
export const AT_FINISH_SHARE = 0.1;
/**
 * The server "waited for drain most of the time" when its waits for 'drain' add up to at least
 * this share of headers-parsed → finish: the reader, not the server, set the pace. write()'s
 * false alone says little: it returns false for every 64 KiB chunk, which reaches the stream's
 * highWaterMark by itself before the kernel has even been asked (Node docs: writable.write()).
 * Measured at the lesson's 64 MiB/s reader: 75 to 92 % of the server's time in 100 --quick runs
 * (at 128 MiB/s, 44 to 80 % in 60: too close).
 */
export const DRAIN_SHARE = 0.5;
/**
 * The most a request head can be (Node's default --max-http-header-size, 16 KiB): a connection
 * that read no more than this before its 413 read the headers only, no body.
 */
const HEAD_MAX_BYTES = 16 * 1024;
/**
 * A late body check costs the server "much longer" when its time from headers parsed to the 413
 * is at least this many times the early check's: reading a body 32 times the limit (tens of ms)
 * against answering from the headers (tens to hundreds of µs). Measured on the server, not the
 * client: the client's time to the 413 also holds its connect and its garbage collections (one
 * took 9 ms after the slow-reader part had read 64 MiB).
 */
export const LATE_FACTOR = 5;
// The early time is the median of three uploads: one garbage collection in the server (6 ms,
// seen in 1 of 20 runs just after the slow reader) would otherwise make it as long as the late one.

/** The server's time from parsing a request's headers to writing its answer, µs. */
export function serverAnswerUs(r: StagedRequest | undefined): number | undefined {
  return r && between(r, ['headers-parsed', 'server'], ['response-headers-written', 'server']);
}

function request(g: StagesGroup | undefined, label: string): StagedRequest | undefined {
  return g?.requests.find((q) => q.label === label);
}

/** Whether the light request's headers were parsed after the heavy scrypt ended, or before. */
function parsedVsHeavy(g: StagesGroup | undefined): string {
  const light = request(g, 'light');
  const heavy = request(g, 'heavy');
  const written = light && at(light, 'request-written', 'client');
  const parsed = light && at(light, 'headers-parsed', 'server');
  const heavyEnd = heavy && at(heavy, 'scrypt', 'server');
  if (written === undefined || parsed === undefined || heavyEnd === undefined) return 'unmeasured';
  if (written >= heavyEnd) return 'sent-after-heavy-ended'; // the two never overlapped: nothing to see
  return parsed >= heavyEnd ? 'after-heavy-scrypt' : 'before-heavy-scrypt';
}

/** The blocked part's lines: when the light request was parsed against the heavy scrypt. */
export function blockedLines(r: StagesResult): string[] {
  const p = part(r, 'blocked');
  if (!p) return [];
  const blocking = group(p, 'blocking');
  const light = request(blocking, 'light');
  const longest = light ? longestStage(light) : undefined;
  return [
    line('blocking', 'light-parsed', parsedVsHeavy(blocking)),
    line('blocking', 'light-waited-in', longest ? `${longest.side}-${longest.stage}` : 'unmeasured'),
    line('pooled', 'light-parsed', parsedVsHeavy(group(p, 'pooled'))),
  ];
}

/** How much of the body the server queued in memory at most. */
function queuedVerdict(q: StagedRequest | undefined, chunkBytes: number): string {
  const queued = q?.extra.queuedMaxBytes;
  const body = q?.extra.responseBytes;
  if (queued === undefined || body === undefined) return 'unmeasured';
  if (queued <= FEW_CHUNKS * chunkBytes) return 'a-few-chunks';
  if (queued >= MOST_SHARE * body) return 'most-of-the-body';
  return 'in-between';
}

/** The export's chunk size, bytes. */
export const CHUNK_BYTES = EXPORT_CHUNK_BYTES;

/** When the handler ended against finish: at finish (it held on to the end) or long before. */
function handlerEnds(q: StagedRequest | undefined): string {
  const gap = q && between(q, ['handler-end', 'server'], ['finish', 'server']);
  const serverTime = q && between(q, ['headers-parsed', 'server'], ['finish', 'server']);
  if (gap === undefined || !serverTime) return 'unmeasured';
  return gap <= AT_FINISH_SHARE * serverTime
    ? 'at-finish'
    : gap >= MOST_SHARE * serverTime
      ? 'long-before-finish'
      : 'in-between';
}

/** The slow-reader part's lines: drain waits, when the handler ended, what the server queued. */
export function slowReaderLines(r: StagesResult): string[] {
  const p = part(r, 'slow-reader');
  if (!p) return [];
  const honoured = request(group(p, 'backpressure'), 'export');
  const ignored = request(group(p, 'ignoring-backpressure'), 'export');
  const serverTime = honoured && between(honoured, ['headers-parsed', 'server'], ['finish', 'server']);
  const drain = honoured?.extra.drainWaitUs;
  return [
    line(
      'backpressure',
      'waited-for-drain',
      drain !== undefined && serverTime
        ? drain >= DRAIN_SHARE * serverTime
          ? 'most-of-the-time'
          : 'briefly'
        : 'unmeasured',
    ),
    line('backpressure', 'handler-ends', handlerEnds(honoured)),
    line('backpressure', 'queued', queuedVerdict(honoured, CHUNK_BYTES)),
    line('ignoring-backpressure', 'handler-ends', handlerEnds(ignored)),
    line('ignoring-backpressure', 'queued', queuedVerdict(ignored, CHUNK_BYTES)),
  ];
}

/** The early check's requests (three, the shape takes the median) and the late check's one. */
export function uploads(p: StagesPart | undefined): { early: StagedRequest[]; late: StagedRequest | undefined } {
  return { early: group(p, 'early')?.requests ?? [], late: group(p, 'late')?.requests[0] };
}

/** The body-limit part's lines: the early and the late check's status, bytes read and time to the 413. */
export function bodyLimitLines(r: StagesResult): string[] {
  const p = part(r, 'body-limit');
  if (!p) return [];
  const { early, late } = uploads(p);
  const read = (qs: StagedRequest[]) => {
    const n = qs.length ? Math.max(...qs.map((q) => q.extra.socketBytesRead ?? Infinity)) : undefined;
    return n === undefined || n === Infinity
      ? 'unmeasured'
      : n <= HEAD_MAX_BYTES
        ? 'headers-only'
        : n >= r.uploadBytes
          ? 'whole-body'
          : 'part-of-the-body';
  };
  const statuses = [...new Set(early.map((q) => q.status))];
  const sent = early.length ? Math.max(...early.map((q) => q.extra.bodyBytesSent ?? Infinity)) : undefined;
  const earlyT = medianOf(early.map(serverAnswerUs));
  const lateT = serverAnswerUs(late);
  return [
    line('early', 'status', statuses.length === 1 ? statuses[0]! : statuses.length ? 'mixed' : 'none'),
    line('early', 'body-sent', sent === undefined || sent === Infinity ? 'unmeasured' : sent === 0 ? 'none' : 'some'),
    line('early', 'server-read', read(early)),
    line('late', 'status', late?.status ?? 'none'),
    line('late', 'server-read', read(late ? [late] : [])),
    line(
      'late-vs-early',
      'server-time-to-413',
      earlyT && lateT ? (lateT >= LATE_FACTOR * earlyT ? 'much-longer' : 'similar') : 'unmeasured',
    ),
  ];
}
