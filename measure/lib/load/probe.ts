/**
 * Probes: one HTTP request, timed on the client with performance.now() from just before the
 * request is made to the last byte of the answer. By default each probe opens its own connection
 * (`agent: false`), so no probe waits behind another on a shared socket; pass a keep-alive agent
 * to send several over one connection. Only loopback targets are allowed.
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { KitError } from '../../../lib/errors.ts';

/**
 * One answer. `T` is the body's type as the route's server exports it (servers/contracts.ts); it
 * is what the server promises, not checked here. Without one the body is `unknown`, to be narrowed.
 */
export interface ProbeResult<T = unknown> {
  status: number;
  /** Client-side duration, ms. */
  ms: number;
  /** Parsed JSON body, or the raw text when it is not JSON. */
  body: T;
  /** True when the request went over a connection that an earlier request had used. */
  reusedSocket: boolean;
  headers: http.IncomingHttpHeaders;
}

interface ProbeOptions {
  method?: string;
  /** false (default): a fresh connection; or a keep-alive agent to share one. */
  agent?: http.Agent | false;
  /** Give up after this many ms (default 30 000) with KIT_ERR_REQUEST. */
  timeoutMs?: number;
  /** A JSON value to send as the body (content-type application/json). */
  json?: unknown;
  /** Request headers (e.g. a cookie). */
  headers?: Record<string, string>;
  /** Abandons the request when aborted (the probe rejects with KIT_ERR_REQUEST). */
  signal?: AbortSignal;
  /** Keep the body as the bytes that came (a Buffer), not as JSON or text: a gzip body, a file. */
  raw?: boolean;
}

/** Throws unless `url` points at a loopback address: the kit never sends load anywhere else. */
export function assertLoopback(url: URL): void {
  const h = url.hostname;
  if (!(h === 'localhost' || h === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(h))) {
    throw new KitError(
      'KIT_ERR_USAGE',
      `refusing to send requests to ${h}: only loopback addresses (127.0.0.0/8, ::1) are targets`,
    );
  }
}

/** Sends one request to `url` and resolves with its status, client-side time and body. */
export function probe<T = unknown>(url: string, opts: ProbeOptions = {}): Promise<ProbeResult<T>> {
  const { method = 'GET', agent = false, timeoutMs = 30_000, json, headers = {}, signal, raw = false } = opts;
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    assertLoopback(target); // a throw here rejects the promise
    const started = performance.now();
    const body = json === undefined ? undefined : JSON.stringify(json);
    const allHeaders =
      body === undefined
        ? headers
        : { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) };
    const req = http.request(
      target,
      { method, agent, timeout: timeoutMs, headers: allHeaders, ...(signal ? { signal } : {}) },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const ms = performance.now() - started;
          const bytes = Buffer.concat(chunks);
          const text = raw ? '' : bytes.toString('utf8');
          let body: unknown = raw ? bytes : text;
          try {
            if (!raw) body = JSON.parse(text);
          } catch {
            /* not JSON: keep the text */
          }
          resolve({
            status: res.statusCode ?? 0,
            ms,
            body: body as T,
            reusedSocket: req.reusedSocket,
            headers: res.headers,
          });
        });
        res.on('error', fail);
      },
    );
    function fail(err: Error) {
      reject(
        new KitError(
          'KIT_ERR_REQUEST',
          `${method} ${url} failed after ${Math.round(performance.now() - started)} ms: ${err.message}`,
        ),
      );
    }
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', fail);
    req.end(body);
  });
}

/** probe(), but throws KIT_ERR_UNEXPECTED_STATUS unless the status is 2xx. */
export async function probeOk<T = unknown>(url: string, opts: ProbeOptions = {}): Promise<ProbeResult<T>> {
  const r = await probe<T>(url, opts);
  if (r.status < 200 || r.status > 299) {
    throw new KitError(
      'KIT_ERR_UNEXPECTED_STATUS',
      `${opts.method ?? 'GET'} ${url} answered ${r.status}: ${JSON.stringify(r.body).slice(0, 200)}`,
    );
  }
  return r;
}
