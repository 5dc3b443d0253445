/**
 * The five parts of lesson 9's `stages` experiment. Each sends its requests with a stage id
 * (?sid=), then asks the server for its side (GET /stages/<id>) and merges both sides into one
 * time-ordered request (results/stages/report.ts).
 */
import { setTimeout as delay } from 'node:timers/promises';
import { findNginx } from '../../../servers/lib/balancer/nginx-config.ts';
import type { ServerRecord } from '../../../servers/lib/stages/stamps.ts';
import { mergeStamps, type StagedRequest, type StagesGroup, type StagesPart } from '../../../results/stages/report.ts';
import type { Lab } from '../process/lab.ts';
import type { ServerProcess } from '../process/launch.ts';
import { probeOk } from './probe.ts';
import type { ProxyStages } from '../../../servers/contracts.ts';
import type { Progress } from '../harness/progress.ts';
import { upload } from './raw-upload.ts';
import { oneConnection, sendFresh, type Sent, type SendOptions, type StageClient } from './stage-client.ts';
import { startBalancer } from '../process/topology.ts';

export interface PartSettings {
  /** Requests per group in the keep-alive and proxy parts. */
  requests: number;
  offsetMs: number;
  exportMb: number;
  readBytesPerS: number;
  uploadBytes: number;
}

export interface PartContext {
  lab: Lab;
  progress: Progress;
  client: StageClient;
  server: ServerProcess;
  settings: PartSettings;
  /** A new stage id each call. */
  nextId: () => string;
}

const LOAN = { method: 'POST', body: JSON.stringify({ book: 42, member: 'ann' }) } satisfies SendOptions;

/** The server's record of request `sid` (it waits until the request's connection is kept or closed). */
async function serverSide(ctx: PartContext, sid: string): Promise<ServerRecord> {
  return (await probeOk<ServerRecord>(`${ctx.server.url}/stages/${sid}`)).body;
}

/** Both sides of one request, merged; with `proxyUrl`, the kit's balancer's stages between them too. */
async function both(
  ctx: PartContext,
  label: string,
  sid: string,
  sent: Pick<Sent, 'status' | 'events'>,
  extra: Record<string, number> = {},
  proxyUrl?: string,
): Promise<StagedRequest> {
  const rec = await serverSide(ctx, sid);
  const proxy = proxyUrl ? (await probeOk<ProxyStages>(`${proxyUrl}/__lb/stages/${sid}`)).body.events : [];
  return {
    label,
    status: sent.status,
    stamps: mergeStamps(sent.events, rec.events, proxy),
    connectionAfter: rec.connectionAfter,
    extra: { ...rec.extra, ...extra },
  };
}

/** `n` loans on one kept-alive connection to `origin` (the kit's balancer with `stamped`, whose stages are asked for too). */
async function loansOnOneConnection(
  ctx: PartContext,
  origin: string,
  n: number,
  stamped = false,
): Promise<StagedRequest[]> {
  const conn = oneConnection(origin);
  const out: StagedRequest[] = [];
  try {
    for (let i = 1; i <= n; i++) {
      const sid = ctx.nextId();
      out.push(
        await both(
          ctx,
          `request ${i}`,
          sid,
          await ctx.client.send(conn, origin, `/loans?sid=${sid}`, LOAN),
          {},
          stamped ? origin : undefined,
        ),
      );
    }
  } finally {
    await conn.close();
  }
  return out;
}

export async function keepAlivePart(ctx: PartContext): Promise<StagesPart> {
  const n = ctx.settings.requests;
  ctx.progress.step(`keep-alive: ${n} loans, each on a fresh connection, then ${n} on one kept-alive connection`);
  const fresh: StagedRequest[] = [];
  for (let i = 1; i <= n; i++) {
    const sid = ctx.nextId();
    fresh.push(
      await both(ctx, `request ${i}`, sid, await sendFresh(ctx.client, ctx.server.url, `/loans?sid=${sid}`, LOAN)),
    );
  }
  const kept = await loansOnOneConnection(ctx, ctx.server.url, n);
  return {
    part: 'keep-alive',
    groups: [
      { name: 'fresh', requests: fresh },
      { name: 'keep-alive', requests: kept },
    ],
  };
}

export async function proxyPart(ctx: PartContext): Promise<StagesPart> {
  const n = ctx.settings.requests;
  const upstream = { name: 'stages', proc: ctx.server, url: ctx.server.url, addr: `127.0.0.1:${ctx.server.port}` };
  const groups: StagesGroup[] = [];
  const missing: Record<string, string> = {};
  ctx.progress.step(`proxy: ${n} loans directly, on one kept-alive connection`);
  groups.push({ name: 'direct', requests: await loansOnOneConnection(ctx, ctx.server.url, n) });
  for (const kind of ['builtin', 'nginx'] as const) {
    if (kind === 'nginx') {
      try {
        findNginx();
      } catch (err) {
        missing.nginx = (err as Error).message;
        continue;
      }
    }
    ctx.progress.step(
      `proxy: ${n} loans through ${kind === 'builtin' ? "the kit's balancer" : 'nginx'} (upstream keep-alive on)`,
    );
    // The kit's balancer stamps its own stages too (--stages); nginx's times come in ms, so it is seen from both sides only.
    const lb = await startBalancer(
      ctx.lab,
      kind,
      'round-robin',
      [upstream],
      0,
      true,
      kind === 'builtin' ? ['--stages'] : [],
      null,
    );
    groups.push({ name: kind, requests: await loansOnOneConnection(ctx, lb.url, n, kind === 'builtin') });
    await ctx.lab.stop(lb);
  }
  return { part: 'proxy', groups, ...(Object.keys(missing).length ? { missing } : {}) };
}

export async function blockedPart(ctx: PartContext): Promise<StagesPart> {
  const groups: StagesGroup[] = [];
  for (const mode of ['blocking', 'pooled'] as const) {
    ctx.progress.step(
      `blocked: one heavy /member/verify-${mode}, then a light loan ${ctx.settings.offsetMs} ms later on a kept-alive connection`,
    );
    const origin = ctx.server.url;
    const conn = oneConnection(origin);
    try {
      await ctx.client.send(conn, origin, `/loans?sid=${ctx.nextId()}`, LOAN); // opens the light request's connection
      const heavyId = ctx.nextId();
      const heavy = sendFresh(ctx.client, origin, `/member/verify-${mode}?sid=${heavyId}`);
      heavy.catch(() => {}); // awaited below; if the light request fails first, its error is the one reported
      await delay(ctx.settings.offsetMs); // the experiment's design, not a readiness wait
      const lightId = ctx.nextId();
      const light = await ctx.client.send(conn, origin, `/loans?sid=${lightId}`, LOAN);
      groups.push({
        name: mode,
        requests: [await both(ctx, 'heavy', heavyId, await heavy), await both(ctx, 'light', lightId, light)],
      });
    } finally {
      await conn.close();
    }
  }
  return { part: 'blocked', groups };
}

export async function slowReaderPart(ctx: PartContext): Promise<StagesPart> {
  const { exportMb, readBytesPerS } = ctx.settings;
  const groups: StagesGroup[] = [];
  for (const ignore of [false, true]) {
    const name = ignore ? 'ignoring-backpressure' : 'backpressure';
    ctx.progress.step(
      `slow-reader: a ${exportMb} MiB export read at ${Math.round(readBytesPerS / 1024 ** 2)} MiB/s, ${ignore ? 'ignoring' : 'honouring'} backpressure`,
    );
    const sid = ctx.nextId();
    // A kept-alive connection: undici asserts when the server closes one while it has paused reading.
    const conn = oneConnection(ctx.server.url);
    try {
      const sent = await ctx.client.send(
        conn,
        ctx.server.url,
        `/catalog/export?mb=${exportMb}${ignore ? '&ignore-backpressure=1' : ''}&sid=${sid}`,
        { readBytesPerS },
      );
      groups.push({ name, requests: [await both(ctx, 'export', sid, sent)] });
    } finally {
      await conn.close();
    }
  }
  return { part: 'slow-reader', groups };
}

/**
 * The early check three times (its time is a fraction of a ms, so one pause of either process,
 * a garbage collection after the slow reader's 64 MiB, say, would be most of it; the shape takes
 * the median), then the late check once.
 */
export async function bodyLimitPart(ctx: PartContext): Promise<StagesPart> {
  const groups: StagesGroup[] = [];
  for (const [check, times] of [
    ['early', 3],
    ['late', 1],
  ] as const) {
    ctx.progress.step(
      `body-limit: a ${Math.round(ctx.settings.uploadBytes / 1024 ** 2)} MiB upload with Expect: 100-continue, the limit checked ${check}${times > 1 ? ` (${times} times)` : ''}`,
    );
    const requests: StagedRequest[] = [];
    for (let i = 1; i <= times; i++) {
      const sid = ctx.nextId();
      const sent = await upload(ctx.server.port, `/upload?check=${check}&sid=${sid}`, ctx.settings.uploadBytes);
      requests.push(
        await both(ctx, times > 1 ? `upload ${i}` : 'upload', sid, sent, { bodyBytesSent: sent.bodyBytesSent }),
      );
    }
    groups.push({ name: check, requests });
  }
  return { part: 'body-limit', groups };
}
