/**
 * The `stages` experiment's shape: what each part shows on any machine. Mostly the order and the
 * presence of stages; besides those, two ratios (HOP_FACTOR, LATE_FACTOR), three shares of the
 * server's time (DRAIN_SHARE, AT_FINISH_SHARE, MOST_SHARE) and two byte sizes (FEW_CHUNKS chunks,
 * a request head), each with the reason for its value. Never a stage's length in µs.
 */
import { EXPORT_CHUNK_BYTES } from '../../servers/lib/stages/routes.ts';
import { CANNOT_SHOW, line, splitLine } from '../report/shape.ts';
import { at, between, connected, group, hopsUs, longestStage, medianOf, part, PARTS, type PartName, type Side, type StagedRequest, type StagesGroup, type StagesPart, type StagesResult } from './report.ts';

/** The proxies of the proxy part, besides `direct`. */
export const PROXIES = ['builtin', 'nginx'] as const;
/**
 * A proxy's hops are "above direct" at this many times direct's median: the proxy reads, parses
 * and writes the request and the response once more, in another process. The kit's balancer, in
 * JavaScript, measured 3.1 to 13.8 times direct's in 100 --quick runs on Node 20 to 26 (2 cores;
 * the median of 7 requests each). nginx, 0.6 to 2.9 times: too close to direct for any line.
 */
export const HOP_FACTOR = 2;
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

/** How many of `reqs` satisfy `f`: every, none or some (`first-request-only` when only the first). */
function howMany(reqs: StagedRequest[], f: (r: StagedRequest) => boolean): string {
  const hits = reqs.map(f);
  if (hits.length === 0) return 'no-requests';
  if (hits.every(Boolean)) return 'every-request';
  if (!hits.some(Boolean)) return 'no-request';
  if (hits[0] && !hits.slice(1).some(Boolean)) return 'first-request-only';
  return 'some-requests';
}

function afterFinish(g: StagesGroup | undefined): string {
  const after = new Set(g?.requests.map((r) => r.connectionAfter ?? 'unknown'));
  return after.size === 1 ? [...after][0]! : 'mixed';
}

function keepAliveLines(r: StagesResult): string[] {
  const p = part(r, 'keep-alive');
  if (!p) return [];
  const fresh = group(p, 'fresh');
  const kept = group(p, 'keep-alive');
  return [
    line('fresh', 'connect', howMany(fresh?.requests ?? [], connected)),
    line('fresh', 'connection-after', afterFinish(fresh)),
    line('keep-alive', 'connect', howMany(kept?.requests ?? [], connected)),
    line('keep-alive', 'connection-after', afterFinish(kept)),
  ];
}

/** Whether the upstream connection was opened for every request, or reused after the first. */
function upstreamConnection(g: StagesGroup): string {
  const later = g.requests.slice(1);
  if (later.length === 0) return 'too-few-requests';
  const accepted = later.filter((q) => at(q, 'accept', 'server') !== undefined).length;
  return accepted === 0 ? 'reused' : accepted === later.length ? 'new-each-request' : 'mixed';
}

/** The median hops of a group's requests after the first (the first may open connections). */
export function groupHopsUs(g: StagesGroup | undefined): number | undefined {
  return medianOf((g?.requests.slice(1) ?? []).map(hopsUs));
}

/**
 * When the first request's upstream connection was opened: a proxy opens it only once a request
 * has come to forward, so the server accepts after the client has written.
 */
function upstreamConnect(g: StagesGroup): string {
  const first = g.requests[0];
  const accepted = first && at(first, 'accept', 'server');
  const written = first && at(first, 'request-written', 'client');
  if (accepted === undefined || written === undefined) return 'no-new-connection';
  return accepted > written ? 'after-request-written' : 'before-request-written';
}

/**
 * The path through the kit's balancer, in the order cause and effect demand: the client writes,
 * the balancer parses and writes upstream, the server parses and answers, the balancer parses the
 * answer's head, the client parses it. Each stamp is taken before a write or after a read, so
 * the order holds whatever the scheduler does; a request that went around the balancer has no
 * balancer stamps ('not-recorded').
 */
const PROXY_PATH: [string, Side][] = [
  ['request-written', 'client'],
  ['headers-parsed', 'proxy'],
  ['upstream-request-written', 'proxy'],
  ['headers-parsed', 'server'],
  ['response-headers-written', 'server'],
  ['upstream-headers-parsed', 'proxy'],
  ['response-headers-parsed', 'client'],
];

function proxyPath(g: StagesGroup): string {
  const times = g.requests.map((q) => PROXY_PATH.map(([stage, side]) => at(q, stage, side)));
  if (times.length === 0 || times.some((t) => t.some((x) => x === undefined))) return 'not-recorded';
  return times.every((t) => t.every((x, i) => i === 0 || x! >= t[i - 1]!)) ? 'in-causal-order' : 'out-of-order';
}

/** The balancer's own work on a request, µs: parsed → written upstream, plus the answer's head parsed → finish. Median after the first. */
export function proxyWorkUs(g: StagesGroup | undefined): number | undefined {
  return medianOf(
    (g?.requests.slice(1) ?? []).map((q) => {
      const a = between(q, ['headers-parsed', 'proxy'], ['upstream-request-written', 'proxy']);
      const b = between(q, ['upstream-headers-parsed', 'proxy'], ['finish', 'proxy']);
      return a === undefined || b === undefined ? undefined : a + b;
    }),
  );
}

function proxyLines(r: StagesResult): string[] {
  const p = part(r, 'proxy');
  if (!p) return [];
  const direct = groupHopsUs(group(p, 'direct'));
  return PROXIES.flatMap((name) => {
    const g = group(p, name);
    const keys = ['upstream-connect', 'upstream-connection', ...(name === 'builtin' ? ['proxy-hops', 'proxy-stages'] : [])];
    if (!g) return keys.map((k) => line(name, k, CANNOT_SHOW));
    const hops = groupHopsUs(g);
    const above = hops !== undefined && direct !== undefined ? (hops >= HOP_FACTOR * direct ? 'above-direct' : 'near-direct') : 'unmeasured';
    const builtinOnly = name === 'builtin' ? [line(name, 'proxy-hops', above), line(name, 'proxy-stages', proxyPath(g))] : [];
    return [line(name, 'upstream-connect', upstreamConnect(g)), line(name, 'upstream-connection', upstreamConnection(g)), ...builtinOnly];
  });
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

function blockedLines(r: StagesResult): string[] {
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
  return gap <= AT_FINISH_SHARE * serverTime ? 'at-finish' : gap >= MOST_SHARE * serverTime ? 'long-before-finish' : 'in-between';
}

function slowReaderLines(r: StagesResult): string[] {
  const p = part(r, 'slow-reader');
  if (!p) return [];
  const honoured = request(group(p, 'backpressure'), 'export');
  const ignored = request(group(p, 'ignoring-backpressure'), 'export');
  const serverTime = honoured && between(honoured, ['headers-parsed', 'server'], ['finish', 'server']);
  const drain = honoured?.extra.drainWaitUs;
  return [
    line('backpressure', 'waited-for-drain', drain !== undefined && serverTime ? (drain >= DRAIN_SHARE * serverTime ? 'most-of-the-time' : 'briefly') : 'unmeasured'),
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

function bodyLimitLines(r: StagesResult): string[] {
  const p = part(r, 'body-limit');
  if (!p) return [];
  const { early, late } = uploads(p);
  const read = (qs: StagedRequest[]) => {
    const n = qs.length ? Math.max(...qs.map((q) => q.extra.socketBytesRead ?? Infinity)) : undefined;
    return n === undefined || n === Infinity ? 'unmeasured' : n <= HEAD_MAX_BYTES ? 'headers-only' : n >= r.uploadBytes ? 'whole-body' : 'part-of-the-body';
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
    line('late-vs-early', 'server-time-to-413', earlyT && lateT ? (lateT >= LATE_FACTOR * earlyT ? 'much-longer' : 'similar') : 'unmeasured'),
  ];
}

const LINES: Record<PartName, (r: StagesResult) => string[]> = {
  'keep-alive': keepAliveLines,
  proxy: proxyLines,
  blocked: blockedLines,
  'slow-reader': slowReaderLines,
  'body-limit': bodyLimitLines,
};

/** Every part's lines; a part left out with --part prints its keys as not shown. */
export function shape(r: StagesResult): string[] {
  return PARTS.flatMap((name) => {
    if (part(r, name)) return LINES[name](r);
    const empty = LINES[name]({ ...r, parts: [{ part: name, groups: [] }] });
    return empty.map((l) => line(splitLine(l).key, CANNOT_SHOW));
  });
}

export const hints: Record<string, string> = {
  fresh: 'a request with Connection: close should open its own connection and see it closed after finish; did the client reuse a connection?',
  'keep-alive': 'on a kept-alive connection only the first request connects; did the server or the client close it between requests (Connection: close, a keep-alive timeout shorter than the gap)?',
  builtin: "the kit's balancer keeps its upstream connections alive, adds a second pair of hops, and with --stages stamps its own stages between the client's and the server's; was it started with --keepalive off or without --stages, or did the direct run go through a proxy too?",
  nginx: 'nginx keeps upstream connections only with keepalive in its upstream block and HTTP/1.1 to the upstream (servers/lib/balancer/nginx-config.ts)',
  blocking: 'with scryptSync nothing reads the light request until the heavy scrypt ends; if it was parsed earlier, the heavy request was too short (a small --cost) or did not reach the server first',
  pooled: 'with crypto.scrypt the event loop stays free, so the light request is parsed at once; if not, something else blocked the loop',
  backpressure: "the export waits for 'drain' when write() returns false, so its handler lasts until the last chunk is taken; a reader as fast as the export (a large --read-mib-s), or a body smaller than the kernel's socket buffers, keeps those waits short",
  'ignoring-backpressure': "without waiting for drain, every chunk the reader has not taken yet queues in the server and the handler ends early; a reader about as fast as the export keeps that queue short",
  early: "an early check answers Expect: 100-continue with 413 before the body is sent, so the connection reads the request's head only; did the client send the body without waiting?",
  late: 'a late check reads the whole body before answering; did the upload reach its full size, or pass the late read cap?',
  'late-vs-early': 'reading the whole body should cost far more than answering from the headers; was the upload small next to the limit?',
};
