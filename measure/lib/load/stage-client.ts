/**
 * The client's stages of a request (lesson 9), from undici's diagnostics channels:
 *
 *   request-start         undici:request:create
 *   connect               undici:client:connected, when the request's socket was connected for it
 *                         (absent on a kept-alive connection)
 *   request-written       undici:client:sendHeaders: the request (headers and a small body, which
 *                         undici writes in one go) is about to be handed to the kernel. Stamped
 *                         before the write, not after (undici:request:bodySent): on loopback the
 *                         write wakes the server, which may run first on this core, so a stamp
 *                         after it can land after the server has parsed the request (seen: 0.5 ms).
 *   response-headers-parsed  undici:request:headers: the response's status line and headers are
 *                         parsed (undici has no channel for the first byte; a small answer's head
 *                         comes in one packet)
 *   last-byte             undici:request:trailers (the response complete)
 *
 * Stamps are µs on process.hrtime, the clock the lesson server stamps with (servers/lib/stages/stamps.ts).
 * Only requests whose path carries `?sid=<id>` are followed. undici docs: "Diagnostics Channel".
 */
import dc from 'node:diagnostics_channel';
import type { Socket } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { Client, request, type Dispatcher } from 'undici';
import { KitError } from '../../../lib/errors.ts';
import { nowUs, stageId, type StageEvent } from '../../../servers/lib/stages/stamps.ts';

interface Followed {
  sid: string;
  events: StageEvent[];
}

type Message = { request?: { path?: string; origin?: string }; socket?: Socket };

export interface SendOptions {
  method?: string;
  body?: string;
  /** Ask the server to close the connection afterwards (`Connection: close`). */
  reset?: boolean;
  /** Read the response body at about this many bytes per second (a slow reader). */
  readBytesPerS?: number;
}

export interface Sent {
  status: number;
  events: StageEvent[];
  /** Response body bytes read. */
  bytes: number;
}

/** Follows the stages of the requests this process sends with undici. close() unsubscribes. */
export class StageClient {
  private readonly followed = new WeakMap<object, Followed>();
  private readonly bySid = new Map<string, Followed>();
  private readonly connectedAt = new WeakMap<Socket, number>();
  private readonly handlers: [string, (m: unknown) => void][] = [];

  constructor() {
    const on = (channel: string, f: (m: Message, at: number) => void) => {
      const h = (m: unknown) => f(m as Message, nowUs());
      this.handlers.push([channel, h]);
      dc.subscribe(channel, h);
    };
    on('undici:request:create', (m, at) => {
      const sid = stageId(m.request?.path);
      if (!m.request || sid === undefined) return;
      const f: Followed = { sid, events: [{ stage: 'request-start', atUs: at }] };
      this.followed.set(m.request, f);
      this.bySid.set(sid, f);
    });
    on('undici:client:connected', (m, at) => {
      if (m.socket) this.connectedAt.set(m.socket, at);
    });
    on('undici:client:sendHeaders', (m, at) => {
      const f = m.request && this.followed.get(m.request);
      const connected = m.socket && this.connectedAt.get(m.socket);
      if (!f) return;
      if (connected !== undefined && connected >= f.events[0]!.atUs)
        f.events.push({ stage: 'connect', atUs: connected });
      f.events.push({ stage: 'request-written', atUs: at });
    });
    const stamp = (stage: string) => (m: Message, at: number) => {
      const f = m.request && this.followed.get(m.request);
      f?.events.push({ stage, atUs: at });
    };
    on('undici:request:headers', stamp('response-headers-parsed'));
    on('undici:request:trailers', stamp('last-byte'));
  }

  /**
   * Sends `path` (which must carry ?sid=) over `dispatcher`, reads the whole response, and
   * returns its status and the client's stages. Throws KIT_ERR_REQUEST on a failed request.
   */
  async send(dispatcher: Dispatcher, origin: string, path: string, opts: SendOptions = {}): Promise<Sent> {
    const sid = stageId(path);
    if (sid === undefined)
      throw new KitError('KIT_ERR_USAGE', `${path} has no ?sid=<id>: its stages would not be followed`);
    let res: Dispatcher.ResponseData;
    try {
      res = await request(`${origin}${path}`, {
        dispatcher,
        method: (opts.method ?? 'GET') as Dispatcher.HttpMethod,
        reset: opts.reset ?? false,
        ...(opts.body === undefined ? {} : { body: opts.body, headers: { 'content-type': 'application/json' } }),
      });
    } catch (err) {
      this.bySid.delete(sid);
      throw new KitError(
        'KIT_ERR_REQUEST',
        `${opts.method ?? 'GET'} ${origin}${path} failed: ${(err as Error).message}`,
      );
    }
    let bytes = 0;
    const started = performance.now();
    try {
      for await (const chunk of res.body) {
        bytes += (chunk as Buffer).length;
        // The reader's pace is the experiment's design: sleep until it has "processed" what it read.
        const behind = opts.readBytesPerS ? (bytes / opts.readBytesPerS) * 1000 - (performance.now() - started) : 0;
        if (behind >= 1) await delay(behind); // a timer under 1 ms would still cost a loop turn per chunk
      }
      return { status: res.statusCode, events: this.bySid.get(sid)?.events ?? [], bytes };
    } finally {
      this.bySid.delete(sid);
    }
  }

  close(): void {
    for (const [channel, h] of this.handlers.splice(0)) dc.unsubscribe(channel, h);
  }
}

/** A dispatcher holding one connection to `origin`: requests on it reuse that connection. */
export function oneConnection(origin: string): Client {
  return new Client(origin, { pipelining: 1 });
}

/**
 * Sends one request on a connection of its own, asking the server to close it afterwards
 * (`Connection: close`, undici's `reset`), and closes the dispatcher.
 */
export async function sendFresh(
  client: StageClient,
  origin: string,
  path: string,
  opts: SendOptions = {},
): Promise<Sent> {
  const dispatcher = new Client(origin, { pipelining: 1 });
  try {
    return await client.send(dispatcher, origin, path, { ...opts, reset: true });
  } finally {
    await dispatcher.close();
  }
}
