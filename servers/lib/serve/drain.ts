/**
 * The graceful drain every lesson server does on SIGTERM (and SIGINT, or a lost launcher, for a
 * server started on its own): stop accepting, finish what is in flight, close keep-alive
 * connections as they go idle, and exit once the last one closes or at a deadline. Each step
 * prints a stop line (STOP_LINE) that the experiments read. servers/lib/serve/main.ts's serve() wires
 * it for most servers; servers/loan.ts calls it beside its own listen and ready line.
 */
import cluster from 'node:cluster';
import type http from 'node:http';
import net, { type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { exitWithLauncher } from './lifeline.ts';

export interface DrainOptions {
  /**
   * How long in-flight requests may take to finish after a stop signal, in ms (default 5000).
   * At the deadline the connections still open are closed by force (closeAllConnections).
   */
  drainDeadlineMs?: number;
  /** Exit at once on SIGTERM, cutting whatever is in flight (a crash, or a container killed without a grace period). */
  abrupt?: boolean;
  /**
   * false for a cluster worker: no ready line (the primary prints one for the whole cluster), no
   * launcher lifeline (a worker exits when its IPC channel to the primary closes) and no SIGINT
   * handler (the primary decides when workers stop).
   */
  announce?: boolean;
  /** Called once when a stop begins, before the server stops accepting (e.g. to report unhealthy). */
  onStop?: () => void;
}

/** Default drain deadline, ms: long enough for the lessons' slowest request (/slow-async?ms=500 and the like). */
export const DRAIN_DEADLINE_MS = 5000;

/**
 * The stop lines a server prints on stdout, for people and for experiments to parse:
 *   stop: graceful in-flight=N deadline-ms=D      a drain began
 *   stop: drained cut=C after-ms=T                it ended (cut = requests still open at the deadline)
 *   stop: abrupt in-flight=N cut=N                --abrupt: everything in flight is cut
 */
export const STOP_LINE = /^stop: (graceful|drained|abrupt) (.*)$/;

/** Parses the key=value fields of a stop line (numbers only). */
export function stopFields(rest: string): Record<string, number> {
  return Object.fromEntries([...rest.matchAll(/([\w-]+)=(\d+)/g)].map((m) => [m[1]!, Number(m[2])]));
}

/**
 * During a drain, a keep-alive connection with no request for this long is closed, ms. A busy one
 * is closed by its next answer instead (`Connection: close`): closing a connection the client is
 * about to reuse loses the request it is sending, which is why the drain does not close every
 * idle connection at once (what http.Server close() does since Node 19). Measured here: closing
 * them at once gave 11 failed requests in a rolling restart of 3 cluster workers under load.
 */
export const DRAIN_IDLE_CLOSE_MS = 250;

/**
 * Exits; a cluster worker first reads whatever its primary sent it before. The primary hands each
 * connection to a worker over IPC and lets go of it only on the worker's answer, so a connection
 * still unread in the channel when the worker exits is never answered nor closed, and its client
 * waits until it times out: measured, 20 such connections in 20 rolling restarts of 2 workers
 * under a stream of new connections, and one lesson 8 sign-up in 20 runs. worker.disconnect()
 * waits for the primary's reply to its last message; any hand-over sent before that reply is read
 * first, refused (the server is closed), and given to another worker by the primary.
 * Node: lib/internal/cluster/child.js (_disconnect), round_robin_handle.js (handoff).
 */
function exitAfterPrimary(): void {
  if (!cluster.isWorker || !process.connected) process.exit(0);
  process.once('disconnect', () => process.exit(0));
  setTimeout(() => process.exit(0), 2000).unref(); // a primary that does not answer
  cluster.worker!.disconnect();
}

/**
 * Drains `server` on a stop signal:
 *  1. onStop (the replica's /health turns 503) and the listening socket closes, so new
 *     connections are refused and a balancer (or the cluster primary) sends them elsewhere;
 *  2. every answer from now on, and every answer still being prepared, carries
 *     `Connection: close`, so a busy keep-alive connection closes after its current request;
 *     connections idle for DRAIN_IDLE_CLOSE_MS are closed;
 *  3. the process exits when the last connection closes, or at the deadline, closing the rest.
 * With `abrupt` the process exits at once instead. Each step prints a stop line (STOP_LINE). A
 * cluster worker (`announce: false`) drains on SIGTERM only; any other server on SIGINT and a lost
 * launcher too. Call it before listen(): it counts connections from the first, and takes the
 * stop signals once the server listens.
 * Node docs: net.Server close() (stops accepting, keeps connections), http.Server closeAllConnections().
 */
export function drainOnStop(server: http.Server, opts: DrainOptions = {}): void {
  const { drainDeadlineMs = DRAIN_DEADLINE_MS, announce = true, onStop, abrupt = false } = opts;
  const inFlight = new Set<http.ServerResponse>();
  /** Per connection: answers in progress, and since when it has had none (performance.now() ms). */
  const connections = new Map<Socket, { active: number; idleSince: number }>();
  let stopping = false;
  server.on('connection', (socket: Socket) => {
    connections.set(socket, { active: 0, idleSince: performance.now() });
    socket.once('close', () => connections.delete(socket));
  });
  server.prependListener('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (stopping) res.setHeader('connection', 'close');
    inFlight.add(res);
    const conn = connections.get(req.socket);
    if (conn) conn.active++;
    res.once('close', () => {
      inFlight.delete(res);
      if (conn) {
        conn.active--;
        conn.idleSince = performance.now();
      }
    });
  });
  const say = (line: string) => process.stdout.write(line + '\n');
  const stop = () => {
    if (stopping) return;
    stopping = true;
    if (abrupt) {
      say(`stop: abrupt in-flight=${inFlight.size} cut=${inFlight.size}`);
      process.exit(0);
    }
    const began = performance.now();
    say(`stop: graceful in-flight=${inFlight.size} deadline-ms=${drainDeadlineMs}`);
    onStop?.();
    for (const res of inFlight) if (!res.headersSent) res.setHeader('connection', 'close');
    const finish = (cut: number) => {
      say(`stop: drained cut=${cut} after-ms=${Math.round(performance.now() - began)}`);
      exitAfterPrimary();
    };
    // net.Server's close, not http.Server's: stop accepting but leave idle connections to the sweep.
    net.Server.prototype.close.call(server, () => finish(0));
    const sweep = setInterval(() => {
      const now = performance.now();
      for (const [socket, conn] of connections)
        if (conn.active === 0 && now - conn.idleSince >= DRAIN_IDLE_CLOSE_MS) socket.end();
    }, 50);
    sweep.unref();
    setTimeout(() => {
      const cut = inFlight.size;
      server.closeAllConnections();
      finish(cut);
    }, drainDeadlineMs).unref();
  };
  // `on`, not `once`: a second SIGTERM during the drain (the launcher signals a cluster's whole
  // process group, then the primary signals each worker) must not fall back to SIGTERM's default,
  // which kills the worker mid-drain and, under --profile, before V8 writes its profile.
  const arm = () => {
    process.on('SIGTERM', stop);
    if (!announce) return;
    process.on('SIGINT', stop);
    exitWithLauncher(stop);
  };
  // Armed once the server listens. Before that a stop signal ends the process at once (SIGTERM's
  // default): closing a cluster worker's server while its listen request is still with the primary
  // makes Node's cluster code crash with a TypeError when the late answer comes (seen when the
  // primary stops every worker because one found the port taken).
  if (server.listening) arm();
  else server.once('listening', arm);
}
