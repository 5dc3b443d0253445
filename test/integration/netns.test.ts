// Proves lesson 12's kernel network (servers/lib/network/netns.ts) on real namespaces, as root on
// Linux: a server in a namespace is reached at its address; nftables' random drop loses SYNs, and
// removing the rule loses none; tbf holds a transfer to its rate; closing the lab leaves no
// namespace, table or veth behind; and a namespace whose owner is gone (a SIGKILL) is swept at the
// next start while a live owner's stays. Elsewhere it skips, saying why.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { kitNamespaces, netnsUnavailable, NetLab, sweepNamespaces } from '../../servers/lib/network/netns.ts';
import { failOnWarnings, spawnOwned, toolSkip } from '../helpers.ts';

failOnWarnings();
const why = await netnsUnavailable();
// A missing tool fails where tools are required (CI installs them); no root or no namespaces skips.
const skip = why && /^needs (ip|nft|tc) /.test(why) ? toolSkip('nft', why) : (why ?? false);

/** A server in namespace `n` on port 7000: echoes, or with `send` sends that many bytes and closes. */
async function serverIn(t: import('node:test').TestContext, lab: NetLab, n: number, send = 0): Promise<void> {
  const code = `const s=require('net').createServer(c=>{${send ? `c.end(Buffer.alloc(${send},1))` : 'c.pipe(c)'}}).listen(7000,'0.0.0.0',()=>console.log('listening'))`;
  const [cmd, args] = lab.wrap(n, process.execPath, ['-e', code]);
  const child = spawnOwned(t, cmd, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (c) => reject(new Error(`the server in namespace ${n} exited (${c})`)));
    createInterface({ input: child.stdout! }).on('line', (l) => l === 'listening' && resolve());
  });
}

/** Connects to addr:7000 within `ms`; true if it did. */
function connects(addr: string, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host: addr, port: 7000, timeout: ms });
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('timeout', () => (s.destroy(), resolve(false)));
    s.once('error', () => resolve(false));
  });
}

/** Reads everything addr:7000 sends; ms it took. */
function download(addr: string): Promise<{ bytes: number; ms: number }> {
  return new Promise((resolve, reject) => {
    const began = performance.now();
    let bytes = 0;
    const s = net.connect(7000, addr);
    s.on('data', (d) => (bytes += d.length));
    s.once('end', () => resolve({ bytes, ms: performance.now() - began }));
    s.once('error', reject);
  });
}

test(
  'a lab of two namespaces: reached, loss from nftables, bandwidth from tbf, and nothing left when closed',
  { skip },
  async (t) => {
    const lab = await NetLab.create(2);
    t.after(() => lab.close());
    assert.deepEqual((await kitNamespaces()).filter((n) => n.startsWith(`nsl-${process.pid}-`)).sort(), [
      `nsl-${process.pid}-0`,
      `nsl-${process.pid}-1`,
    ]);
    await serverIn(t, lab, 0);
    const a = lab.hosts[0]!.addr;
    assert.equal(await connects(a, 1000), true);

    // Half the SYNs to port 7000 dropped: of 20 connects with 300 ms to spare (under the 1 s RTO), some fail.
    await lab.setLoss(0, 7000, 50);
    let ok = 0;
    for (let i = 0; i < 20; i++) if (await connects(a, 300)) ok++;
    assert.ok(ok >= 3 && ok <= 17, `${ok} of 20 connected at 50 % loss`);
    await lab.setLoss(0, 7000, 0);
    for (let i = 0; i < 10; i++) assert.equal(await connects(a, 1000), true, 'no loss once the rule is gone');

    // 250 KB out of namespace 1 at 4 Mbit/s: about 0.5 s; without the limit, far less.
    await serverIn(t, lab, 1, 250_000);
    const b = lab.hosts[1]!.addr;
    const free = await download(b);
    await lab.setBandwidth(1, 4_000_000);
    const held = await download(b);
    assert.equal(held.bytes, 250_000);
    assert.ok(held.ms >= 400 && held.ms <= 750, `250 KB at 4 Mbit/s took ${held.ms.toFixed(0)} ms`);
    assert.ok(free.ms < 150, `without a limit it took ${free.ms.toFixed(0)} ms`);
    await assert.rejects(lab.setLoss(0, 7000, 51), /loss is 0 to 50 %/);
  },
);

test(
  'closing the lab removes its namespaces, tables and veth pairs; a dead owner’s namespace is swept, a live one’s kept',
  { skip },
  async () => {
    const lab = await NetLab.create(1);
    await lab.setLoss(0, 7000, 5);
    await lab.close();
    assert.deepEqual(
      (await kitNamespaces()).filter((n) => n.startsWith(`nsl-${process.pid}-`)),
      [],
    );
    assert.doesNotMatch(execFileSync('ip', ['-o', 'link']).toString(), new RegExp(`nslh${process.pid}x`));

    // What a SIGKILL leaves: a namespace named for a process that has exited.
    const dead = spawnSync(process.execPath, ['-e', 'console.log(process.pid)']).stdout.toString().trim();
    execFileSync('ip', ['netns', 'add', `nsl-${dead}-0`]);
    const live = await NetLab.create(1); // its start sweeps
    try {
      assert.ok(!(await kitNamespaces()).includes(`nsl-${dead}-0`), 'swept at the next start');
      assert.deepEqual(await sweepNamespaces(), [], 'a live owner’s namespace is not swept');
      assert.ok((await kitNamespaces()).includes(`nsl-${process.pid}-0`));
    } finally {
      await live.close();
    }
  },
);
