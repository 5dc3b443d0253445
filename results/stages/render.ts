/**
 * The `stages` experiment for people: per part, a stage table (stage, c/s for client or server,
 * at µs from the request's start, took µs since the stage before) for one typical request of
 * each group side by side, then a one-line waterfall per request. Pure.
 */
import { machineCaption, makeChalk, makeTable } from '../report/format.ts';
import { groupHopsUs, proxyWorkUs } from './shape.ts';
import { group, timeline, type StagedRequest, type StagesGroup, type StagesPart, type StagesResult } from './report.ts';

/** Waterfall characters: each segment is drawn with the letter of the stage it ends at. */
const WATERFALL_LETTERS: Record<string, string> = {
  connect: 'c',
  accept: 'a',
  'request-written': 'w',
  'body-written': 'd',
  'first-bytes-read': 'r',
  'headers-parsed': 'p',
  'handler-start': 'h',
  'body-read': 'b',
  'sqlite-read': 'q',
  scrypt: 's',
  'handler-end': 'e',
  'response-headers-written': 'o',
  finish: 'f',
  'response-headers-parsed': '1',
  'upstream-connect': 'u',
  'upstream-request-written': 'g',
  'upstream-headers-parsed': 'y',
  'last-byte': 'l',
  close: 'x',
};
const WIDTH = 48;

const TITLES: Record<StagesPart['part'], (r: StagesResult) => string> = {
  'keep-alive': () => 'a fresh connection per request, then one kept-alive connection',
  proxy: () => "the same request directly, through the kit's balancer and through nginx",
  blocked: (r) => `a light loan sent ${r.offsetMs} ms after a heavy scrypt, on the event loop and on the thread pool`,
  'slow-reader': (r) =>
    `a ${r.exportBytes / 1024 ** 2} MiB export to a reader taking ${Math.round(r.readBytesPerS / 1024 ** 2)} MiB/s, with backpressure and without`,
  'body-limit': (r) =>
    `a ${r.uploadBytes / 1024 ** 2} MiB upload over a ${r.bodyLimitBytes / 1024 ** 2} MiB limit, checked before reading it (early) and after (late)`,
};

/** A request's one-line waterfall, `width` characters over its whole time. */
export function waterfall(r: StagedRequest, width = WIDTH): string {
  const s = r.stamps;
  if (s.length < 2) return ''.padEnd(width);
  const first = s[0]!.atUs;
  const total = Math.max(s.at(-1)!.atUs - first, 1);
  let out = '';
  let seg = 1;
  for (let i = 0; i < width; i++) {
    const t = first + ((i + 0.5) / width) * total;
    while (seg < s.length - 1 && s[seg]!.atUs < t) seg++;
    out += WATERFALL_LETTERS[s[seg]!.stage] ?? '?';
  }
  return out;
}

/**
 * The group's typical request: its light request when it has one (the blocked part's point), else
 * the median by total time, among the requests after the first when there are three or more.
 */
export function typical(g: StagesGroup): StagedRequest | undefined {
  const light = g.requests.find((r) => r.label === 'light');
  if (light) return light;
  const pool = g.requests.length >= 3 ? g.requests.slice(1) : g.requests;
  const total = (r: StagedRequest) => (r.stamps.at(-1)?.atUs ?? 0) - (r.stamps[0]?.atUs ?? 0);
  const sorted = [...pool].sort((a, b) => total(a) - total(b));
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

const us = (n: number | undefined) => (n === undefined ? '' : Math.round(n).toLocaleString('en-US'));
/** Bytes for people: `162 B`, `64 KiB`. */
const size = (bytes: number | undefined) =>
  bytes === undefined ? '?' : bytes < 1024 ? `${bytes} B` : `${us(bytes / 1024)} KiB`;

/**
 * One table, the typical request of each group side by side: each column pair is that request's
 * own stages in time order (c client, s server), with when each happened after the request
 * started and how long after the stage before it; the longest wait in each column is red.
 */
function stageTable(p: StagesPart, color: boolean): string {
  const c = makeChalk(color);
  const picks = p.groups
    .map((g) => ({ g, r: typical(g) }))
    .filter((x): x is { g: StagesGroup; r: StagedRequest } => x.r !== undefined);
  const lines = picks.map(({ r }) => timeline(r));
  const head = picks.flatMap(({ g, r }) => [`${g.name} · ${r.label}`, 'at µs', 'took µs']);
  const table = makeTable(
    head,
    picks.flatMap(() => ['left', 'right', 'right'] as const),
  );
  const longest = lines.map((rows) => Math.max(...rows.map((row) => row.tookUs)));
  const depth = Math.max(...lines.map((rows) => rows.length));
  for (let i = 0; i < depth; i++) {
    table.push(
      lines.flatMap((rows, col) => {
        const row = rows[i];
        if (!row) return ['', '', ''];
        const took = us(row.tookUs);
        return [
          `${row.side[0]} ${row.stage}`,
          us(row.offsetUs),
          row.tookUs === longest[col] && row.tookUs > 0 ? c.red(took) : took,
        ];
      }),
    );
  }
  return table.toString();
}

function partNotes(r: StagesResult, p: StagesPart): string[] {
  const notes: string[] = [];
  if (p.part === 'proxy') {
    for (const g of p.groups)
      notes.push(
        `${g.name}: hops outside the client and the server (request written → parsed, response written → parsed), median ${us(groupHopsUs(g))} µs`,
      );
    const own = proxyWorkUs(group(p, 'builtin'));
    if (own !== undefined)
      notes.push(
        `builtin: of those, the balancer's own work (request parsed → written upstream, answer's head parsed → finish), median ${us(own)} µs`,
      );
    for (const [name, why] of Object.entries(p.missing ?? {})) notes.push(`${name}: not run: ${why}`);
  }
  if (p.part === 'slow-reader') {
    for (const g of p.groups) {
      const x = g.requests[0]?.extra ?? {};
      notes.push(
        `${g.name}: write() returned false ${x.writeFalse ?? 0} times, waited ${us((x.drainWaitUs ?? 0) / 1000)} ms for 'drain'; ` +
          `at most ${size(x.queuedMaxBytes)} queued in the server for a ${us((x.responseBytes ?? 0) / 1024 ** 2)} MiB body`,
      );
    }
  }
  if (p.part === 'body-limit') {
    for (const g of p.groups)
      for (const q of g.requests) {
        const x = q.extra;
        notes.push(
          `${g.name} · ${q.label}: ${q.status} after the client sent ${size(x.bodyBytesSent)} of body; the handler read ${size(x.bodyBytesRead)}, ` +
            `the connection ${size(x.socketBytesRead)} with the head (limit ${size(r.bodyLimitBytes)})`,
        );
      }
  }
  return notes;
}

export function render(r: StagesResult, color: boolean, caption = machineCaption(r.machine)): string {
  const c = makeChalk(color);
  const out = [
    c.bold('Lesson 9 · stages: the life of one request, stage by stage'),
    c.dim(`µs on one clock for client and server · heavy cost ${r.heavyCost} · ${caption}`),
  ];
  for (const p of r.parts) {
    out.push('', c.bold(`${p.part}: ${TITLES[p.part](r)}`));
    if (p.groups.some((g) => g.requests.length > 0)) out.push(stageTable(p, color));
    for (const g of p.groups)
      for (const q of g.requests)
        out.push(
          `  ${`${g.name} · ${q.label}`.padEnd(34)} |${waterfall(q)}| ${us((q.stamps.at(-1)?.atUs ?? 0) - (q.stamps[0]?.atUs ?? 0))} µs`,
        );
    out.push(...partNotes(r, p).map((n) => `  ${n}`));
  }
  out.push(
    '',
    c.dim(
      "c client, s server, p the kit's balancer: one clock for all. at: since the request started; took: since the stage above it, on either side; the longest in each column is red.",
    ),
    c.dim(
      `waterfall: each stretch is drawn with the letter of the stage that ends it: ${Object.entries(WATERFALL_LETTERS)
        .map(([k, v]) => `${v} ${k}`)
        .join(', ')}.`,
    ),
  );
  return out.join('\n');
}
