/**
 * Lesson 9's export route: GET /catalog/export?mb=N[&ignore-backpressure=0|1] sends N MiB in
 * 64 KiB chunks, made one per turn of the event loop (as a file is read). The kit's loop waits for
 * 'drain' whenever write() returns false, unless told to ignore it (then what the reader has not
 * taken queues in memory). Lesson 9's exercise puts the student's loop (a copy of
 * servers/exercises/lesson-9/export.ts) in place of the honouring one.
 *
 * Whoever's loop runs, the route measures it the same way, by watching `res.write` and 'drain': how
 * often write() returned false, the time from each false to the 'drain' after it when the loop
 * wrote nothing in between (it waited for the reader), and the most bytes queued.
 */
import type http from 'node:http';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { drainOrClose, HttpError } from '../serve/http.ts';
import type { StageRecorder } from './stamps.ts';

/** The export route's chunk size: a realistic read-file-and-send size, bytes. */
export const EXPORT_CHUNK_BYTES = 64 * 1024;
/** The largest export, MiB: ignoring backpressure may hold all of it in memory. */
const MAX_EXPORT_MB = 64;

/**
 * Chunk `i` of an export: 64 KiB of one line that names it, as a file's blocks differ from each
 * other, so that a chunk written twice, skipped or out of order shows in the bytes the reader gets
 * (lesson 9's exercise checks them before it times anything).
 */
export function exportChunk(i: number): Buffer {
  return Buffer.alloc(EXPORT_CHUNK_BYTES, `catalogue export, chunk ${i}\n`);
}

/**
 * An export loop: writes `chunks` chunks made by `nextChunk()` to `res` and resolves when it has
 * written the last (the route ends the response). servers/exercises/lesson-9/export.ts is the student's starting point.
 */
export type ExportLoop = (res: http.ServerResponse, chunks: number, nextChunk: () => Buffer) => Promise<void>;

/** The kit's loop, honouring backpressure, or not (`ignore`). */
function kitLoop(ignore: boolean): ExportLoop {
  return async (res, chunks, nextChunk) => {
    for (let i = 0; i < chunks && !res.destroyed; i++) {
      // A turn of the loop per chunk, as a file read gives: a synchronous loop would keep the
      // socket corked until it ended, and queue the whole body whatever the reader did.
      if (i > 0) await yieldToLoop();
      if (!res.write(nextChunk()) && !ignore) await drainOrClose(res);
    }
  };
}

/** Watches `res.write` (see the file's comment); `finish()` closes the last wait and gives the figures. */
function watchWrites(res: http.ServerResponse) {
  const write = res.write.bind(res) as (...args: unknown[]) => boolean;
  let writeFalse = 0;
  let drainWaitUs = 0;
  let queuedMax = 0;
  let bytes = 0;
  // The last write that returned false, and the 'drain' after it, if one came yet.
  let falseAt: bigint | undefined;
  let drainedAt: bigint | undefined;
  res.on('drain', () => {
    if (falseAt !== undefined && drainedAt === undefined) drainedAt = process.hrtime.bigint();
  });
  // A loop that waited for 'drain' writes again after it: the time from the false to the 'drain'
  // was a wait. A loop that wrote again before any 'drain' did not wait, however long it took.
  const closeWait = () => {
    if (falseAt !== undefined && drainedAt !== undefined) drainWaitUs += Number((drainedAt - falseAt) / 1000n);
    falseAt = drainedAt = undefined;
  };
  res.write = ((...args: unknown[]) => {
    closeWait();
    const chunk = args[0];
    bytes +=
      typeof chunk === 'string' ? Buffer.byteLength(chunk) : ((chunk as Uint8Array | undefined)?.byteLength ?? 0);
    const ok = write(...args);
    queuedMax = Math.max(queuedMax, res.writableLength);
    if (!ok) {
      writeFalse++;
      falseAt = process.hrtime.bigint();
    }
    return ok;
  }) as typeof res.write;
  return {
    finish() {
      closeWait();
      return { writeFalse, drainWaitUs, queuedMaxBytes: queuedMax };
    },
    /** Bytes written so far. */
    get bytes() {
      return bytes;
    },
  };
}

/** A 0 or 1 query flag; 400 naming it otherwise. */
function flag01(url: URL, name: string): boolean {
  const v = url.searchParams.get(name) ?? '0';
  if (v !== '0' && v !== '1') throw new HttpError(400, `${name}: 0 or 1`);
  return v === '1';
}

/** Export loops started and not yet ended, for GET /catalog/export/running: a loop that waits forever shows. */
export interface RunningExports {
  count: number;
}

/**
 * The export route. `mine`, when given, is the loop of the export that honours backpressure (lesson
 * 9's exercise); the ignoring export is always the kit's. `running` counts the loops in progress.
 */
export function exportRoute(
  rec: StageRecorder,
  running: RunningExports,
  mine?: ExportLoop,
): (req: http.IncomingMessage, res: http.ServerResponse, url: URL) => Promise<void> {
  return async (req, res, url) => {
    rec.stamp(req, 'handler-start');
    const mb = Number(url.searchParams.get('mb') ?? '8');
    if (!Number.isInteger(mb) || mb < 1 || mb > MAX_EXPORT_MB)
      throw new HttpError(400, `mb: an integer from 1 to ${MAX_EXPORT_MB}`);
    const ignore = flag01(url, 'ignore-backpressure');
    const loop = ignore ? kitLoop(true) : (mine ?? kitLoop(false));
    res.writeHead(200, {
      'content-type': 'application/octet-stream',
      'content-length': mb * 1024 * 1024,
      'server-timing': rec.serverTiming(req),
    });
    rec.stamp(req, 'response-headers-written');
    const watch = watchWrites(res);
    // A new buffer each time, as read from a file.
    let next = 0;
    running.count++;
    try {
      await loop(res, (mb * 1024 * 1024) / EXPORT_CHUNK_BYTES, () => exportChunk(next++));
    } finally {
      running.count--;
    }
    for (const [k, v] of Object.entries({ ...watch.finish(), responseBytes: mb * 1024 * 1024 })) rec.note(req, k, v);
    rec.stamp(req, 'handler-end');
    // A loop that resolved early (a student's, stopping at the first false) would leave the reader
    // waiting for the rest of the declared length until its timeout: cut the connection instead.
    if (watch.bytes < mb * 1024 * 1024 && !res.destroyed) {
      process.stderr.write(
        `the export loop resolved after writing ${watch.bytes} of ${mb * 1024 * 1024} bytes: it must write every chunk\n`,
      );
      res.destroy();
      return;
    }
    res.end();
  };
}
