/**
 * Lesson 6's vanished-address fault, on SIGUSR2 (servers/replica.ts): the replica lets every open
 * connection finish its request and close, as a drain does, but keeps its listening socket. Once
 * none is open, it fills its own accept queue with connections to itself and stops itself
 * (SIGSTOP) before it can accept them. With the queue full the kernel drops every new SYN to the
 * port (Linux's default, net.ipv4.tcp_abort_on_overflow = 0; BSD kernels too), so a connection
 * attempt gets no answer at all, as when a host and its address are gone: only the connecting
 * side's connect timeout ends it (nginx's proxy_connect_timeout). SIGCONT resumes the replica.
 * A balancer's connection that the kernel completes before the queue is full is one on which its
 * request waits out the response timeout instead: with a small --backlog (1: a queue of 2 on
 * Linux), most of the requests that reach the vanished address cost the connect timeout. The queue
 * holds backlog + 1 connections on Linux and up to 1.5 × backlog on BSD; it fills 2 × (backlog + 1).
 */
import type http from 'node:http';
import net, { type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { HOST } from '../../../lib/ready.ts';
import { DRAIN_IDLE_CLOSE_MS } from './drain.ts';

/** How long the replica waits for its connections to close before it stops anyway, closing the rest, ms. */
const VANISH_DEADLINE_MS = 1000;

/** Wires SIGUSR2 to the fault on `server` (listening with `backlog` on `port()`); `say` prints its `vanish:` lines. */
export function vanishOnSignal(
  server: http.Server,
  backlog: number,
  port: () => number,
  say: (line: string) => void,
): void {
  /** Per open connection: answers in progress, and since when it has had none (performance.now() ms). */
  const open = new Map<Socket, { active: number; idleSince: number }>();
  let closing = false;
  let frozen = false;
  server.on('connection', (socket: Socket) => {
    open.set(socket, { active: 0, idleSince: performance.now() });
    socket.once('close', () => {
      open.delete(socket);
      if (closing && open.size === 0) freeze();
    });
  });
  server.prependListener('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const conn = open.get(req.socket);
    if (conn) conn.active++;
    if (closing) res.setHeader('connection', 'close');
    res.once('close', () => {
      if (!conn) return;
      conn.active--;
      conn.idleSince = performance.now();
    });
  });
  const freeze = () => {
    if (frozen) return;
    frozen = true;
    const fill = 2 * (backlog + 1);
    say(
      `vanish: filling the accept queue (${fill} connections to itself) and stopping; new connections get no answer until SIGCONT`,
    );
    // net.connect to an IP address connects on the next tick, ahead of the tick that stops the
    // process: the kernel completes these handshakes into the queue, which is never accepted from.
    for (let i = 0; i < fill; i++)
      net
        .connect({ host: HOST, port: port() })
        .on('error', () => {})
        .unref();
    process.nextTick(() => {
      for (const s of open.keys()) s.destroy(); // only those the deadline caught
      process.kill(process.pid, 'SIGSTOP');
    });
  };
  process.on('SIGUSR2', () => {
    if (closing) return;
    closing = true;
    say(`vanish: closing ${open.size} connections, then stopping`);
    // As a drain does (servers/lib/serve/main.ts): a busy connection closes after its answer (Connection: close),
    // an idle one once it has been idle DRAIN_IDLE_CLOSE_MS, since closing one that the balancer is
    // about to reuse would cut the request it sends: a quick failure, not the silence of this fault.
    const sweep = setInterval(() => {
      const now = performance.now();
      for (const [s, c] of open) if (c.active === 0 && now - c.idleSince >= DRAIN_IDLE_CLOSE_MS) s.end();
    }, 50);
    sweep.unref();
    if (open.size === 0) freeze();
    setTimeout(freeze, VANISH_DEADLINE_MS).unref();
  });
}
