/**
 * Lesson 9's answers battery: the stage-stamping service with the student's writeExport behind the
 * export that honours backpressure, read at full speed, read slowly enough that write() says the
 * socket is full, and left by its reader part-way. The bytes a reader gets must be the bytes the
 * export meant, every chunk once and in order (servers/lib/stages/export.ts exportChunk), and a
 * loop must end when its reader has gone, rather than wait for a 'drain' that will never come.
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AnswerCheck, FixAnswers } from '../../../results/report/answers.ts';
import { EXPORT_CHUNK_BYTES, exportChunk } from '../../../servers/lib/stages/export.ts';
import { probeOk } from '../load/probe.ts';
import type { AnswersContext } from './spec.ts';

const MIB = 1024 * 1024;
/** A slow reader's pace, bytes/s: an 8 MiB export then lasts 0.25 s, and the socket's buffers fill. */
const SLOW_BYTES_PER_S = 32 * MIB;
/** How long a loop may go on after its reader left, ms: the kit's ends at the socket's 'close'. */
const LEFT_DEADLINE_MS = 2000;

/** What a reader got: the status, how many bytes, and the first byte that was not the one meant. */
interface Read {
  status: number;
  bytes: number;
  /** The offset of the first byte unlike the export's, or undefined when every one matched. */
  firstWrong: number | undefined;
  error?: string;
}

/** Compares bytes as they arrive with the export's chunks, without keeping the body. */
function matcher() {
  let at = 0;
  let firstWrong: number | undefined;
  return {
    take(data: Buffer) {
      for (let off = 0; off < data.length && firstWrong === undefined; ) {
        const chunk = exportChunk(Math.floor(at / EXPORT_CHUNK_BYTES));
        const from = at % EXPORT_CHUNK_BYTES;
        const n = Math.min(data.length - off, EXPORT_CHUNK_BYTES - from);
        const got = data.subarray(off, off + n);
        if (!got.equals(chunk.subarray(from, from + n)))
          firstWrong = at + got.findIndex((b, k) => b !== chunk[from + k]);
        at += n;
        off += n;
      }
    },
    get firstWrong() {
      return firstWrong;
    },
  };
}

/**
 * GETs `path` and compares its body with the export's bytes: at `bytesPerS` (pausing the socket
 * between reads), or as fast as it comes; `leaveAfter` bytes, then the connection is closed.
 */
function readExport(origin: string, path: string, o: { bytesPerS?: number; leaveAfter?: number } = {}): Promise<Read> {
  return new Promise((resolve) => {
    const m = matcher();
    let bytes = 0;
    let status = 0;
    const req = http.get(`${origin}${path}`, { agent: false, timeout: 10_000 }, (res) => {
      status = res.statusCode ?? 0;
      const began = performance.now();
      res.on('data', (data: Buffer) => {
        m.take(data);
        bytes += data.length;
        if (o.leaveAfter !== undefined && bytes >= o.leaveAfter) {
          req.destroy();
          resolve({ status, bytes, firstWrong: m.firstWrong });
          return;
        }
        if (!o.bytesPerS) return;
        const due = began + (bytes / o.bytesPerS) * 1000;
        if (due > performance.now()) {
          res.pause();
          setTimeout(() => res.resume(), due - performance.now());
        }
      });
      res.on('end', () => resolve({ status, bytes, firstWrong: m.firstWrong }));
      res.on('error', (err) => resolve({ status, bytes, firstWrong: m.firstWrong, error: err.message }));
    });
    req.on('timeout', () => req.destroy(new Error('no more bytes within 10 s')));
    req.on('error', (err) => resolve({ status, bytes, firstWrong: m.firstWrong, error: err.message }));
  });
}

/** A read in a few words: `all 8 MiB as meant`, `cut after 0.06 of 2 MiB`, `wrong bytes from 65,560 (chunk 1)`. */
export function readText(r: Read, meant: number): string {
  const mib = (b: number) => `${Number((b / MIB).toFixed(2))}`;
  const status = r.status === 200 ? '' : `${r.status}: `;
  if (r.firstWrong !== undefined)
    return `${status}wrong bytes from ${r.firstWrong.toLocaleString('en')} (chunk ${Math.floor(r.firstWrong / EXPORT_CHUNK_BYTES)})`;
  if (r.bytes < meant)
    return `${status}cut after ${mib(r.bytes)} of ${mib(meant)} MiB${r.error ? ` (${r.error})` : ''}`;
  return `${status}all ${mib(r.bytes)} MiB as meant`;
}

/** Export loops still in progress on the server. */
async function running(origin: string): Promise<number> {
  return (await probeOk<{ running: number }>(`${origin}/catalog/export/running`)).body.running;
}

/** Polls until no export loop runs, for at most `deadlineMs`; how long that took, or undefined. */
async function loopsEnd(origin: string, deadlineMs: number): Promise<number | undefined> {
  const began = performance.now();
  while (performance.now() - began < deadlineMs) {
    if ((await running(origin)) === 0) return Math.round(performance.now() - began);
    await sleep(20);
  }
  return undefined;
}

/** Runs lesson 9's battery against the export loop in `ctx.file`. */
export async function exportAnswers(ctx: AnswersContext): Promise<FixAnswers> {
  ctx.progress.step("your writeExport's answers: exports read fast, read slowly, and left part-way");
  const server = await ctx.lab.start({ server: 'stages', args: ['--port', '0', '--export', ctx.file] });
  const origin = server.url;
  const checks: AnswerCheck[] = [];
  const bytesCheck = async (mb: number, how: string, bytesPerS?: number) => {
    const r = await readExport(origin, `/catalog/export?mb=${mb}`, bytesPerS ? { bytesPerS } : {});
    const healthy = readText({ status: 200, bytes: mb * MIB, firstWrong: undefined }, mb * MIB);
    const yours = readText(r, mb * MIB);
    checks.push({ request: `GET /catalog/export?mb=${mb}, ${how}`, healthy, yours, same: yours === healthy });
  };
  try {
    await bytesCheck(2, 'read at once');
    // Slow enough that the socket's buffers fill and write() returns false: the part a loop must get right.
    await bytesCheck(8, `read at ${SLOW_BYTES_PER_S / MIB} MiB/s`, SLOW_BYTES_PER_S);
    await readExport(origin, '/catalog/export?mb=8', { bytesPerS: SLOW_BYTES_PER_S, leaveAfter: MIB });
    const ended = await loopsEnd(origin, LEFT_DEADLINE_MS);
    checks.push({
      request: 'GET /catalog/export?mb=8, reader gone after 1 MiB',
      healthy: 'the loop ends',
      yours: ended === undefined ? `the loop still runs ${LEFT_DEADLINE_MS / 1000} s later` : 'the loop ends',
      same: ended !== undefined,
    });
  } finally {
    await ctx.lab.stop(server);
  }
  return { healthyIs: "the kit's export", checks };
}
