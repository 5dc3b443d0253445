/**
 * The routes of lesson 9's server, each stamping its own stages on a StageRecorder:
 *
 *   POST /loans            {"book": 1..1000, "member": "<name>"}: reads the body, one SQLite read
 *                          and one small pooled scrypt (the member's password check) → 201
 *   GET  /books/:id        one SQLite read: a request to open in a browser, to see Server-Timing
 *   GET  /catalog/export?mb=N[&ignore-backpressure=0|1]
 *                          N MiB in 64 KiB chunks, honouring backpressure or not (export.ts)
 *   GET  /catalog/export/running
 *                          how many export loops are in progress
 *   POST /upload?check=early|late
 *                          a body limit: early looks at Content-Length before reading (and answers
 *                          Expect: 100-continue with 413, so the body is never sent); late reads the
 *                          whole body first (up to LATE_READ_CAP), as a naive handler does
 *
 * Every response carries the stages so far as a Server-Timing header.
 */
import type http from 'node:http';
import { HttpError, readBody, readJsonBody, sendJson, type Routes } from '../serve/http.ts';
import { hashOnThreadPool, type ScryptCost } from '../cpu/scrypt-cost.ts';
import type { SqliteDatabase } from '../state/sqlite.ts';
import { exportRoute, type ExportLoop, type RunningExports } from './export.ts';
import { isStageId, STAGE_ID_RULE, type StageRecorder } from './stamps.ts';

/** The upload's default limit, bytes. */
export const DEFAULT_BODY_LIMIT = 1024 * 1024;
/** The late check reads at most this many times the limit before it gives up (and closes): a bound on memory. */
const LATE_READ_CAP = 64;
/** Books in the catalogue table. */
const BOOKS = 1000;

/** An in-memory catalogue of BOOKS books, for the loan route's SQLite read. */
export function seedCatalogue(db: SqliteDatabase): void {
  db.exec('CREATE TABLE books (id INTEGER PRIMARY KEY, title TEXT NOT NULL, on_loan INTEGER NOT NULL DEFAULT 0)');
  const insert = db.prepare('INSERT INTO books (id, title) VALUES (?, ?)');
  db.transaction(() => {
    for (let i = 1; i <= BOOKS; i++) insert.run(i, `Book ${i}`);
  })();
}

/** Sends `body` as JSON after stamping the stages and setting Server-Timing. */
function answer(
  rec: StageRecorder,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  status: number,
  body: unknown,
  headers: http.OutgoingHttpHeaders = {},
): void {
  rec.stamp(req, 'handler-end');
  const timing = rec.serverTiming(req);
  rec.stamp(req, 'response-headers-written');
  sendJson(res, status, body, timing ? { 'server-timing': timing, ...headers } : headers);
}

function loanRoute(rec: StageRecorder, db: SqliteDatabase, cost: ScryptCost): http.RequestListener {
  const find = db.prepare('SELECT id, title, on_loan FROM books WHERE id = ?');
  return async (req, res) => {
    rec.stamp(req, 'handler-start');
    const body = (await readJsonBody(req, 64 * 1024)) as { book?: unknown; member?: unknown } | null;
    rec.stamp(req, 'body-read');
    const book = body?.book;
    if (typeof book !== 'number' || !Number.isInteger(book) || book < 1 || book > BOOKS)
      throw new HttpError(400, `book: an integer from 1 to ${BOOKS}`);
    if (typeof body?.member !== 'string' || body.member === '') throw new HttpError(400, 'member: a non-empty string');
    const row = find.get(book) as { id: number; title: string };
    rec.stamp(req, 'sqlite-read');
    await hashOnThreadPool(body.member, cost);
    rec.stamp(req, 'scrypt');
    answer(rec, req, res, 201, { loan: { book: row.id, title: row.title, member: body.member } });
  };
}

/** The upload route's check, from ?check=; 400 naming the field otherwise. */
function uploadCheck(url: URL): 'early' | 'late' {
  const check = url.searchParams.get('check') ?? 'early';
  if (check !== 'early' && check !== 'late') throw new HttpError(400, 'check: early or late');
  return check;
}

function tooLarge(
  rec: StageRecorder,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  limit: number,
  readBytes: number,
  close: boolean,
): void {
  rec.note(req, 'bodyBytesRead', readBytes);
  answer(
    rec,
    req,
    res,
    413,
    { error: `body over ${limit} bytes`, limitBytes: limit, readBytes },
    close ? { connection: 'close' } : {},
  );
}

function uploadRoute(rec: StageRecorder, limit: number): http.RequestListener {
  return async (req, res) => {
    rec.stamp(req, 'handler-start');
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const check = uploadCheck(url);
    // Node reads and drops the rest of an unread body once the answer ends, keeping the
    // connection; closing it instead could reset it under a client still sending, losing the 413.
    if (check === 'early' && Number(req.headers['content-length']) > limit)
      return tooLarge(rec, req, res, limit, 0, false);
    const { size, complete } = await readBody(req, check === 'early' ? limit : LATE_READ_CAP * limit); // held whole, as a naive handler does
    rec.stamp(req, 'body-read');
    // Past the cap the late check gives up on the connection rather than read on without end.
    if (size > limit) return tooLarge(rec, req, res, limit, size, check === 'late' && !complete);
    answer(rec, req, res, 201, { stored: size });
  };
}

/**
 * The 'checkContinue' listener: an early check answers 413 before the client sends the body;
 * anything else gets 100 Continue and goes on as a request (the router answers a bad target or a
 * bad ?check= with 400). Node docs: http.Server 'checkContinue'.
 */
export function continueOrRefuse(
  rec: StageRecorder,
  server: http.Server,
  limit: number,
): (req: http.IncomingMessage, res: http.ServerResponse) => void {
  return (req, res) => {
    let early = false;
    try {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      early =
        url.pathname === '/upload' && uploadCheck(url) === 'early' && Number(req.headers['content-length']) > limit;
    } catch {
      /* not a target this listener can judge: the router will answer it */
    }
    if (early) {
      rec.stamp(req, 'handler-start');
      return tooLarge(rec, req, res, limit, 0, false); // Node closes it: a final status without 100 Continue
    }
    res.writeContinue();
    server.emit('request', req, res);
  };
}

/**
 * The routes, for router(). `cost` is the loan's pooled scrypt; `limit` the upload limit, bytes;
 * `mine` the student's export loop (lesson 9's exercise), for the export that honours backpressure.
 */
export function stageRoutes(
  rec: StageRecorder,
  db: SqliteDatabase,
  cost: ScryptCost,
  limit: number,
  mine?: ExportLoop,
): Routes {
  const upload = uploadRoute(rec, limit);
  const running: RunningExports = { count: 0 };
  const find = db.prepare('SELECT id, title, on_loan FROM books WHERE id = ?');
  return {
    '/loans': { POST: loanRoute(rec, db, cost) },
    '/books/:id': {
      GET: (req, res, _url, params) => {
        rec.stamp(req, 'handler-start');
        const id = Number(params.id);
        if (!Number.isInteger(id) || id < 1 || id > BOOKS)
          throw new HttpError(400, `id: an integer from 1 to ${BOOKS}`);
        const row = find.get(id);
        rec.stamp(req, 'sqlite-read');
        answer(rec, req, res, 200, { book: row });
      },
    },
    '/catalog/export': { GET: exportRoute(rec, running, mine) },
    '/catalog/export/running': { GET: (_req, res) => sendJson(res, 200, { running: running.count }) },
    '/upload': { POST: upload },
    '/stages/:id': {
      GET: async (_req, res, _url, params) => {
        if (!isStageId(params.id!)) throw new HttpError(400, `id: ${STAGE_ID_RULE}`);
        const record = await rec.complete(params.id!, 2000);
        if (!record)
          return sendJson(res, 404, {
            error: `id: no complete record of a request sent with ?sid=${params.id} (within 2 s)`,
          });
        const start = record.events[0]?.atUs ?? 0;
        sendJson(res, 200, { ...record, events: record.events.map((e) => ({ ...e, offsetUs: e.atUs - start })) });
      },
    },
  };
}
