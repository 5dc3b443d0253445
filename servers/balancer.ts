/**
 * The kit's own load balancer (HTTP, layer 7): picks a replica for every request with one of the
 * policies in servers/lib/policies.ts, and forwards it over a keep-alive connection pool (undici).
 * The picking and the failover rules (servers/lib/failover.ts) are the lesson; the proxying is undici's.
 *
 *   any path            forwarded to the chosen replica; the answer gets `x-upstream-addr`
 *   GET /__lb/stats     requests, in flight, failures and health per replica; requests retried
 *   POST /__lb/down?upstream=NAME, /__lb/up?upstream=NAME   take a replica out of rotation, or back
 *   POST /__lb/policy?name=POLICY   switch the policy for the requests that follow (the round-robin
 *                       cursor, the requests in flight and the replicas' health carry over)
 *
 * Failover: a try that cannot connect, is reset before any response byte, or gets no answer within
 * --response-timeout is retried on another replica (up to --retries more tries; only idempotent
 * methods once the request may have reached the replica), and counts against the replica's passive
 * health (--max-fails within --fail-timeout: it rests). Every retried request prints a `retry:` line
 * on stdout; SIGUSR1 prints `retries: total=N`.
 * Last try failed → 502 JSON (504 for a timeout); no replica available → 503 JSON at once;
 * request body over 1 MiB → 413 (bodies are read whole so that a POST that never reached a
 * replica can be sent to another one; nginx's client_max_body_size is also 1 MiB by default).
 * Run alone: `npx tsx servers/balancer.ts --policy least-connections --upstream 127.0.0.1:3010,127.0.0.1:3011`
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { pipeline } from 'node:stream/promises';
import { Pool, type Dispatcher } from 'undici';
import { defineCommand } from '../lib/cli.ts';
import { HttpError, sendJson } from './lib/http.ts';
import { failStartup, serve, serverFlags } from './lib/main.ts';
import { BALANCER_POLICIES, ipHashKey, isBalancerPolicy, PICKERS, pickByKey, roundRobin, type BalancerPolicy, type Picker, type ReplicaLoad } from './lib/policies.ts';
import {
  admission,
  classifyError,
  failureStatus,
  mayRetry,
  newHealth,
  recordFailure,
  recordSuccess,
  retryLine,
  type Attempt,
  type FailureKind,
  type HealthState,
} from './lib/failover.ts';
import { claimProbe, markAvailable } from './lib/choose.ts';
import { balancerFlags, balancerOptions, UPSTREAM_IDLE_MS } from './lib/upstreams.ts';

const DEFAULT_PORT = 3020;

const spec = defineCommand({
  usage: 'npx tsx servers/balancer.ts --upstream <[name=]host:port,...> [--policy <policy>] [--port <n>] [--keepalive on|off] [--retries <n>] [--max-fails <n>] [--fail-timeout <s>] [--connect-timeout <ms>] [--response-timeout <ms>]',
  summary: 'The kit\'s HTTP load balancer for lesson 4. Listens on 127.0.0.1 and prints one ready line.',
  flags: balancerFlags(DEFAULT_PORT),
  epilogue:
    'Stats: curl -s 127.0.0.1:3020/__lb/stats\n' +
    'Take a replica out and back: curl -X POST \'127.0.0.1:3020/__lb/down?upstream=app2\' (then /__lb/up?upstream=app2)\n' +
    'Switch the policy while it runs: curl -X POST \'127.0.0.1:3020/__lb/policy?name=least-connections\'',
});

/** Answers up to this size (by Content-Length) are buffered whole; larger or unsized ones stream. */
const BUFFER_LIMIT = 64 * 1024;
/** Headers that describe one connection, not the message (RFC 9110 §7.6.1): never forwarded. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'host']);

interface Upstream extends ReplicaLoad {
  name: string;
  addr: string;
  pool: Pool;
  requests: number;
  /** Tries that failed (connect, reset, timeout). */
  failures: number;
  /** Taken out by hand (POST /__lb/down). */
  down: boolean;
  health: HealthState;
}

/** The replica's Set-Cookie headers plus the balancer's own. */
function appendCookie(existing: string | string[] | undefined, cookie: string): string[] {
  return [...(existing === undefined ? [] : Array.isArray(existing) ? existing : [existing]), cookie];
}

/** Largest request body the balancer reads, bytes (nginx's client_max_body_size default). */
const MAX_BODY = 1024 * 1024;

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

function filterHeaders(headers: http.IncomingHttpHeaders | Record<string, string | string[] | undefined>): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined && !HOP_BY_HOP.has(k.toLowerCase())) out[k] = v;
  return out;
}

function main(): void {
  const options = balancerOptions(serverFlags(spec), DEFAULT_PORT);
  const { port, keepAlive, retries, connectTimeoutMs, responseTimeoutMs } = options;
  let policy: BalancerPolicy = options.policy;
  const rules = { maxFails: options.maxFails, failTimeoutMs: options.failTimeoutMs };
  const upstreams: Upstream[] = options.upstreams.map(({ name, addr }) => ({
    name,
    addr,
    inFlight: 0,
    available: true,
    requests: 0,
    failures: 0,
    down: false,
    health: newHealth(),
    pool: new Pool(`http://${addr}`, {
      keepAliveTimeout: UPSTREAM_IDLE_MS,
      keepAliveMaxTimeout: UPSTREAM_IDLE_MS,
      connect: { timeout: connectTimeoutMs },
      // The response timeout is enforced below with a native timer: undici's own timers have
      // about half a second of slack at one second and above (undici lib/util/timers.js).
      headersTimeout: 0,
      bodyTimeout: responseTimeoutMs,
      ...(keepAlive ? {} : { pipelining: 0 }),
    }),
  }));
  const lone = upstreams.length === 1; // a lone replica is never taken out
  // Sticky policies start from round robin (sticky-cookie: a client with no cookie yet).
  const pickerFor = (p: BalancerPolicy): Picker => (p === 'ip-hash' || p === 'sticky-cookie' ? roundRobin : PICKERS[p]);
  let pick = pickerFor(policy);
  /** The replica a sticky policy wants for this request, before availability (undefined: none yet). */
  const stickyKey = (req: http.IncomingMessage): string | undefined => {
    if (policy === 'ip-hash') return ipHashKey(req.socket.remoteAddress ?? '');
    if (policy === 'sticky-cookie') return /(?:^|;\s*)lb=([\w.-]+)/.exec(req.headers.cookie ?? '')?.[1];
    return undefined;
  };
  let cursor = 0;
  let retried = 0;

  /**
   * Picks a replica not in `tried`, honouring manual downs and passive health. When every replica
   * that is not down by hand is resting, they all get another chance (nginx: "quick recovery").
   * Returns the index and whether this try is a health probe.
   */
  const choose = (tried: ReadonlySet<number>, key: string | undefined): { index: number; probe: boolean } | undefined => {
    const now = performance.now();
    markAvailable(upstreams, tried, rules, now);
    let index: number | undefined;
    if (key !== undefined && policy === 'ip-hash') index = pickByKey(upstreams, key);
    if (key !== undefined && policy === 'sticky-cookie') {
      const named = upstreams.findIndex((u) => u.name === key);
      if (named >= 0 && upstreams[named]!.available) index = named;
    }
    if (index === undefined) {
      const choice = pick(upstreams, cursor, Math.random);
      cursor = choice.cursor;
      index = choice.index;
    }
    if (index === undefined) return undefined;
    return { index, probe: claimProbe(upstreams[index]!, lone, rules, now) };
  };

  /** One try on `up`: resolves with the answer once its headers arrive, or rejects with a FailureKind. */
  const tryOnce = async (up: Upstream, req: http.IncomingMessage, body: Buffer | null): Promise<Dispatcher.ResponseData> => {
    const headers = filterHeaders(req.headers);
    if (!keepAlive) headers.connection = 'close';
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), responseTimeoutMs);
    try {
      return await up.pool.request({ path: req.url ?? '/', method: (req.method ?? 'GET') as 'GET', headers, body, signal: abort.signal });
    } catch (err) {
      const kind: FailureKind = abort.signal.aborted ? 'timeout' : classifyError((err as NodeJS.ErrnoException).code);
      throw Object.assign(new Error((err as Error).message), { kind, code: abort.signal.aborted ? 'TIMEOUT' : (err as NodeJS.ErrnoException).code });
    } finally {
      clearTimeout(timer);
    }
  };

  const forward = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const method = req.method ?? 'GET';
    let body: Buffer | null = null;
    try {
      if (method !== 'GET' && method !== 'HEAD') body = await readBody(req, MAX_BODY);
    } catch (err) {
      const status = err instanceof HttpError ? err.status : 400;
      sendJson(res, status, { error: (err as Error).message }, { connection: 'close' });
      return;
    }
    const tried = new Set<number>();
    const attempts: Attempt[] = [];
    const key = stickyKey(req);
    const maxTries = Math.min(retries + 1, upstreams.length);
    const logRetries = () => {
      if (attempts.length > 1) {
        retried++;
        process.stdout.write(retryLine(method, req.url ?? '/', attempts) + '\n');
      }
    };
    for (;;) {
      const chosen = choose(tried, key);
      if (!chosen) {
        const last = attempts.at(-1);
        logRetries();
        if (last) sendJson(res, last.status, { error: last.status === 504 ? 'gateway timeout' : 'bad gateway', tries: attempts });
        else sendJson(res, 503, { error: 'no replica available' });
        return;
      }
      tried.add(chosen.index);
      const up = upstreams[chosen.index]!;
      up.inFlight++;
      up.requests++;
      const began = performance.now();
      let answer: Dispatcher.ResponseData;
      try {
        answer = await tryOnce(up, req, body);
      } catch (err) {
        up.inFlight--;
        up.failures++;
        const { kind, code } = err as { kind: FailureKind; code?: string };
        recordFailure(up.health, rules, performance.now());
        const status = failureStatus(kind);
        attempts.push({ replica: up.name, status, ms: performance.now() - began, ...(code ? { code } : {}) });
        if (attempts.length < maxTries && mayRetry(method, kind) && !res.destroyed) continue;
        logRetries();
        sendJson(res, status, { error: status === 504 ? 'gateway timeout' : 'bad gateway', upstream: up.addr, detail: (err as Error).message });
        return;
      }
      // Headers arrived: the replica answered. From here on nothing is retried.
      recordSuccess(up.health, chosen.probe);
      attempts.push({ replica: up.name, status: answer.statusCode, ms: performance.now() - began });
      logRetries();
      try {
        res.setHeader('x-upstream-addr', up.addr);
        const headers = filterHeaders(answer.headers);
        if (policy === 'sticky-cookie' && key !== up.name) headers['set-cookie'] = appendCookie(answer.headers['set-cookie'], `lb=${up.name}; Path=/; HttpOnly; SameSite=Lax`);
        const length = Number(answer.headers['content-length']);
        if (length <= BUFFER_LIMIT) {
          // Small answers are read whole and sent in one write, as nginx's proxy_buffering does:
          // measured here, streaming a 29-byte /fast answer chunk by chunk took 1.1 ms per request
          // on one connection, buffering it 0.3 ms.
          const data = Buffer.from(await answer.body.arrayBuffer());
          res.writeHead(answer.statusCode, headers);
          res.end(data);
        } else {
          res.writeHead(answer.statusCode, headers);
          await pipeline(answer.body, res);
        }
      } catch (err) {
        up.failures++;
        if (!res.headersSent) sendJson(res, 502, { error: 'bad gateway', upstream: up.addr, detail: (err as Error).message });
        else res.destroy();
      } finally {
        up.inFlight--;
      }
      return;
    }
  };

  const server = http.createServer((req, res) => {
    const switchTo = /^\/__lb\/policy\?name=([\w.-]*)$/.exec(req.url ?? '');
    if (switchTo && req.method === 'POST') {
      const name = switchTo[1]!;
      if (!isBalancerPolicy(name)) {
        sendJson(res, 400, { error: `unknown policy '${name}'`, field: 'name', allowed: BALANCER_POLICIES });
        return;
      }
      policy = name;
      pick = pickerFor(name);
      sendJson(res, 200, { policy });
      return;
    }
    const admin = /^\/__lb\/(up|down)\?upstream=([\w.-]+)$/.exec(req.url ?? '');
    if (admin && req.method === 'POST') {
      // Take a replica out of (or back into) rotation by hand, as before maintenance.
      const up = upstreams.find((u) => u.name === admin[2]);
      if (!up) {
        sendJson(res, 404, { error: `no upstream named '${admin[2]}'`, upstreams: upstreams.map((u) => u.name) });
        return;
      }
      up.down = admin[1] === 'down';
      sendJson(res, 200, { upstream: up.name, available: !up.down });
      return;
    }
    if (req.url === '/__lb/stats' && req.method === 'GET') {
      const now = performance.now();
      sendJson(res, 200, {
        policy,
        keepAlive,
        failover: { retries, ...rules, connectTimeoutMs, responseTimeoutMs },
        retried,
        upstreams: upstreams.map(({ name, addr, requests, inFlight, failures, down, health }) => ({
          name,
          addr,
          down,
          resting: !lone && admission(health, rules, now) === 'no',
          requests,
          inFlight,
          failures,
        })),
      });
      return;
    }
    void forward(req, res);
  });
  process.on('SIGUSR1', () => process.stdout.write(`retries: total=${retried}\n`));
  serve('balancer', server, port, {
    onStop: () => {
      for (const u of upstreams) void u.pool.close();
    },
  }).catch(failStartup);
}

try {
  main();
} catch (err) {
  failStartup(err);
}
