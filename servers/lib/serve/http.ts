/**
 * Small HTTP helpers shared by the lesson servers: JSON answers, a route table that answers
 * 404/405 in JSON, listening on loopback with a coded error for a taken port, and the ready line.
 * Servers know nothing of measurement; these helpers only serve.
 */
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { KitError } from '../../../lib/errors.ts';
import { HOST } from '../../../lib/ready.ts';

export type Handler = (
  req: http.IncomingMessage,
  res: http.ServerResponse,
  url: URL,
  params: Record<string, string>,
) => void | Promise<void>;
/** path → method → handler. A path segment `:name` matches any one segment (given as params.name). */
export type Routes = Record<string, Partial<Record<string, Handler>>>;

/** Finds the route for `pathname`: an exact key first, then keys with `:param` segments. */
function match(
  routes: Routes,
  pathname: string,
): { byMethod: Partial<Record<string, Handler>>; params: Record<string, string> } | undefined {
  const exact = routes[pathname];
  if (exact) return { byMethod: exact, params: {} };
  const parts = pathname.split('/');
  for (const [key, byMethod] of Object.entries(routes)) {
    if (!key.includes('/:')) continue;
    const keyParts = key.split('/');
    if (keyParts.length !== parts.length) continue;
    const params: Record<string, string> = {};
    if (
      keyParts.every((k, i) =>
        k.startsWith(':')
          ? parts[i] !== '' && ((params[k.slice(1)] = decodeURIComponent(parts[i]!)), true)
          : k === parts[i],
      )
    ) {
      return { byMethod, params };
    }
  }
  return undefined;
}

/** Sends `body` as JSON with `status`. Safe to call once per response. */
export function sendJson(
  res: http.ServerResponse,
  status: number,
  body: unknown,
  headers: http.OutgoingHttpHeaders = {},
): void {
  const text = JSON.stringify(body) + '\n'; // a newline, so curl output ends its line
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/**
 * A request listener that dispatches on path and method. Unknown path → 404 JSON, known path with
 * another method → 405 JSON with an Allow header, an unparsable target → 400, a handler that
 * throws HttpError → its status, any other throw → 500. The query string is given to handlers, which ignore what they do not use.
 * `errorFields` adds fields to every error body (the cluster worker adds its pid and counter).
 */
export function router(routes: Routes, errorFields: () => object = () => ({})): http.RequestListener {
  return (req, res) => {
    let url: URL;
    try {
      url = new URL(req.url ?? '/', `http://${HOST}`);
    } catch {
      sendJson(res, 400, { error: 'bad request target', ...errorFields() });
      return;
    }
    let found;
    try {
      found = match(routes, url.pathname);
    } catch {
      sendJson(res, 400, { error: 'bad path encoding', ...errorFields() }); // decodeURIComponent('%zz')
      return;
    }
    if (!found) {
      sendJson(res, 404, { error: 'not found', path: url.pathname, ...errorFields() });
      return;
    }
    const handler = found.byMethod[req.method ?? 'GET'];
    if (!handler) {
      const allow = Object.keys(found.byMethod).join(', ');
      sendJson(res, 405, { error: 'method not allowed', method: req.method, allow, ...errorFields() }, { allow });
      return;
    }
    // A body the handler does not read is dumped by Node once the response ends, so the
    // connection stays usable for keep-alive.
    const fail = (err: unknown) => {
      if (res.headersSent) res.destroy();
      else if (err instanceof HttpError)
        sendJson(
          res,
          err.status,
          { error: err.message, ...errorFields() },
          err.status === 413 ? { connection: 'close' } : {},
        );
      else
        sendJson(res, 500, {
          error: 'internal error',
          detail: String((err as Error)?.message ?? err),
          ...errorFields(),
        });
    };
    try {
      const out = handler(req, res, url, found.params);
      if (out instanceof Promise) out.catch(fail);
    } catch (err) {
      fail(err);
    }
  };
}

/**
 * Listens on 127.0.0.1:`port` (0 = any free port), with a queue of `backlog` connections the
 * kernel completes before the server accepts them, and resolves with the bound port.
 * Rejects with KIT_ERR_PORT_IN_USE when the port is taken.
 */
export function listen(server: http.Server, port: number, backlog = DEFAULT_BACKLOG): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) => {
      server.off('listening', onListening);
      reject(err.code === 'EADDRINUSE' ? portInUse(port) : err);
    };
    const onListening = () => {
      server.off('error', onError);
      resolve((server.address() as AddressInfo).port);
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen({ port, host: HOST, backlog });
  });
}

/** Node's listen backlog when none is given (net.Server listen docs): connections the kernel completes before the server accepts them. */
export const DEFAULT_BACKLOG = 511;

/** The coded error for a taken port, with what to do about it. */
export function portInUse(port: number): KitError {
  return new KitError(
    'KIT_ERR_PORT_IN_USE',
    `port ${port} on ${HOST} is already in use`,
    `pick another with --port <n>, or --port 0 for any free port (to see what holds it: ss -ltnp 'sport = :${port}' on Linux, lsof -iTCP:${port} -sTCP:LISTEN on macOS)`,
  );
}

/** An error a handler throws to answer with a 4xx status and a JSON `{ error }` body. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Resolves at a writable's next 'drain', or when it closes (its reader gone). */
export function drainOrClose(stream: NodeJS.EventEmitter & { destroyed?: boolean }): Promise<void> {
  // A stream destroyed already (its reader gone during the last turn) has sent its 'close'.
  if (stream.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      stream.off('drain', done).off('close', done);
      resolve();
    };
    stream.on('drain', done).on('close', done);
  });
}

/**
 * Reads `req`'s body until its end, or until it passes `stopAt` bytes; then stops listening and
 * leaves the rest to Node, which drops it. (Leaving a `for await` over the request early would
 * destroy it, and with it the socket a 413 must go out on.)
 */
export function readBody(
  req: http.IncomingMessage,
  stopAt: number,
): Promise<{ chunks: Buffer[]; size: number; complete: boolean }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (complete: boolean) => {
      req.off('data', onData).off('end', onEnd).off('error', reject);
      resolve({ chunks, size, complete });
    };
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size > stopAt) done(false);
    };
    const onEnd = () => done(true);
    req.on('data', onData).on('end', onEnd).on('error', reject);
  });
}

/**
 * Reads a JSON request body of at most `limitBytes`. Throws HttpError 413 when it is larger
 * (without reading the rest) and 400 when it is not valid JSON. With `optional`, an empty body is undefined.
 */
export async function readJsonBody(req: http.IncomingMessage, limitBytes: number, optional = false): Promise<unknown> {
  const declared = Number(req.headers['content-length']);
  if (declared > limitBytes) throw new HttpError(413, `body over ${limitBytes} bytes`);
  const { chunks, size } = await readBody(req, limitBytes);
  if (size > limitBytes) throw new HttpError(413, `body over ${limitBytes} bytes`);
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '' && optional) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw new HttpError(400, 'body is not valid JSON');
  }
}

/**
 * A loopback port that was free a moment ago, for servers that cannot listen on port 0 and report
 * the port they got (nginx, redis-server). Another program could take it first; the server then
 * fails with "address in use", which its wrapper reports.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, HOST, () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}
