/**
 * Timestamps each stage of a request's life inside a server (lesson 9), from what Node publishes:
 *
 *   accept                    net.server.socket diagnostics channel (a new connection)
 *   first-bytes-read          the accepted socket's first 'readable', before HTTP parses anything
 *   headers-parsed            http.server.request.start channel (the request event)
 *   handler-start … handler-end, body-read, sqlite-read, scrypt, response-headers-written
 *                             stamped by the route itself (stamp())
 *   finish                    http.server.response.finish channel: the last byte handed to the kernel
 *   close                     the socket's 'close' event, when the connection is not kept
 *
 * Times are µs on process.hrtime: libuv's uv_hrtime, the machine's monotonic clock (CLOCK_MONOTONIC
 * on Linux), which every process on one machine reads alike, so a client's stamps and a server's
 * line up. performance.now() counts from each process's own start instead.
 * Every request but GET /stages/… is recorded, under the id its `?sid=<id>` gives or else
 * `auto-<n>`; the last MAX_RECORDS are kept.
 * Node docs: diagnostics_channel "Built-in Channels" (HTTP, NET).
 */
import dc from 'node:diagnostics_channel';
import type http from 'node:http';
import net from 'node:net';

/** The server's stage names, in the order they normally happen. */
export const SERVER_STAGES = [
  'accept',
  'first-bytes-read',
  'headers-parsed',
  'handler-start',
  'body-read',
  'sqlite-read',
  'scrypt',
  'handler-end',
  'response-headers-written',
  'finish',
  'close',
] as const;
type ServerStage = (typeof SERVER_STAGES)[number];

export interface StageEvent {
  stage: string;
  /** µs on the shared monotonic clock. */
  atUs: number;
}

/** What the server saw of one request. */
export interface ServerRecord {
  id: string;
  /** The connection's number (1, 2, …) in this server, and this request's number on it (GET /stages/… included). */
  connection: number;
  requestOnConnection: number;
  events: StageEvent[];
  /** After finish: the connection was kept for another request, or closed. */
  connectionAfter?: 'kept' | 'closed';
  /**
   * Route-specific numbers (bytes queued, write() calls that returned false, …), and
   * socketBytesRead: what the connection had read at finish, headers and body, bytes.
   */
  extra: Record<string, number>;
}

/** Records kept for /stages/:id; older ones are dropped. */
const MAX_RECORDS = 500;

/** True when `done` settles within `ms`, false at the deadline (whose timer is then cleared). */
export async function settledWithin(done: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  const outcome = await Promise.race([done.then(() => true as const), late]);
  clearTimeout(timer);
  return outcome;
}

/** Now, in µs on the shared monotonic clock. */
export function nowUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

interface Connection {
  id: number;
  acceptUs: number;
  firstBytesUs?: number;
  closedUs?: number;
  requests: number;
  onClose: (() => void)[];
}

interface Pending {
  record: ServerRecord;
  done: Promise<void>;
  settle: () => void;
}

/** One server's stage recorder. Subscribes on construction; close() unsubscribes. */
export class StageRecorder {
  private readonly connections = new WeakMap<net.Socket, Connection>();
  private readonly byRequest = new WeakMap<http.IncomingMessage, Pending>();
  private readonly byId = new Map<string, Pending>();
  private nextConnection = 1;
  private autoIds = 0;
  /** The HTTP server whose requests are recorded (handOff); the channels carry every server's. */
  private server: http.Server | undefined;

  private readonly onSocket = (msg: unknown) => {
    const socket = (msg as { socket: net.Socket }).socket;
    const conn: Connection = { id: this.nextConnection++, acceptUs: nowUs(), requests: 0, onClose: [] };
    this.connections.set(socket, conn);
    socket.once('close', () => {
      conn.closedUs = nowUs();
      for (const f of conn.onClose.splice(0)) f();
    });
  };

  private readonly onRequest = (msg: unknown) => {
    const { request, socket, server } = msg as {
      request: http.IncomingMessage;
      socket: net.Socket;
      server: http.Server;
    };
    if (server !== this.server) return;
    const conn = this.connections.get(socket);
    if (conn) conn.requests++;
    if (request.url?.startsWith('/stages/')) return; // asking for a record is not part of one
    const id = stageId(request.url) ?? `auto-${++this.autoIds}`;
    const events: StageEvent[] = [];
    if (conn?.requests === 1) {
      events.push({ stage: 'accept', atUs: conn.acceptUs });
      if (conn.firstBytesUs !== undefined) events.push({ stage: 'first-bytes-read', atUs: conn.firstBytesUs });
    }
    events.push({ stage: 'headers-parsed', atUs: nowUs() });
    let settle = () => {};
    const done = new Promise<void>((resolve) => (settle = resolve));
    const pending: Pending = {
      record: { id, connection: conn?.id ?? 0, requestOnConnection: conn?.requests ?? 0, events, extra: {} },
      done,
      settle,
    };
    this.byRequest.set(request, pending);
    this.byId.delete(id);
    this.byId.set(id, pending);
    if (this.byId.size > MAX_RECORDS) this.byId.delete(this.byId.keys().next().value!);
  };

  private readonly onFinish = (msg: unknown) => {
    const { request, socket } = msg as { request: http.IncomingMessage; socket: net.Socket };
    const pending = this.byRequest.get(request);
    if (!pending) return;
    pending.record.events.push({ stage: 'finish', atUs: nowUs() });
    pending.record.extra.socketBytesRead = socket.bytesRead;
    // Node decides to close (socket.end) in its own finish listener: look once that has run.
    setImmediate(() => {
      const conn = this.connections.get(socket);
      const closing = socket.destroyed || socket.writableEnded;
      if (!closing || !conn) {
        pending.record.connectionAfter = 'kept';
        pending.settle();
        return;
      }
      const closed = () => {
        pending.record.events.push({ stage: 'close', atUs: conn.closedUs! });
        pending.record.connectionAfter = 'closed';
        pending.settle();
      };
      if (conn.closedUs !== undefined) closed();
      else conn.onClose.push(closed);
    });
  };

  constructor() {
    dc.subscribe('net.server.socket', this.onSocket);
    dc.subscribe('http.server.request.start', this.onRequest);
    dc.subscribe('http.server.response.finish', this.onFinish);
  }

  /**
   * Gives each connection `netServer` accepts to `httpServer` once its first bytes can be read,
   * stamping that moment: Node's HTTP server reads a socket inside its own parser, so no event
   * marks the bytes' arrival after it has the socket. Handing a socket over by emitting
   * 'connection' is documented (http.Server 'connection' event). `netServer` must be created
   * with http.Server's own socket settings (noDelay, allowHalfOpen: see stageNetServer). A
   * connection that sends nothing for `idleMs` is closed, as http.Server's headersTimeout would.
   */
  handOff(netServer: net.Server, httpServer: http.Server, idleMs = 60_000): void {
    this.server = httpServer;
    netServer.on('connection', (socket: net.Socket) => {
      const quiet = () => {}; // a client gone before its first byte
      socket.on('error', quiet);
      socket.setTimeout(idleMs, () => socket.destroy());
      socket.once('readable', () => {
        const conn = this.connections.get(socket);
        if (conn) conn.firstBytesUs = nowUs();
        socket.setTimeout(0);
        socket.off('error', quiet);
        httpServer.emit('connection', socket);
      });
    });
  }

  /** Stamps `stage` now for `req` (nothing when the request is not recorded). */
  stamp(req: http.IncomingMessage, stage: ServerStage): void {
    this.byRequest.get(req)?.record.events.push({ stage, atUs: nowUs() });
  }

  /** Sets a route-specific number on `req`'s record. */
  note(req: http.IncomingMessage, key: string, value: number): void {
    const pending = this.byRequest.get(req);
    if (pending) pending.record.extra[key] = value;
  }

  /**
   * The stages so far as a Server-Timing header value: each stage's time since the one before,
   * in ms (the header's unit), e.g. `headers-parsed;dur=0.041, sqlite-read;dur=0.012`.
   * Empty when `req` is not recorded. W3C Server Timing; browsers show it in the Network panel.
   * The names are tokens (RFC 9110) and the durations plain numbers, as the header's grammar asks.
   */
  serverTiming(req: http.IncomingMessage): string {
    const events = this.byRequest.get(req)?.record.events ?? [];
    return events
      .slice(1)
      .map((e, i) => `${e.stage};dur=${((e.atUs - events[i]!.atUs) / 1000).toFixed(3)}`)
      .join(', ');
  }

  /**
   * The record of request `id` once it is complete (finished, and its connection kept or
   * closed), or undefined when there is no such record or it is not complete within `deadlineMs`.
   */
  async complete(id: string, deadlineMs: number): Promise<ServerRecord | undefined> {
    const pending = this.byId.get(id);
    return pending && (await settledWithin(pending.done, deadlineMs)) ? pending.record : undefined;
  }

  close(): void {
    dc.unsubscribe('net.server.socket', this.onSocket);
    dc.unsubscribe('http.server.request.start', this.onRequest);
    dc.unsubscribe('http.server.response.finish', this.onFinish);
  }
}

/** The `sid` query parameter of a request target (letters, digits, - and _, at most 64), or undefined. */
export function stageId(target: string | undefined): string | undefined {
  const m = /[?&]sid=([\w-]{1,64})(?:&|$)/.exec(target ?? '');
  return m?.[1];
}

/** What a stage id may hold, for the 400 that names it. */
export const STAGE_ID_RULE = 'letters, digits, - and _, at most 64';

/** True when `id` is a valid stage id. */
export function isStageId(id: string): boolean {
  return stageId(`?sid=${id}`) === id;
}

/** True when `target` has a sid parameter that is not a valid stage id (answered 400). */
export function badStageId(target: string | undefined): boolean {
  return /[?&]sid=/.test(target ?? '') && stageId(target) === undefined;
}

/** A net.Server with http.Server's socket settings (Nagle off, half-open handled by HTTP), for handOff. */
export function stageNetServer(): net.Server {
  return net.createServer({ noDelay: true, allowHalfOpen: true });
}
