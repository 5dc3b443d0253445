/**
 * One request through the kit's balancer: read its body, try replicas until one answers or the
 * failover rules (core/failover.ts) say stop, then relay the answer. Nothing is retried once
 * a replica's headers have arrived.
 */
import type http from 'node:http';
import { performance } from 'node:perf_hooks';
import { pipeline } from 'node:stream/promises';
import type { Dispatcher } from 'undici';
import { HttpError, sendJson } from '../serve/http.ts';
import {
  classifyError,
  failureStatus,
  mayRetry,
  recordFailure,
  recordSuccess,
  retryLine,
  triesAllowed,
  type Attempt,
  type FailureKind,
} from '../../../core/failover.ts';
import type { Balancer, Upstream } from './core.ts';
import { CLIENT_CLOSED, type AccessLogWriter } from './access-log.ts';
import { requestWhenSent } from './upstream-timers.ts';

/** Answers up to this size (by Content-Length) are buffered whole; larger or unsized ones stream. */
const BUFFER_LIMIT = 64 * 1024;
/** Largest request body the balancer reads, bytes (nginx's client_max_body_size default). */
const MAX_BODY = 1024 * 1024;
/** Headers that describe one connection, not the message (RFC 9110 §7.6.1): never forwarded. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
  'host',
]);

/** Reads a request body whole; HttpError 413 beyond `limit` bytes. */
async function readBody(req: http.IncomingMessage, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new HttpError(413, `request body over ${limit} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function filterHeaders(
  headers: http.IncomingHttpHeaders | Record<string, string | string[] | undefined>,
): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined && !HOP_BY_HOP.has(k.toLowerCase())) out[k] = v;
  return out;
}

/** The replica's Set-Cookie headers plus the balancer's own. */
function appendCookie(existing: string | string[] | undefined, cookie: string): string[] {
  return [...(existing === undefined ? [] : Array.isArray(existing) ? existing : [existing]), cookie];
}

/** A failed try: the FailureKind and the error code (TIMEOUT and CONNECT_TIMEOUT for our own timers). */
class TryFailure extends Error {
  constructor(
    message: string,
    readonly kind: FailureKind,
    readonly code: string | undefined,
  ) {
    super(message);
  }
}

/**
 * One try on `up`: resolves once the answer's headers arrive, or rejects with a TryFailure. As in
 * nginx, the connect timeout covers making the connection (the pool's timedConnector), and the
 * response timeout starts once the request is on a connected socket (at once on a kept-alive one).
 */
async function tryOnce(
  b: Balancer,
  up: Upstream,
  req: http.IncomingMessage,
  body: Buffer | null,
): Promise<Dispatcher.ResponseData> {
  const headers = filterHeaders(req.headers);
  if (!b.options.keepAlive) headers.connection = 'close';
  const abort = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const sent = () => (timer = setTimeout(() => abort.abort(), b.options.responseTimeoutMs));
  try {
    return await requestWhenSent(
      up.pool,
      { path: req.url ?? '/', method: (req.method ?? 'GET') as 'GET', headers, body, signal: abort.signal },
      sent,
    );
  } catch (err) {
    const code = abort.signal.aborted ? 'TIMEOUT' : (err as NodeJS.ErrnoException).code;
    throw new TryFailure((err as Error).message, abort.signal.aborted ? 'timeout' : classifyError(code), code);
  } finally {
    clearTimeout(timer);
  }
}

/** Sends the replica's answer on: small ones whole, larger or unsized ones streamed. */
async function relay(
  b: Balancer,
  up: Upstream,
  key: string | undefined,
  answer: Dispatcher.ResponseData,
  res: http.ServerResponse,
  attempts: readonly Attempt[],
): Promise<void> {
  // Every replica tried, in order, as nginx's $upstream_addr: a client can see that it was retried.
  res.setHeader('x-upstream-addr', attempts.map((a) => a.addr).join(', '));
  const headers = filterHeaders(answer.headers);
  if (b.policy === 'sticky-cookie' && key !== up.name)
    headers['set-cookie'] = appendCookie(answer.headers['set-cookie'], `lb=${up.name}; Path=/; HttpOnly; SameSite=Lax`);
  const length = Number(answer.headers['content-length']);
  if (length <= BUFFER_LIMIT) {
    // Read whole (before the headers go, so a failed read can still be a 502) and sent in one
    // write, as nginx's proxy_buffering does: measured here, streaming a 29-byte /fast answer
    // chunk by chunk took 1.1 ms per request on one connection, buffering it 0.3 ms.
    const data = Buffer.from(await answer.body.arrayBuffer());
    res.writeHead(answer.statusCode, headers);
    res.end(data);
  } else {
    res.writeHead(answer.statusCode, headers);
    await pipeline(answer.body, res);
  }
}

/** Writes the request's access log line once its answer is sent or its client has gone (499, as nginx). */
function logWhenDone(
  log: AccessLogWriter,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  attempts: readonly Attempt[],
): void {
  const began = performance.now();
  res.once('close', () => {
    log.write({
      atS: Date.now() / 1000,
      method: req.method ?? 'GET',
      uri: req.url ?? '/',
      status: res.writableFinished ? res.statusCode : CLIENT_CLOSED,
      requestS: (performance.now() - began) / 1000,
      tries: attempts.map((a) => ({ addr: a.addr ?? a.replica, status: a.status, timeS: a.ms / 1000 })),
    });
  });
}

const gatewayError = (status: number) => (status === 504 ? 'gateway timeout' : 'bad gateway');

/**
 * Forwards one request: 413 for a body over MAX_BODY, 503 when no replica is available, 502/504
 * after the last failed try, otherwise the replica's answer with `x-upstream-addr`. A request that
 * took more than one try prints a `retry:` line on stdout.
 */
export async function forward(b: Balancer, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const method = req.method ?? 'GET';
  const attempts: Attempt[] = [];
  if (b.accessLog) logWhenDone(b.accessLog, req, res, attempts);
  let body: Buffer | null = null;
  try {
    if (method !== 'GET' && method !== 'HEAD') body = await readBody(req, MAX_BODY);
  } catch (err) {
    sendJson(
      res,
      err instanceof HttpError ? err.status : 400,
      { error: (err as Error).message },
      { connection: 'close' },
    );
    return;
  }
  const tried = new Set<number>();
  const key = b.stickyKey(req);
  const maxTries = triesAllowed(b.options.retries, b.upstreams.length);
  const logRetries = () => {
    if (attempts.length < 2) return;
    b.retried++;
    process.stdout.write(retryLine(method, req.url ?? '/', attempts) + '\n');
  };
  for (;;) {
    const chosen = b.choose(tried, key);
    if (!chosen) {
      const last = attempts.at(-1);
      logRetries();
      if (last) sendJson(res, last.status, { error: gatewayError(last.status), tries: attempts });
      else sendJson(res, 503, { error: 'no replica available' });
      return;
    }
    tried.add(chosen.index);
    const up = b.upstreams[chosen.index]!;
    up.inFlight++;
    up.requests++;
    const began = performance.now();
    let answer: Dispatcher.ResponseData;
    try {
      answer = await tryOnce(b, up, req, body);
    } catch (err) {
      up.inFlight--;
      up.failures++;
      const { kind, code } = err as TryFailure;
      recordFailure(up.health, b.rules, performance.now());
      const status = failureStatus(kind);
      attempts.push({
        replica: up.name,
        addr: up.addr,
        status,
        ms: performance.now() - began,
        ...(code ? { code } : {}),
      });
      if (attempts.length < maxTries && mayRetry(method, kind) && !res.destroyed) continue;
      logRetries();
      sendJson(res, status, { error: gatewayError(status), upstream: up.addr, detail: (err as Error).message });
      return;
    }
    recordSuccess(up.health, chosen.probe);
    attempts.push({ replica: up.name, addr: up.addr, status: answer.statusCode, ms: performance.now() - began });
    logRetries();
    try {
      await relay(b, up, key, answer, res, attempts);
    } catch (err) {
      up.failures++;
      if (!res.headersSent)
        sendJson(res, 502, { error: 'bad gateway', upstream: up.addr, detail: (err as Error).message });
      else res.destroy();
    } finally {
      up.inFlight--;
    }
    return;
  }
}
