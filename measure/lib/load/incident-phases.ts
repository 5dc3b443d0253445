/**
 * The phases of a diagnosis run (measure/incident.ts), each aimed at one mechanism: a paced load on
 * one route while the server reads its own event loop; cover reads (the thread pool) while exports
 * run; a kept-alive connection left idle; pages with a new session id each (the heap); and SIGTERM
 * under kept-alive clients. Every one is bounded in time and sends to loopback only.
 */
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'undici';
import { runLoad } from './load.ts';
import { probeOk } from './probe.ts';
import type { IncidentStats } from '../../../servers/incidents/stats.ts';
import type { PacedPhase } from '../../../results/incident/result.ts';
import type { Lab } from '../process/lab.ts';
import type { LaunchSpec } from '../process/launch.ts';

/** The server's own reading of its heap, GC time and event loop (servers/incidents/stats.ts). */
async function readStats(base: string, collect = false): Promise<IncidentStats> {
  return (await probeOk<IncidentStats>(`${base}/__incident/stats${collect ? '?gc' : ''}`)).body;
}

/** The median of `xs` (0 for none). */
function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)]! : 0;
}

/** `route` at `rate` req/s over two connections for `durationS`, with the loop's utilization and delay meanwhile. */
export async function pacedPhase(base: string, route: string, rate: number, durationS: number): Promise<PacedPhase> {
  const before = await readStats(base);
  const r = await runLoad({ url: base + route, connections: 2, rate, durationS, timeoutS: 5 });
  const after = await readStats(base);
  const active = after.loopActiveMs - before.loopActiveMs;
  const idle = after.loopIdleMs - before.loopIdleMs;
  return {
    route,
    rate,
    completed: r.counts.completed,
    errors: r.counts.errors + r.counts.non2xx,
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    utilization: active + idle > 0 ? active / (active + idle) : 0,
    delayMaxMs: after.loopDelayMaxMs,
  };
}

/**
 * Cover reads one after another: `n` of them, or until `untilMs` (performance.now()); how long each
 * read took inside the server, ms (its x-read-ms header): the wait for a pool thread is in it, and
 * this process's own event loop, busy with the load, is not.
 */
async function coverReads(base: string, n: number, untilMs = Infinity): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n && performance.now() < untilMs; i++)
    out.push(Number((await probeOk(`${base}/cover/${i}`)).headers['x-read-ms']));
  return out;
}

/** Cover reads alone, then during `durationS` of /export over four connections. */
export async function coversDuringExport(base: string, durationS: number) {
  await coverReads(base, 5); // the first reads open the folder; not counted
  const idle = await coverReads(base, 20);
  const before = await readStats(base);
  const until = performance.now() + durationS * 1000;
  const [load, during] = await Promise.all([
    runLoad({ url: `${base}/export`, connections: 4, durationS, timeoutS: 10 }),
    sleep(200).then(() => coverReads(base, 1000, until)),
  ]);
  const after = await readStats(base);
  const active = after.loopActiveMs - before.loopActiveMs;
  return {
    idleP50Ms: median(idle),
    duringExportP50Ms: median(during),
    exports: load.counts.completed,
    exportUtilization: active / Math.max(1, active + after.loopIdleMs - before.loopIdleMs),
  };
}

/**
 * One request on a connection of its own, kept alive, then nothing: when did the server close it?
 * Undefined when it was still open after `waitMs`.
 */
export function idleCloseAfter(port: number, waitMs: number): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let answeredAt: number | undefined;
    const timer = setTimeout(() => done(undefined), waitMs + 5000);
    const done = (v: number | undefined) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(v);
    };
    socket.once('connect', () => socket.write('GET /books?page=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'));
    socket.on('data', () => {
      if (answeredAt !== undefined) return;
      answeredAt = performance.now();
      clearTimeout(timer);
      setTimeout(() => done(undefined), waitMs).unref();
    });
    // Closed with a FIN ('end') or, as some servers do, with a reset ('error'): either way, closed now.
    const closed = () => done(answeredAt === undefined ? 0 : Math.round(performance.now() - answeredAt));
    socket.once('end', closed);
    socket.once('error', (err) => (answeredAt === undefined ? reject(err) : closed()));
  });
}

/** /books pages with a new session id on every request, over four connections, and the kept heap before and after. */
export async function heapUnderPages(base: string, durationS: number) {
  const before = await readStats(base, true);
  let n = 0;
  const r = await runLoad({
    url: `${base}/books`,
    connections: 4,
    durationS,
    requests: [{ setupRequest: (req) => ({ ...req, path: `/books?page=${n % 1000}&session=${n++}` }) }],
  });
  const after = await readStats(base, true);
  return {
    completed: r.counts.completed,
    heapBeforeMb: before.heapUsedMb,
    heapAfterMb: after.heapUsedMb,
    gcMs: Math.round(after.gcMs - before.gcMs),
  };
}

/**
 * Kept-alive clients at a stop. server.close() closes the connections idle at that instant, and
 * each closed one ends its client; a stop that waits for the others completes only when all of
 * them were idle at once. Each is idle between an answer and its next request, up to about 40 % of
 * the time on a busy 2-core machine: with 4 clients a planted hang completed once in 24 runs
 * (0.4⁴ ≈ 2.5 %), with 16 it cannot (0.4¹⁶ < 10⁻⁶).
 */
export const SHUTDOWN_CLIENTS = 16;

/**
 * A server of its own (`spec`) under SHUTDOWN_CLIENTS kept-alive clients sending loans back to back; SIGTERM
 * after 300 ms. How long until it exited (undefined: killed at the end of `graceMs`), and how many
 * loans were answered after the signal.
 */
export async function shutdownUnderKeepAlive(lab: Lab, spec: LaunchSpec, graceMs: number) {
  const server = await lab.start(spec);
  const origin = `http://127.0.0.1:${server.port}`;
  let signalled = false;
  let after = 0;
  let sending = true;
  const clients = Array.from({ length: SHUTDOWN_CLIENTS }, () => new Client(origin, { pipelining: 1 }));
  const loops = clients.map(async (c) => {
    // Bounded: the server stops answering within graceMs, and each request times out in 5 s.
    while (sending) {
      try {
        const res = await c.request({ path: '/loan', method: 'POST', headersTimeout: 5000, bodyTimeout: 5000 });
        await res.body.dump();
        if (signalled) after++;
      } catch {
        return; // the connection closed: this client is done
      }
    }
  });
  await sleep(300);
  const began = performance.now();
  signalled = true;
  const how = await server.stop(graceMs);
  await lab.stop(server);
  const exitedAfterMs = how === 'graceful' ? Math.round(performance.now() - began) : undefined;
  sending = false;
  await Promise.all(loops);
  await Promise.all(clients.map((c) => c.destroy()));
  return { exitedAfterMs, graceMs, answeredAfterSignal: after };
}
