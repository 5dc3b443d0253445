/**
 * Lesson 12's real network, on Linux as root: one network namespace per replica, joined to the
 * host by a veth pair, with loss from nftables and bandwidth from tbf, both inside the namespace.
 * (This kernel has no netem; latency and jitter come from the toxic proxy, toxic-proxy.ts.)
 *
 * Everything the kit makes here lives in, or dies with, a namespace named `nsl-<owner pid>-<n>`:
 * its nft table, its qdisc and its end of the veth are inside it, and the host's end of a veth
 * goes when its peer does. So deleting the namespace removes all of it, and `sweepNamespaces()`
 * deletes every kit namespace whose owner is no longer alive: what a SIGKILL left, at the next
 * start. Traffic goes only to the namespaces' own addresses, 10.<200 + pid mod 50>.<n>.0/30.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The names this module gives its namespaces: nsl-<owner pid>-<n>. */
const NAME = /^nsl-(\d+)-(\d+)$/;

/** Why lesson 12's kernel parts cannot run here, or undefined when they can (Linux, root, ip and nft). */
export async function netnsUnavailable(): Promise<string | undefined> {
  if (process.platform !== 'linux') return `needs Linux (this is ${process.platform})`;
  if (process.getuid?.() !== 0) return 'needs root on Linux';
  for (const tool of ['ip', 'nft', 'tc']) {
    try {
      await run(tool, ['-V']);
    } catch {
      return `needs ${tool} (Debian: apt-get install iproute2 nftables)`;
    }
  }
  // Root in a container may still lack CAP_NET_ADMIN: try one.
  const trial = `nsl-${process.pid}-trial`;
  try {
    await run('ip', ['netns', 'add', trial]);
    await run('ip', ['netns', 'del', trial]);
  } catch (err) {
    const said = String((err as { stderr?: string }).stderr ?? err)
      .trim()
      .split('\n')[0];
    return `the kernel refused a network namespace here (${said})`;
  }
  return undefined;
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** The kit's namespaces now, by name. */
export async function kitNamespaces(): Promise<string[]> {
  const { stdout } = await run('ip', ['netns', 'list']);
  return stdout
    .split('\n')
    .map((l) => l.split(' ')[0]!)
    .filter((n) => NAME.test(n));
}

/** The host's end of a kit veth pair: nslh<owner pid>x<n>. */
const LINK = /^nslh(\d+)x\d+$/;

/** Deletes every kit veth pair and namespace whose owner process is gone; returns the namespaces' names. */
export async function sweepNamespaces(): Promise<string[]> {
  const { stdout } = await run('ip', ['-o', 'link']);
  for (const m of stdout.matchAll(/^\d+: ([^:@]+)/gm)) {
    const owner = LINK.exec(m[1]!)?.[1];
    if (owner && !alive(Number(owner))) await run('ip', ['link', 'del', m[1]!]).catch(() => {});
  }
  const gone = (await kitNamespaces()).filter((n) => !alive(Number(NAME.exec(n)![1])));
  for (const n of gone) await run('ip', ['netns', 'del', n]).catch(() => {});
  return gone;
}

/** One replica's namespace: its name, the host's address on its link, and its own. */
interface Host {
  ns: string;
  /** The host's end of the veth pair. */
  link: string;
  hostAddr: string;
  addr: string;
}

/** The namespaces of one run, owned by this process. */
export class NetLab {
  private constructor(readonly hosts: Host[]) {}

  /** Makes `count` namespaces (1 to 16), each with a veth link to the host; sweeps first. */
  static async create(count: number): Promise<NetLab> {
    if (!Number.isInteger(count) || count < 1 || count > 16)
      throw new RangeError(`a network lab has 1 to 16 namespaces; got ${count}`);
    await sweepNamespaces();
    const net = 200 + (process.pid % 50);
    const lab = new NetLab([]);
    try {
      for (let n = 0; n < count; n++) {
        const ns = `nsl-${process.pid}-${n}`;
        const outside = `nslh${process.pid}x${n}`.slice(0, 15);
        const host: Host = { ns, link: outside, hostAddr: `10.${net}.${n}.1`, addr: `10.${net}.${n}.2` };
        lab.hosts.push(host);
        await run('ip', ['netns', 'add', ns]);
        await run('ip', ['link', 'add', outside, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns]);
        await run('ip', ['addr', 'add', `${host.hostAddr}/30`, 'dev', outside]);
        await run('ip', ['link', 'set', outside, 'up']);
        await inside(ns, 'ip', ['addr', 'add', `${host.addr}/30`, 'dev', 'eth0']);
        await inside(ns, 'ip', ['link', 'set', 'eth0', 'up']);
        await inside(ns, 'ip', ['link', 'set', 'lo', 'up']);
      }
    } catch (err) {
      await lab.close();
      throw err;
    }
    return lab;
  }

  /**
   * Drops `percent` (0 to 50) of the packets that reach namespace `n`'s TCP port `port`, at random
   * (nftables' numgen), in a table inside the namespace; 0 removes it.
   */
  async setLoss(n: number, port: number, percent: number): Promise<void> {
    if (!(percent >= 0 && percent <= 50)) throw new RangeError(`loss is 0 to 50 %; got ${percent}`);
    const ns = this.host(n).ns;
    await inside(ns, 'nft', ['delete', 'table', 'inet', 'nsl']).catch(() => {});
    if (percent === 0) return;
    const rules = [
      'table inet nsl {',
      '  chain input {',
      '    type filter hook input priority 0; policy accept;',
      `    tcp dport ${port} numgen random mod 100 < ${percent} drop`,
      '  }',
      '}',
    ].join('\n');
    await inside(ns, 'nft', ['-f', '-'], rules);
  }

  /** Limits what namespace `n` sends to `bitsPerS` (above 0) with tbf on its link; undefined removes it. */
  async setBandwidth(n: number, bitsPerS: number | undefined): Promise<void> {
    const ns = this.host(n).ns;
    await inside(ns, 'tc', ['qdisc', 'del', 'dev', 'eth0', 'root']).catch(() => {});
    if (bitsPerS === undefined) return;
    if (!(bitsPerS > 0)) throw new RangeError(`bandwidth is above 0; got ${bitsPerS}`);
    // A burst of at least one 1,500-byte packet and 10 ms at the rate, as tbf needs.
    const burst = Math.max(1600, Math.ceil(bitsPerS / 8 / 100));
    await inside(ns, 'tc', [
      'qdisc',
      'add',
      'dev',
      'eth0',
      'root',
      'tbf',
      'rate',
      `${Math.round(bitsPerS)}bit`,
      'burst',
      String(burst),
      'latency',
      '100ms',
    ]);
  }

  /** The command line that runs `command` inside namespace `n` (ip netns exec replaces itself with it). */
  wrap(n: number, command: string, args: string[]): [string, string[]] {
    return ['ip', ['netns', 'exec', this.host(n).ns, command, ...args]];
  }

  private host(n: number): Host {
    const h = this.hosts[n];
    if (!h) throw new RangeError(`no namespace ${n}: this lab has ${this.hosts.length}`);
    return h;
  }

  /**
   * Deletes its veth pairs, then its namespaces and with them their tables and qdiscs (call it once
   * the processes inside have ended). The kernel destroys a deleted namespace's devices later, in
   * the background, so the veth pairs are deleted first, at once.
   */
  async close(): Promise<void> {
    for (const h of this.hosts.splice(0)) {
      await run('ip', ['link', 'del', h.link]).catch(() => {});
      await run('ip', ['netns', 'del', h.ns]).catch(() => {});
    }
  }
}

/** Runs `command` inside namespace `ns`, with `stdin` written to it when given. */
async function inside(ns: string, command: string, args: string[], stdin?: string): Promise<void> {
  const child = run('ip', ['netns', 'exec', ns, command, ...args]);
  if (stdin !== undefined) {
    child.child.stdin!.end(stdin);
  }
  await child;
}
