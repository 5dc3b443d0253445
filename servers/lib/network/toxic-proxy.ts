/**
 * A TCP proxy with "toxics", after Shopify's toxiproxy: the network between a balancer and a
 * replica, made in user space, where the kernel cannot (this kernel has no netem; lesson 12).
 * Each connection to the proxy opens one to the upstream, and each direction of it is a link:
 *
 *   - latency ± jitter: each chunk is due at its arrival plus the latency and a uniform jitter,
 *     and never before the chunk ahead of it, so the bytes keep their order (toxiproxy's rule);
 *   - bandwidth: a running time budget, each chunk leaving once the ones before it had their
 *     bytes' time at the rate (bytes / rate after the link last freed);
 *   - a high-water mark: past it the link pauses its source, and resumes it below half, so a slow
 *     link holds at most about that much of a fast sender's data (and a slow reader's write()
 *     returning false pauses the link's source too);
 *   - timeout: no data passes, and the connection is closed after `timeoutMs` (0: never), as
 *     toxiproxy's timeout toxic does: a replica that hangs;
 *   - slow close: the end of a stream reaches the other side `slowCloseMs` late.
 *   - reset peer: a new connection is accepted and reset at once (RST), as toxiproxy's reset_peer;
 *   - the handshake: a real network makes a new connection wait one round trip (SYN, SYN-ACK)
 *     before its first byte can leave, but the proxy's kernel accepts at once on its side, so a
 *     new connection's first chunk to the upstream is held one round trip (the two directions'
 *     latency) longer than the ones after it. Toxiproxy does not do this; lesson 12's finding that
 *     a connection per request pays two round trips where keep-alive pays one needs it.
 *
 * Toxics apply per direction: `upstream` (client to replica) and `downstream` (replica to client).
 * A round trip through the proxy pays both directions' latency, each met to a few hundredths of a
 * millisecond (SPIN_MS says how). Listens on 127.0.0.1 only.
 */
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { NAMESPACE_HOST } from '../../../lib/ready.ts';

/** What one direction of a connection suffers; every field is optional, and absent means none. */
interface Toxics {
  /** Added to each chunk, ms (0 to 2,000). */
  latencyMs?: number;
  /** Each chunk's latency varies uniformly by up to this much either way, ms (at most latencyMs). */
  jitterMs?: number;
  /** The link's rate, bytes per second (above 0). */
  bytesPerS?: number;
  /** With `hang`: nothing passes; the connection is closed after timeoutMs (0: never), ms. */
  hang?: boolean;
  timeoutMs?: number;
  /** The end of the stream is passed on this much late, ms. */
  slowCloseMs?: number;
}

export interface ProxyToxics {
  upstream?: Toxics;
  downstream?: Toxics;
  /** New connections are reset at once (RST) instead of being proxied. */
  resetPeer?: boolean;
}

/**
 * Past this many bytes held by a link its source is paused; below half of it, resumed. A link holds
 * at most this plus one read from its source (64 KiB on loopback here): 128 KiB.
 */
export const HIGH_WATER = 64 * 1024;
/**
 * Node's timers count whole milliseconds of the loop's clock (a delay under 1 ms is 1 ms), so they
 * fire up to about a millisecond late: a 2 ms and a 3 ms latency added 6.2 ms to a round trip, and
 * a 1 ms one 1.6 ms. So a link sets its timer SPIN_MS before a chunk is due, then checks the clock
 * on each turn of the loop (setImmediate) until the chunk is due: at most SPIN_MS of a core per
 * wait, and each chunk leaves within a few hundredths of a millisecond of its time.
 */
const SPIN_MS = 1.5;

/** Throws a RangeError naming the first toxic out of its range. */
export function checkToxics(t: ProxyToxics): void {
  for (const [dir, x] of [
    ['upstream', t.upstream],
    ['downstream', t.downstream],
  ] as const) {
    if (!x) continue;
    const lat = x.latencyMs ?? 0;
    if (!(lat >= 0 && lat <= 2000)) throw new RangeError(`${dir} latency is 0 to 2000 ms; got ${lat}`);
    const jit = x.jitterMs ?? 0;
    if (!(jit >= 0 && jit <= lat)) throw new RangeError(`${dir} jitter is 0 to the latency (${lat} ms); got ${jit}`);
    if (x.bytesPerS !== undefined && !(x.bytesPerS > 0))
      throw new RangeError(`${dir} bandwidth is above 0 bytes/s; got ${x.bytesPerS}`);
    if (!((x.timeoutMs ?? 0) >= 0)) throw new RangeError(`${dir} timeout is 0 ms or more; got ${x.timeoutMs}`);
    if (!((x.slowCloseMs ?? 0) >= 0)) throw new RangeError(`${dir} slow close is 0 ms or more; got ${x.slowCloseMs}`);
  }
}

/** One direction of one connection: chunks from `src`, each written to `dst` when it is due. */
class Link {
  private readonly queue: { chunk: Buffer; dueAt: number }[] = [];
  private held = 0;
  private lastDue = 0;
  private freeAt = 0;
  /** The wait for the head chunk: a timer, then turns of the loop (see SPIN_MS). */
  private timer: NodeJS.Timeout | undefined;
  private immediate: NodeJS.Immediate | undefined;
  private ended = false;
  private paused = false;

  /** `notBefore`: no chunk is due before this (performance.now() ms): the handshake's round trip. */
  constructor(
    private readonly src: net.Socket,
    private readonly dst: net.Socket,
    private readonly toxics: () => Toxics,
    private readonly rng: () => number,
    notBefore = 0,
  ) {
    this.lastDue = notBefore;
    src.on('data', (chunk: Buffer) => this.take(chunk));
    src.on('end', () => {
      if (this.toxics().hang) return; // nothing passes, not even the end
      this.ended = true;
      this.pump();
    });
    dst.on('drain', () => this.resume());
  }

  /** Bytes waiting in the link, for the tests. */
  get heldBytes(): number {
    return this.held;
  }

  private take(chunk: Buffer): void {
    const t = this.toxics();
    if (t.hang) return; // swallowed: a replica that hangs answers nothing
    const now = performance.now();
    const jitter = t.jitterMs ? (this.rng() * 2 - 1) * t.jitterMs : 0;
    let dueAt = Math.max(now + (t.latencyMs ?? 0) + jitter, this.lastDue);
    if (t.bytesPerS) {
      dueAt = Math.max(dueAt, this.freeAt);
      this.freeAt = dueAt + (chunk.length / t.bytesPerS) * 1000;
    }
    this.lastDue = dueAt;
    this.queue.push({ chunk, dueAt });
    this.held += chunk.length;
    if (this.held > HIGH_WATER && !this.paused) {
      this.paused = true;
      this.src.pause();
    }
    this.pump();
  }

  /** Writes every chunk that is due, then waits for the next one (or passes the end on). */
  private pump(): void {
    if (this.timer || this.immediate) return;
    const now = performance.now();
    while (this.queue.length && this.queue[0]!.dueAt <= now) {
      const { chunk } = this.queue.shift()!;
      this.held -= chunk.length;
      if (!this.dst.destroyed && !this.dst.write(chunk) && !this.paused) {
        this.paused = true;
        this.src.pause();
      }
    }
    if (this.held <= HIGH_WATER / 2 && !this.dst.writableNeedDrain) this.resume();
    if (this.queue.length) {
      const wait = this.queue[0]!.dueAt - now;
      const again = () => {
        this.timer = this.immediate = undefined;
        this.pump();
      };
      if (wait > SPIN_MS) this.timer = setTimeout(again, wait - SPIN_MS);
      else this.immediate = setImmediate(again);
    } else if (this.ended) {
      this.ended = false;
      const late = this.toxics().slowCloseMs ?? 0;
      const close = () => this.dst.end();
      if (late > 0) setTimeout(close, late).unref();
      else close();
    }
  }

  private resume(): void {
    if (this.paused && this.held <= HIGH_WATER / 2) {
      this.paused = false;
      this.src.resume();
    }
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    if (this.immediate) clearImmediate(this.immediate);
    this.timer = this.immediate = undefined;
    this.queue.length = 0;
  }
}

/** A proxy in front of one upstream (host:port), with toxics that may change while it runs. */
export class ToxicProxy {
  private readonly server: net.Server;
  private readonly sockets = new Set<net.Socket>();
  private readonly links = new Set<Link>();
  private toxics: ProxyToxics;

  constructor(
    private readonly upstream: { host: string; port: number },
    toxics: ProxyToxics = {},
    private readonly rng: () => number = Math.random,
  ) {
    checkToxics(toxics);
    this.toxics = toxics;
    this.server = net.createServer((client) => this.connect(client));
  }

  /**
   * Starts listening on `host`:`port` (0: any free port); resolves to the port. The host is
   * 127.0.0.1, or inside a kit namespace its own address (lib/ready.ts, NAMESPACE_HOST).
   */
  async listen(port = 0, host = '127.0.0.1'): Promise<number> {
    if (host !== '127.0.0.1' && !NAMESPACE_HOST.test(host))
      throw new RangeError(`a toxic proxy listens on 127.0.0.1 or a kit namespace's address; got ${host}`);
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => resolve());
    });
    return (this.server.address() as net.AddressInfo).port;
  }

  /** New toxics, for what passes from now on (chunks already in a link keep their due times). */
  set(toxics: ProxyToxics): void {
    checkToxics(toxics);
    this.toxics = toxics;
  }

  /** Bytes held in its links now. */
  heldBytes(): number {
    let n = 0;
    for (const l of this.links) n += l.heldBytes;
    return n;
  }

  private connect(client: net.Socket): void {
    if (this.toxics.resetPeer) {
      client.resetAndDestroy();
      return;
    }
    const upstream = net.connect(this.upstream.port, this.upstream.host);
    for (const s of [client, upstream]) {
      this.sockets.add(s);
      s.setNoDelay(true);
      s.on('close', () => this.sockets.delete(s));
    }
    const roundTrip = (this.toxics.upstream?.latencyMs ?? 0) + (this.toxics.downstream?.latencyMs ?? 0);
    const handshake = roundTrip + (this.toxics.upstream?.latencyMs ?? 0);
    const up = new Link(client, upstream, () => this.toxics.upstream ?? {}, this.rng, performance.now() + handshake);
    const down = new Link(upstream, client, () => this.toxics.downstream ?? {}, this.rng);
    this.links.add(up).add(down);
    const hangMs = [this.toxics.upstream, this.toxics.downstream].find((t) => t?.hang)?.timeoutMs ?? 0;
    const hangTimer = hangMs > 0 ? setTimeout(() => end(), hangMs) : undefined;
    const end = () => {
      if (hangTimer) clearTimeout(hangTimer);
      up.stop();
      down.stop();
      this.links.delete(up);
      this.links.delete(down);
      client.destroy();
      upstream.destroy();
    };
    // An error on either side ends both. A side's end (FIN) is passed on by its link once what it
    // holds has been written; once the client has gone, nothing the upstream sends can reach it.
    client.on('error', end).on('close', end);
    upstream.on('error', end);
  }

  /** Stops listening and ends every connection through it. */
  async close(): Promise<void> {
    for (const l of this.links) l.stop();
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
