/**
 * Lesson 11's service: one CPU-bound route whose requests wait in line for one worker
 * (lib/cpu/work-queue.ts), so that more requests than it can serve make its queue grow.
 *
 *   GET  /hash?id=N          200 {"id": N, "key": "<hex>"}: PBKDF2-SHA256 of N, 2^15 iterations,
 *                            made when the request's turn comes; with --shedder, a request the
 *                            shedder refuses gets its answer (503 and Retry-After) at once
 *   GET  /health             200
 *   GET  /__overload/stats   this pass's figures: accepted, finished, wasted (finished after the
 *                            client had gone), shed, the queue over time, the worker's busy share,
 *                            the event loop's delay
 *   POST /__overload/reset   the same figures, then the waiting requests dropped and the counts
 *                            started again (the experiment's step between two passes)
 *
 * `--shedder <file>` loads a TypeScript file's `shed(load, res)` (lesson 11's exercise, or its
 * reference fix): called for each /hash request before it joins the queue.
 *
 * Run alone: `npx tsx servers/overload.ts --port 0`.
 */
import http from 'node:http';
import { defineCommand, intFlag } from '../lib/cli.ts';
import { HttpError, router, sendJson } from './lib/serve/http.ts';
import { failStartup, serve, serverFlags } from './lib/serve/main.ts';
import { lastSecondLoopDelay } from './lib/serve/loop-delay.ts';
import { importFromStudentFile } from './lib/serve/student-file.ts';
import {
  DEFAULT_BOUND_MS,
  ITERATIONS,
  MAX_BOUND_MS,
  MIN_BOUND_MS,
  WorkQueue,
  type Load,
} from './lib/cpu/work-queue.ts';

const spec = defineCommand({
  usage: 'npx tsx servers/overload.ts [--port <n>] [--shedder <file.ts>] [--bound <ms>]',
  summary:
    "Lesson 11's service: GET /hash?id=N waits in line for one worker, which hashes N with PBKDF2 (about 9 ms). More than it can serve and the line grows. Listens on 127.0.0.1 and prints one ready line.",
  flags: {
    port: { type: 'string', valueName: 'n', description: 'port to listen on, 0 for any free port', default: '3110' },
    shedder: {
      type: 'string',
      valueName: 'file.ts',
      description:
        "a file whose shed(load, res) may refuse a request before it waits (lesson 11's exercise; TypeScript, compiled with esbuild as the server starts)",
    },
    bound: {
      type: 'string',
      valueName: 'ms',
      description: `the longest wait a shedder is asked to let a request in for, given to it as load.boundMs (${MIN_BOUND_MS} to ${MAX_BOUND_MS})`,
      default: String(DEFAULT_BOUND_MS),
    },
  },
  epilogue: 'Try: curl -s 127.0.0.1:3110/hash?id=7; curl -s 127.0.0.1:3110/__overload/stats',
});

/** The largest id a request may ask for. */
const MAX_ID = 1_000_000_000;

type Shed = (load: Load, res: http.ServerResponse) => boolean;

/** ?id=N: a whole number from 0 to MAX_ID, else HttpError 400 naming the field. */
function idParam(url: URL): number {
  const raw = url.searchParams.get('id');
  if (raw === null) throw new HttpError(400, 'id is missing: add ?id=<0..1000000000>');
  if (!/^\d{1,10}$/.test(raw) || Number(raw) > MAX_ID)
    throw new HttpError(400, `id must be a whole number from 0 to ${MAX_ID}; got '${raw.slice(0, 20)}'`);
  return Number(raw);
}

async function main(): Promise<void> {
  const flags = serverFlags(spec);
  const port = intFlag('port', flags.port, 0, 65535, 3110);
  const shed =
    flags.shedder === undefined ? undefined : await importFromStudentFile<Shed>(flags.shedder, 'shed', 'function');
  const boundMs = intFlag('bound', flags.bound, MIN_BOUND_MS, MAX_BOUND_MS, DEFAULT_BOUND_MS);
  const queue = new WorkQueue(boundMs, ITERATIONS);
  const loopDelay = lastSecondLoopDelay();
  const figures = () => ({ ...queue.stats(), loopDelayMs: loopDelay() });
  const route = router({
    '/hash': {
      GET: (_req, res, url) => {
        const id = idParam(url);
        if (shed) {
          let refused: boolean;
          try {
            refused = shed(queue.load(), res);
          } catch (err) {
            throw new Error(`shed() threw: ${(err as Error)?.message ?? err}`);
          }
          if (refused === true) {
            queue.countShed();
            // A shedder that said "refused" without answering would leave its client waiting.
            if (!res.headersSent) sendJson(res, 500, { error: 'shed() returned true without answering the request' });
            return;
          }
          if (res.headersSent)
            throw new Error('shed() answered the request but returned false: return true when you answer it');
        }
        queue.add(id, res, (key) => sendJson(res, 200, { id, key }));
      },
    },
    '/health': { GET: (_req, res) => sendJson(res, 200, { status: 'ok' }) },
    '/__overload/stats': { GET: (_req, res) => sendJson(res, 200, figures()) },
    '/__overload/reset': {
      POST: (_req, res) => {
        const before = figures();
        queue.reset();
        sendJson(res, 200, before);
      },
    },
  });
  const server = http.createServer(route);
  await serve('overload', server, port, { onStop: () => queue.close() });
}

main().catch(failStartup);
