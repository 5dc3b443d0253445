/**
 * The `stages` experiment's shape: what each part shows on any machine. Mostly the order and the
 * presence of stages. The connection parts (keep-alive, proxy) are here, with one ratio
 * (HOP_FACTOR); the server's own parts are in shape-server.ts. Never a stage's length in µs.
 */
import { CANNOT_SHOW, line, splitLine } from '../report/shape.ts';
import {
  at,
  between,
  connected,
  group,
  hopsUs,
  medianOf,
  part,
  PARTS,
  type PartName,
  type Side,
  type StagedRequest,
  type StagesGroup,
  type StagesResult,
} from './report.ts';
import { blockedLines, bodyLimitLines, slowReaderLines } from './shape-server.ts';

/** The proxies of the proxy part, besides `direct`. */
export const PROXIES = ['builtin', 'nginx'] as const;
/**
 * A proxy's hops are "above direct" at this many times direct's median: the proxy reads, parses
 * and writes the request and the response once more, in another process. The kit's balancer, in
 * JavaScript, measured 3.1 to 13.8 times direct's in 100 --quick runs on Node 20 to 26 (2 cores;
 * the median of 7 requests each). nginx, 0.6 to 2.9 times: too close to direct for any line.
 */
export const HOP_FACTOR = 2;

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
    const keys = [
      'upstream-connect',
      'upstream-connection',
      ...(name === 'builtin' ? ['proxy-hops', 'proxy-stages'] : []),
    ];
    if (!g) return keys.map((k) => line(name, k, CANNOT_SHOW));
    const hops = groupHopsUs(g);
    const above =
      hops !== undefined && direct !== undefined
        ? hops >= HOP_FACTOR * direct
          ? 'above-direct'
          : 'near-direct'
        : 'unmeasured';
    const builtinOnly =
      name === 'builtin' ? [line(name, 'proxy-hops', above), line(name, 'proxy-stages', proxyPath(g))] : [];
    return [
      line(name, 'upstream-connect', upstreamConnect(g)),
      line(name, 'upstream-connection', upstreamConnection(g)),
      ...builtinOnly,
    ];
  });
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
  fresh:
    'a request with Connection: close should open its own connection and see it closed after finish; did the client reuse a connection?',
  'keep-alive':
    'on a kept-alive connection only the first request connects; did the server or the client close it between requests (Connection: close, a keep-alive timeout shorter than the gap)?',
  builtin:
    "the kit's balancer keeps its upstream connections alive, adds a second pair of hops, and with --stages stamps its own stages between the client's and the server's; was it started with --keepalive off or without --stages, or did the direct run go through a proxy too?",
  nginx:
    'nginx keeps upstream connections only with keepalive in its upstream block and HTTP/1.1 to the upstream (servers/lib/balancer/nginx-config.ts)',
  blocking:
    'with scryptSync nothing reads the light request until the heavy scrypt ends; if it was parsed earlier, the heavy request was too short (a small --cost) or did not reach the server first',
  pooled:
    'with crypto.scrypt the event loop stays free, so the light request is parsed at once; if not, something else blocked the loop',
  backpressure:
    "an export that waits for 'drain' when write() returns false lasts until the last chunk is taken; a reader as fast as the export (a large --read-mib-s), or a body smaller than the kernel's socket buffers, keeps those waits short",
  'ignoring-backpressure':
    'without waiting for drain, every chunk the reader has not taken yet queues in the server and the handler ends early; a reader about as fast as the export keeps that queue short',
  early:
    "an early check answers Expect: 100-continue with 413 before the body is sent, so the connection reads the request's head only; did the client send the body without waiting?",
  late: 'a late check reads the whole body before answering; did the upload reach its full size, or pass the late read cap?',
  'late-vs-early':
    'reading the whole body should cost far more than answering from the headers; was the upload small next to the limit?',
};
