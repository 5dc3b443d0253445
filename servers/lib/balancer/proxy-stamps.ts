/**
 * The kit's balancer's own stages of a request (lesson 9, `--stages`), from Node's and undici's
 * diagnostics channels in the balancer's process:
 *
 *   accept                      net.server.socket: the client's connection (its first request only)
 *   headers-parsed              http.server.request.start: the client's request parsed
 *   upstream-connect            undici:client:connected: a new connection to the replica (absent
 *                               when an idle one was reused)
 *   upstream-request-written    undici:client:sendHeaders: the request, as the balancer starts
 *                               writing it to the replica
 *   upstream-headers-parsed     undici:request:headers: the replica's answer's head parsed
 *   finish                      http.server.response.finish: the answer handed to the kernel
 *
 * Only requests carrying `?sid=<id>` are recorded (the last MAX_RECORDS); µs on the machine's
 * monotonic clock, as servers/lib/stages/stamps.ts stamps.
 */
import dc from 'node:diagnostics_channel';
import type http from 'node:http';
import type net from 'node:net';
import { nowUs, settledWithin, stageId, type StageEvent } from '../stages/stamps.ts';

const MAX_RECORDS = 500;

interface Pending {
  events: StageEvent[];
  done: Promise<void>;
  settle: () => void;
}

type Message = { request?: { path?: string; url?: string }; socket?: net.Socket; server?: http.Server };

/** One balancer's recorder; subscribes on construction. */
export class ProxyStageRecorder {
  private readonly acceptedAt = new WeakMap<net.Socket, number>();
  private readonly seenSocket = new WeakSet<net.Socket>();
  private readonly upstreamConnectedAt = new WeakMap<net.Socket, number>();
  private readonly bySid = new Map<string, Pending>();

  constructor(private readonly server: http.Server) {
    const on = (channel: string, f: (m: Message, at: number) => void) =>
      dc.subscribe(channel, (m) => f(m as Message, nowUs()));
    on('net.server.socket', (m, at) => m.socket && this.acceptedAt.set(m.socket, at));
    on('http.server.request.start', (m, at) => {
      const sid = m.server === this.server ? stageId(m.request?.url) : undefined;
      if (sid === undefined || !m.socket) return;
      const events: StageEvent[] = [];
      const accepted = this.acceptedAt.get(m.socket);
      if (accepted !== undefined && !this.seenSocket.has(m.socket)) events.push({ stage: 'accept', atUs: accepted });
      this.seenSocket.add(m.socket);
      events.push({ stage: 'headers-parsed', atUs: at });
      let settle = () => {};
      const done = new Promise<void>((resolve) => (settle = resolve));
      this.bySid.set(sid, { events, done, settle });
      if (this.bySid.size > MAX_RECORDS) this.bySid.delete(this.bySid.keys().next().value!);
    });
    on('undici:client:connected', (m, at) => m.socket && this.upstreamConnectedAt.set(m.socket, at));
    on('undici:client:sendHeaders', (m, at) => {
      const p = this.pending(m.request?.path);
      if (!p) return;
      const connected = m.socket && this.upstreamConnectedAt.get(m.socket);
      if (connected !== undefined && connected >= p.events[0]!.atUs)
        p.events.push({ stage: 'upstream-connect', atUs: connected });
      p.events.push({ stage: 'upstream-request-written', atUs: at });
    });
    on('undici:request:headers', (m, at) =>
      this.pending(m.request?.path)?.events.push({ stage: 'upstream-headers-parsed', atUs: at }),
    );
    on('http.server.response.finish', (m, at) => {
      const p = m.server === this.server ? this.pending(m.request?.url) : undefined;
      p?.events.push({ stage: 'finish', atUs: at });
      p?.settle();
    });
  }

  private pending(target: string | undefined): Pending | undefined {
    const sid = stageId(target);
    return sid === undefined ? undefined : this.bySid.get(sid);
  }

  /** Request `sid`'s stages once its answer has finished, in time order; undefined when unknown or not finished within `deadlineMs`. */
  async stages(sid: string, deadlineMs: number): Promise<StageEvent[] | undefined> {
    const p = this.bySid.get(sid);
    return p && (await settledWithin(p.done, deadlineMs)) ? [...p.events].sort((a, b) => a.atUs - b.atUs) : undefined;
  }
}
