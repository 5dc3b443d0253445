/**
 * Lesson 10's answers battery, the same for every incident: a student's handlers file may replace
 * any handler, so every route's answers are checked. A healthy service (--incident none) and one
 * with the fix (--handlers) start side by side, get the same requests, and each pair of answers is
 * compared: searches for titles beyond ASCII and with punctuation, refused titles, pages of books
 * from the first to the last, the export gunzipped to the catalog's bytes, covers read while an
 * export runs, loans, and loans in flight when SIGTERM comes (incident-stop.ts).
 */
import { createHash } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { isDeepStrictEqual } from 'node:util';
import type { AnswerCheck, FixAnswers } from '../../../results/report/answers.ts';
import { cut } from '../../../results/report/answers.ts';
import type { ServerProcess } from '../process/launch.ts';
import { probe, type ProbeResult } from '../load/probe.ts';
import { inFlightAtStop } from './incident-stop.ts';
import type { AnswersContext } from './spec.ts';

/**
 * Titles to search for: each of the catalog's named titles (servers/incident.ts NAMED_TITLES) as a
 * reader might type part of it, in another case, with its punctuation and its question mark; a
 * title that matches many books (the first page of them is the answer); one that matches none;
 * and titles a healthy service refuses, which a fix must refuse too.
 */
export const SEARCHES: readonly string[] = [
  "neiges d'antan?",
  'SEÑORA ÑÚÑEZ &',
  'kraków: letters, 1939-1945',
  'straße (zweiter',
  'Rivers Run North?',
  'ханна',
  '東京の',
  'αθηνα: ιστορίες',
  'winter of garden',
  'the',
  'zebra',
  '50% off',
  '<script>',
  'a'.repeat(201),
];

/** Pages of /books: the first and the last, pages holding named titles, and one page per session twice. */
export const PAGES: readonly string[] = [
  'page=0',
  'page=1',
  'page=50',
  'page=7&session=s1',
  'page=8&session=s1',
  'page=7&session=s2',
  'page=350',
  'page=1999',
  'page=0&session=s3',
  'page=2000',
];

/** Covers read while an export runs. */
const COVERS = 10;
/** Loans by book: one of a named title, the default (none given), and one out of range. */
const LOANS: readonly object[] = [{ book: 7 }, { book: 1001 }, {}, { book: 40_000 }];

/** An answer's JSON body in a few words: `[20 books: #0 … #19]`, `{"error":"not a title"}`. */
export function bodyText(body: unknown): string {
  if (Array.isArray(body)) {
    const ids = body.map((b) => (b as { id?: unknown })?.id);
    if (body.length === 0) return '[]';
    if (ids.every((id) => typeof id === 'number'))
      return `[${body.length} book${body.length === 1 ? '' : 's'}: #${ids[0]}${body.length > 1 ? ` … #${ids.at(-1)}` : ''}]`;
  }
  return cut(typeof body === 'string' ? body : JSON.stringify(body), 60);
}

/** Two answers compared: the same status and the same JSON (or text) body. */
function compare(request: string, h: ProbeResult | string, y: ProbeResult | string): AnswerCheck {
  const text = (r: ProbeResult | string) => (typeof r === 'string' ? r : `${r.status} ${bodyText(r.body)}`);
  let same =
    typeof h !== 'string' && typeof y !== 'string' && h.status === y.status && isDeepStrictEqual(h.body, y.body);
  // Bodies that differ only where the summary cannot say (a book's summary text) still read apart.
  const [healthy, yours] = [text(h), text(y)];
  return { request, healthy, yours: !same && healthy === yours ? `${yours}, other fields` : yours, same };
}

/** Sends the same GET to both services; a request the fix's service does not answer is a wrong answer. */
async function both(h: ServerProcess, y: ServerProcess, path: string, method = 'GET', json?: unknown) {
  const send = (s: ServerProcess) =>
    probe(`${s.url}${path}`, { method, timeoutMs: 10_000, ...(json !== undefined ? { json } : {}) }).catch(
      (err: Error) => `no answer: ${err.message}`,
    );
  return Promise.all([send(h), send(y)]);
}

/** The catalog an export's body holds, gunzipped, in a few words; and its digest, to compare. */
function exportText(r: ProbeResult | string): { text: string; digest?: string } {
  if (typeof r === 'string') return { text: r };
  const status = r.status === 200 ? '' : `${r.status}: `;
  try {
    const catalog = gunzipSync(r.body as Buffer);
    const digest = createHash('sha256').update(catalog).digest('hex');
    return { text: `${status}gunzips to ${catalog.length.toLocaleString('en')} bytes`, digest };
  } catch (err) {
    return { text: `${status}does not gunzip (${(err as Error).message})` };
  }
}

/** The export on both services while covers are read, one after another, from each. */
async function exportAndCovers(h: ServerProcess, y: ServerProcess): Promise<AnswerCheck[]> {
  const get = (s: ServerProcess, path: string) =>
    probe(`${s.url}${path}`, { timeoutMs: 20_000, raw: true }).catch((err: Error) => `no answer: ${err.message}`);
  const covers = async (s: ServerProcess) => {
    const out: (ProbeResult | string)[] = [];
    for (let i = 0; i < COVERS; i++) out.push(await get(s, `/cover/${i}`));
    return out;
  };
  const run = (s: ServerProcess) => Promise.all([get(s, '/export'), covers(s)]);
  const [[he, hc], [ye, yc]] = await Promise.all([run(h), run(y)]);
  const [hx, yx] = [exportText(he), exportText(ye)];
  const same = hx.digest !== undefined && hx.digest === yx.digest;
  // The same length with other bytes still reads apart.
  const yours = !same && yx.digest && yx.text === hx.text ? `${yx.text}, not the catalog's` : yx.text;
  const checks: AnswerCheck[] = [{ request: 'GET /export, gunzipped', healthy: hx.text, yours, same }];
  const wrong = hc.findIndex((c, i) => !sameBytes(c, yc[i]!));
  checks.push({
    request: `GET /cover/0 … /cover/${COVERS - 1}, while /export runs`,
    healthy: `${COVERS} covers, each its own bytes`,
    yours: wrong < 0 ? `${COVERS} covers, each its own bytes` : `/cover/${wrong}: ${coverText(yc[wrong]!)}`,
    same: wrong < 0,
  });
  return checks;
}

function sameBytes(a: ProbeResult | string, b: ProbeResult | string): boolean {
  return (
    typeof a !== 'string' &&
    typeof b !== 'string' &&
    a.status === b.status &&
    (a.body as Buffer).equals(b.body as Buffer)
  );
}

function coverText(r: ProbeResult | string): string {
  return typeof r === 'string' ? r : `${r.status}, ${(r.body as Buffer).length} bytes unlike the healthy cover's`;
}

/** Runs lesson 10's battery against the handlers in `ctx.file`. */
export async function incidentAnswers(ctx: AnswersContext): Promise<FixAnswers> {
  ctx.progress.step("your handlers' answers: a healthy service and yours, side by side");
  const [h, y] = await Promise.all([
    ctx.lab.start({ server: 'incident', args: ['--port', '0', '--incident', 'none'] }),
    ctx.lab.start({ server: 'incident', args: ['--port', '0', '--handlers', ctx.file] }),
  ]);
  const checks: AnswerCheck[] = [];
  try {
    // The export takes the longest (a compression of 11 MB): it runs while the searches and pages are asked.
    const exporting = exportAndCovers(h, y);
    for (const title of SEARCHES) {
      const [a, b] = await both(h, y, `/search?title=${encodeURIComponent(title)}`);
      checks.push(compare(`GET /search?title=${cut(title, 28)}`, a, b));
    }
    for (const page of PAGES) {
      const [a, b] = await both(h, y, `/books?${page}`);
      checks.push(compare(`GET /books?${page}`, a, b));
    }
    ctx.progress.step('your handlers: the export, and covers read while it runs');
    checks.push(...(await exporting));
    for (const loan of LOANS) {
      const [a, b] = await both(h, y, '/loan', 'POST', loan);
      checks.push(compare(`POST /loan ${JSON.stringify(loan)}`, a, b));
    }
    ctx.progress.step('your handlers: loans in flight when SIGTERM comes');
    checks.push(await inFlightAtStop(h, y));
  } finally {
    await Promise.all([ctx.lab.stop(h), ctx.lab.stop(y)]);
  }
  return { healthyIs: 'the healthy service', checks };
}
