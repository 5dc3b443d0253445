/**
 * Lesson 9's exercise, as the student starts it: the catalog export's loop, writing each chunk as
 * soon as it is made, whatever write() answers. `npx tsx measure/stages.ts --mine` copies this file
 * to exercises/lesson-9/export.ts (once) and runs the slow-reader part with the copy in place of
 * the export that honours backpressure (servers/stages.ts --export). Change the copy so that it
 * stops writing while the reader is behind, and the backpressure lines read as they do in the lesson.
 */
import type http from 'node:http';
import { setImmediate as yieldToLoop } from 'node:timers/promises';

/**
 * Writes `chunks` chunks to `res`, each made by `nextChunk()` (a new 64 KiB Buffer, as a file read
 * gives), and resolves once the last one is written; the server then ends the response.
 */
export async function writeExport(res: http.ServerResponse, chunks: number, nextChunk: () => Buffer): Promise<void> {
  for (let i = 0; i < chunks && !res.destroyed; i++) {
    if (i > 0) await yieldToLoop(); // one chunk per turn of the event loop, as reading a file gives
    res.write(nextChunk());
  }
}
