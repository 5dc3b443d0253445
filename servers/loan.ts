/**
 * Loan service, one process: the lesson 3 server for the event loop and the thread pool. Its
 * password check runs scrypt on the event loop (/member/verify-blocking) or on libuv's thread pool
 * (/member/verify-pooled). The routes are listed once, in --help (the epilogue below).
 * Run alone: `npx tsx servers/loan.ts --port 3000`; it prints one ready line when listening.
 */
import http from 'node:http';
import { monitorEventLoopDelay, performance, type EventLoopUtilization } from 'node:perf_hooks';
import { defineCommand, intFlag } from '../lib/cli.ts';
import { assertNodeVersion } from '../lib/errors.ts';
import { formatReady } from '../lib/ready.ts';
import { drainOnStop } from './lib/serve/drain.ts';
import { listen, sendJson, router } from './lib/serve/http.ts';
import type { LoanServiceStats } from './contracts.ts';
import { failStartup, serverFlags } from './lib/serve/main.ts';
import { importFromStudentFile } from './lib/serve/student-file.ts';
import { formatCost, HEAVY_COST, heavyCostFrom, type VerifyPassword } from './lib/cpu/scrypt-cost.ts';
import { DEFAULT_MEMBER, storedPasswords } from './lib/cpu/members.ts';
import { passwordChecks } from './lib/cpu/password-checks.ts';

const spec = defineCommand({
  usage: 'npx tsx servers/loan.ts [--port <n>] [--cost N=2^16,r=8,p=4]',
  summary:
    'The library loan service of lesson 3. Its password check runs scrypt either on the event loop ' +
    '(/member/verify-blocking) or on the thread pool (/member/verify-pooled). Listens on 127.0.0.1 and ' +
    'prints one ready line.',
  flags: {
    port: { type: 'string', valueName: 'n', description: 'port to listen on, 0 for any free port', default: '3000' },
    cost: {
      type: 'string',
      valueName: 'N=..,r=..,p=..',
      description: `scrypt cost of the heavy check (env LAB_SCRYPT_COST; default ${formatCost(HEAVY_COST)})`,
    },
    verify: {
      type: 'string',
      valueName: 'file.ts',
      description:
        "lesson 3's exercise: /member/verify-blocking hashes with this file's verifyPassword (TypeScript: compiled with esbuild as the server starts)",
    },
  },
  epilogue: [
    'Routes (a check answers 200 verified or 401 refused):',
    "  GET  /member/verify-blocking   ann's password checked with scrypt on the event loop (scryptSync)",
    '  GET  /member/verify-pooled     the same check on the thread pool (crypto.scrypt)',
    "  GET  /member/verify-light      a small pooled check: cam's password, stored at N=2^10",
    '    ?member=<name>&password=<p>  another member (ann, cam, fay, dee, eli), another password (default their own)',
    '  GET  /books                    one catalog entry: no pool, no CPU',
    '  GET  /stats                    event-loop delay (ms), utilization, pool size, pooled work in flight',
    '  POST /stats/reset              start a new /stats window',
    "Environment: UV_THREADPOOL_SIZE sets libuv's thread pool size (default 4); set it before start.",
    'Try: curl -s 127.0.0.1:3000/member/verify-blocking; curl -s 127.0.0.1:3000/stats',
  ].join('\n'),
});

/** Event-loop delay histogram: Node reports the timer's full interval, so subtract its resolution. */
const RESOLUTION_MS = 10;

async function main(): Promise<void> {
  assertNodeVersion();
  const flags = serverFlags(spec);
  const port = intFlag('port', flags.port, 0, 65535, 3000);
  const heavy = heavyCostFrom(flags.cost);
  const yours =
    flags.verify === undefined
      ? undefined
      : await importFromStudentFile<VerifyPassword>(flags.verify, 'verifyPassword', 'function');

  // Every member's stored password, before the ready line: a check compares with it.
  const checks = passwordChecks(await storedPasswords(heavy), yours, flags.verify);
  const loop = loopWindow();

  const server = http.createServer(
    router({
      '/member/verify-blocking': { GET: (_req, res, url) => checks.blocking(res, url) },
      '/member/verify-pooled': { GET: (_req, res, url) => checks.pooled(res, url, 'verify-pooled', DEFAULT_MEMBER) },
      '/member/verify-light': { GET: (_req, res, url) => checks.pooled(res, url, 'verify-light', 'cam') },
      '/books': {
        GET: (_req, res) =>
          sendJson(res, 200, {
            id: 'b-1',
            title: 'The Mythical Man-Month',
            author: 'Frederick P. Brooks Jr.',
            available: 3,
          }),
      },
      '/stats': {
        GET: (_req, res) => {
          const threadPoolSize = Number(process.env.UV_THREADPOOL_SIZE) || 4;
          sendJson(res, 200, {
            pid: process.pid,
            ...loop.read(),
            threadPoolSize,
            pooledInFlight: checks.pooledInFlight(),
            heavyCost: formatCost(heavy),
          } satisfies LoanServiceStats);
        },
      },
      '/stats/reset': { POST: (_req, res) => loop.reset(() => sendJson(res, 200, { reset: true })) },
    }),
  );
  drainOnStop(server); // SIGTERM, SIGINT: finish what is in flight, then exit (lib/serve/drain.ts)
  const bound = await listen(server, port); // 127.0.0.1 only
  process.stdout.write(formatReady('loan-service', bound, process.pid) + '\n');
}

/**
 * The event loop's numbers over a window that POST /stats/reset starts again: its delay, ms (a
 * histogram sampled every RESOLUTION_MS, less that resolution), and its utilization (0 to 1).
 */
function loopWindow() {
  const delay = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  delay.enable();
  let eluStart: EventLoopUtilization = performance.eventLoopUtilization();
  let windowStart = performance.now();
  // An empty window (no sample yet) reads NaN: report 0.
  const ms = (ns: number) => (Number.isFinite(ns) ? round(Math.max(0, ns / 1e6 - RESOLUTION_MS)) : 0);
  return {
    read: () => ({
      windowMs: round(performance.now() - windowStart),
      eventLoopDelay: {
        maxMs: ms(delay.max),
        p99Ms: ms(delay.percentile(99)),
        meanMs: ms(delay.mean),
        resolutionMs: RESOLUTION_MS,
      },
      eventLoopUtilization: round(performance.eventLoopUtilization(eluStart).utilization, 3),
    }),
    /**
     * Starts a new window, and calls `armed` once the monitor has recorded a sample in it. After
     * reset() the monitor's next tick only notes the time; it records from the tick after, so a
     * block that starts right after an earlier answer could leave the window empty (a 1 s one did).
     */
    reset(armed: () => void): void {
      delay.reset();
      eluStart = performance.eventLoopUtilization();
      windowStart = performance.now();
      const check = () => (delay.count > 0 ? armed() : setTimeout(check, RESOLUTION_MS).unref());
      check();
    },
  };
}

function round(x: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

main().catch(failStartup);
