/**
 * The numbers behind the `stages` shape (for the class roll-up and --predict), its --predict
 * questions, and what a machine without nginx could not show.
 */
import { measure, ratio, type Measure } from '../report/measures.ts';
import { SHARE_OF_HEAVY, type Question } from '../report/predictions.ts';
import { groupHopsUs, HOP_FACTOR, PROXIES } from './shape.ts';
import {
  DRAIN_SHARE,
  FEW_CHUNKS,
  LATE_FACTOR,
  MOST_SHARE,
  CHUNK_BYTES,
  serverAnswerUs,
  AT_FINISH_SHARE,
  uploads,
} from './shape-server.ts';
import {
  at,
  between,
  connected,
  group,
  medianOf,
  part,
  PARTS,
  timeToFirstByteUs,
  type StagedRequest,
  type StagesGroup,
  type StagesResult,
} from './report.ts';

const LESSON = 'lessons/09-request-stages.md';

function only(g: StagesGroup | undefined, label: string): StagedRequest | undefined {
  return g?.requests.find((q) => q.label === label);
}

/**
 * The light request's wait before its headers were parsed, as a share of the heavy scrypt's time
 * left when it was written: near 1 when it waited for the heavy one, near 0 when it did not.
 */
function lightWaitShare(g: StagesGroup | undefined): number | undefined {
  const light = only(g, 'light');
  const heavy = only(g, 'heavy');
  if (!light || !heavy) return undefined;
  const wait = between(light, ['request-written', 'client'], ['headers-parsed', 'server']);
  const written = at(light, 'request-written', 'client');
  const heavyEnd = at(heavy, 'scrypt', 'server');
  return written === undefined || heavyEnd === undefined ? undefined : ratio(wait, heavyEnd - written);
}

function keepAliveMeasures(r: StagesResult): Measure[] {
  const p = part(r, 'keep-alive');
  const fresh = group(p, 'fresh')?.requests ?? [];
  const kept = group(p, 'keep-alive')?.requests ?? [];
  return [
    ...measure(
      'keep-alive-requests-connecting',
      'kept-alive connection: requests that opened a connection',
      'requests',
      p ? kept.filter(connected).length : undefined,
      { line: 'keep-alive  connect' },
    ),
    ...measure(
      'fresh-connect',
      'fresh connection: request start to connected, median',
      'µs',
      medianOf(fresh.map((q) => between(q, ['request-start', 'client'], ['connect', 'client']))),
    ),
    ...measure(
      'fresh-vs-keep-alive-first-byte',
      'time to the first response byte, fresh over kept-alive, median',
      '×',
      ratio(medianOf(fresh.map(timeToFirstByteUs)), medianOf(kept.slice(1).map(timeToFirstByteUs))),
    ),
  ];
}

function proxyMeasures(r: StagesResult): Measure[] {
  const p = part(r, 'proxy');
  const direct = groupHopsUs(group(p, 'direct'));
  return [
    ...measure('direct-hops', 'direct: hops outside the programs, median', 'µs', direct),
    ...PROXIES.flatMap((name) =>
      measure(
        `${name}-hops-vs-direct`,
        `${name}: hops outside the programs over direct's, median`,
        '×',
        ratio(groupHopsUs(group(p, name)), direct),
        { line: `${name}  proxy-hops`, threshold: HOP_FACTOR },
      ),
    ),
  ];
}

function laterMeasures(r: StagesResult): Measure[] {
  const blocked = part(r, 'blocked');
  const slow = part(r, 'slow-reader');
  const honoured = only(group(slow, 'backpressure'), 'export');
  const ignored = only(group(slow, 'ignoring-backpressure'), 'export');
  const share = (q: StagedRequest | undefined) =>
    q?.extra.responseBytes ? (100 * (q.extra.queuedMaxBytes ?? 0)) / q.extra.responseBytes : undefined;
  const serverTime = honoured && between(honoured, ['headers-parsed', 'server'], ['finish', 'server']);
  const handlerToFinish = (q: StagedRequest | undefined) =>
    q &&
    ratio(
      between(q, ['handler-end', 'server'], ['finish', 'server']),
      between(q, ['headers-parsed', 'server'], ['finish', 'server']),
    );
  const pct = (x: number | undefined) => (x === undefined ? undefined : 100 * x);
  const { early, late } = uploads(part(r, 'body-limit'));
  return [
    ...measure(
      'blocking-light-wait-share',
      "blocking: the light request's wait to be parsed, as a share of the heavy scrypt left",
      '×',
      lightWaitShare(group(blocked, 'blocking')),
      { line: 'blocking  light-parsed', threshold: 1 },
    ),
    ...measure(
      'pooled-light-wait-share',
      "pooled: the light request's wait to be parsed, as a share of the heavy scrypt left",
      '×',
      lightWaitShare(group(blocked, 'pooled')),
      { line: 'pooled  light-parsed', threshold: 1 },
    ),
    ...measure(
      'backpressure-handler-to-finish-share',
      "backpressure: handler-end to finish, as a share of the server's time",
      '%',
      pct(handlerToFinish(honoured)),
      { line: 'backpressure  handler-ends', threshold: 100 * AT_FINISH_SHARE },
    ),
    ...measure(
      'ignoring-handler-to-finish-share',
      "ignoring backpressure: handler-end to finish, as a share of the server's time",
      '%',
      pct(handlerToFinish(ignored)),
      { line: 'ignoring-backpressure  handler-ends', threshold: 100 * MOST_SHARE },
    ),
    ...measure(
      'backpressure-drain-share',
      "backpressure: the server's time spent waiting for drain",
      '%',
      honoured?.extra.drainWaitUs === undefined || !serverTime
        ? undefined
        : (100 * honoured.extra.drainWaitUs) / serverTime,
      { line: 'backpressure  waited-for-drain', threshold: 100 * DRAIN_SHARE },
    ),
    ...measure(
      'backpressure-queued-share',
      'backpressure: the most the server queued, as a share of the body',
      '%',
      share(honoured),
      { line: 'backpressure  queued', threshold: (100 * FEW_CHUNKS * CHUNK_BYTES) / r.exportBytes },
    ),
    ...measure(
      'ignoring-queued-share',
      'ignoring backpressure: the most the server queued, as a share of the body',
      '%',
      share(ignored),
      { line: 'ignoring-backpressure  queued', threshold: 100 * MOST_SHARE },
    ),
    ...measure(
      'late-vs-early-server-time-to-413',
      "the server's time from headers parsed to the 413, late check over early check",
      '×',
      ratio(serverAnswerUs(late), medianOf(early.map(serverAnswerUs))),
      { line: 'late-vs-early  server-time-to-413', threshold: LATE_FACTOR },
    ),
  ];
}

export function measures(r: StagesResult): Measure[] {
  return [...keepAliveMeasures(r), ...proxyMeasures(r), ...laterMeasures(r)];
}

/** Why lines printed cannot-show-on-this-machine were not shown: nginx missing, a part left out with --part. */
export function notShown(r: StagesResult): string[] {
  const left = PARTS.filter((name) => !part(r, name));
  return [
    ...Object.entries(part(r, 'proxy')?.missing ?? {}).map(([name, why]) => `${name}: ${why}`),
    ...(left.length
      ? [`not run (${r.mine ? 'the exercise runs slow-reader alone' : '--part'}): ${left.join(', ')}`]
      : []),
  ];
}

export const predictions: Question[] = [
  {
    id: 'proxy-hops',
    ask: "A loan sent through the kit's balancer instead of straight to the server: the hops outside both programs (request written → parsed, response written → parsed) take how many times as long?",
    measure: 'builtin-hops-vs-direct',
    choices: [
      { label: 'about the same (under 2×)', to: 2 },
      { label: '2× to 10×', from: 2, to: 10 },
      { label: '10× or more', from: 10 },
    ],
    explain:
      'The balancer reads, parses and writes the request and the response once more, in another process: two more trips through the kernel and two more wake-ups.',
    lesson: `${LESSON}, Part 2 · proxy`,
  },
  {
    id: 'blocked-light-wait',
    ask: 'scryptSync runs on the event loop; a light loan arrives 50 ms later on an open connection. How much of the heavy scrypt left does it wait before its headers are parsed?',
    measure: 'blocking-light-wait-share',
    choices: SHARE_OF_HEAVY,
    explain:
      'Its bytes reach the kernel at once, but nothing reads or parses them until scryptSync returns: the wait shows up before headers-parsed, not in the handler.',
    lesson: `${LESSON}, Part 3 · blocked`,
  },
  {
    id: 'ignoring-backpressure-queue',
    ask: 'A 32 MiB export to a slow reader, written without waiting for drain: at its peak, how much of the body does the server hold in memory?',
    measure: 'ignoring-queued-share',
    choices: [
      { label: 'almost none (under 10 %)', to: 10 },
      { label: 'some (10 % to 50 %)', from: 10, to: 50 },
      { label: 'most of it (50 % or more)', from: 50 },
    ],
    explain:
      'write() never blocks: what the kernel cannot take yet is queued in the process, so a server that ignores false holds whatever the reader has not read.',
    lesson: `${LESSON}, Part 4 · slow-reader`,
  },
  {
    id: 'late-body-check',
    ask: "A 32 MiB upload over a 1 MiB limit: the server's time from headers parsed to its 413 when it reads the body first, over the time when it checks Content-Length first:",
    measure: 'late-vs-early-server-time-to-413',
    choices: [
      { label: 'about the same (under 2×)', to: 2 },
      { label: '2× to 5×', from: 2, to: 5 },
      { label: '5× or more', from: 5 },
    ],
    explain:
      'An early check answers from the headers, before the body is sent; a late one waits for 32 MiB to cross the connection and be read, and holds it in memory meanwhile.',
    lesson: `${LESSON}, Part 5 · body-limit`,
  },
];
