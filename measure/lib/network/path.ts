/**
 * Lesson 12's path from this process to its two servers (a replica, and lesson 9's export server):
 * each behind a toxic proxy (servers/toxic-proxy.ts) that adds latency.
 *
 * As root on Linux, both servers and both proxies run in one network namespace the kit makes
 * (servers/lib/network/netns.ts), the servers on its own loopback and the proxies on its end of
 * the veth link, so this process's connections cross the link where nftables drops packets and
 * tbf limits the rate: a lost packet is really lost, and TCP really retransmits it. Elsewhere (no
 * root, macOS) all four run on 127.0.0.1 and the proxy limits the rate itself; loss is not shown.
 * The namespace goes when the lab closes, after its servers (Lab.afterServersStop).
 */
import type { Lab } from '../process/lab.ts';
import type { ServerProcess } from '../process/launch.ts';
import { KitError } from '../../../lib/errors.ts';
import { NetLab, netnsUnavailable } from '../../../servers/lib/network/netns.ts';
import type { ProxyToxics } from '../../../servers/lib/network/toxic-proxy.ts';

export class NetworkPath {
  private constructor(
    private readonly net: NetLab | undefined,
    /** Why the kernel's parts are missing, or undefined. */
    readonly kernelMissing: string | undefined,
    readonly replica: ServerProcess,
    readonly exporter: ServerProcess,
    private readonly proxies: { replica: ServerProcess; exporter: ServerProcess },
  ) {}

  /** Starts the servers and proxies, in a namespace when this machine allows one. */
  static async open(lab: Lab, useKernel: boolean): Promise<NetworkPath> {
    const missing = useKernel ? await netnsUnavailable() : 'not asked for (--no-kernel)';
    let net: NetLab | undefined;
    if (!missing) {
      net = await NetLab.create(1);
      const made = net;
      lab.afterServersStop(() => made.close());
    }
    const netns = net && { name: net.hosts[0]!.ns, wrap: (c: string, a: string[]) => net.wrap(0, c, a) };
    const listen = net ? net.hosts[0]!.addr : '127.0.0.1';
    const inside = netns ? { netns } : {};
    const [replica, exporter] = await Promise.all([
      lab.start({ server: 'replica', args: ['--name', 'app1', '--port', '0'], ...inside }),
      lab.start({ server: 'stages', args: ['--port', '0'], ...inside }),
    ]);
    const proxy = (upstream: ServerProcess) =>
      lab.start({
        server: 'toxic-proxy',
        args: ['--upstream-port', String(upstream.port), '--listen', listen, '--port', '0'],
        ipc: true,
        ...inside,
      });
    const [p1, p2] = await Promise.all([proxy(replica), proxy(exporter)]);
    return new NetworkPath(net, missing, replica, exporter, { replica: p1, exporter: p2 });
  }

  /** True when loss and tbf are real (the namespace). */
  get kernel(): boolean {
    return this.net !== undefined;
  }

  /** The replica's link: http://<address>:<port> of its proxy. */
  get replicaOrigin(): string {
    return this.proxies.replica.url;
  }

  get exportOrigin(): string {
    return this.proxies.exporter.url;
  }

  /**
   * Sets both proxies' toxics: half of `rttMs` (and of `jitterMs`) each way, and a rate limit
   * downstream when the kernel cannot limit it.
   */
  async setToxics(rttMs: number, bytesPerS?: number, jitterMs = 0): Promise<void> {
    const way = { latencyMs: rttMs / 2, ...(jitterMs ? { jitterMs: jitterMs / 2 } : {}) };
    const toxics: ProxyToxics = {
      upstream: way,
      downstream: { ...way, ...(bytesPerS && !this.kernel ? { bytesPerS } : {}) },
    };
    await Promise.all(Object.values(this.proxies).map((p) => sendToxics(p, toxics)));
  }

  /** Drops `percent` of the packets to the replica's proxy (nftables); needs the namespace. */
  async setLoss(percent: number): Promise<void> {
    if (!this.net) {
      if (percent === 0) return;
      throw new KitError('KIT_ERR_USAGE', `loss needs the namespace: ${this.kernelMissing}`);
    }
    await this.net.setLoss(0, this.proxies.replica.port, percent);
  }

  /** Limits what the namespace sends (tbf), or with no kernel the proxies (setToxics); undefined lifts it. */
  async setBandwidth(bytesPerS: number | undefined): Promise<void> {
    if (this.net) await this.net.setBandwidth(0, bytesPerS === undefined ? undefined : bytesPerS * 8);
  }

  /** Where the rate limit is applied. */
  get limitedBy(): 'tbf' | 'proxy' {
    return this.net ? 'tbf' : 'proxy';
  }
}

/** Sends toxics to a proxy and waits for its answer; KIT_ERR_USAGE with its reason when refused. */
async function sendToxics(proxy: ServerProcess, toxics: ProxyToxics): Promise<void> {
  const from = proxy.messageCount;
  proxy.send({ toxics });
  const answer = await proxy.waitForMessage(
    (m): m is { toxicsSet?: true; toxicsError?: string } => !!m && ('toxicsSet' in m || 'toxicsError' in m),
    5000,
    from,
  );
  if (answer.toxicsError) throw new KitError('KIT_ERR_USAGE', answer.toxicsError);
}
