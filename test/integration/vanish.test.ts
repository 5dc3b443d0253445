// Proves the vanished-address fault on real processes: after SIGUSR2 a replica's port takes no
// connection (a connect attempt gets no answer, not a refusal) until SIGCONT, after which it
// answers again; and both balancers give up on it after their connect timeout, on time (not the
// response timeout, not undici's coarse timer), log the try as 504, and retry elsewhere; a
// vanished replica (stopped by itself) is still ended by the lab's stop.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import path from 'node:path';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { parseAccessLine } from '../../servers/lib/access-log.ts';
import { Lab } from '../../measure/lib/lab.ts';
import { probe } from '../../measure/lib/probe.ts';
import { retriesOf, startBalancer, startReplicas, type BalancerKind, type Replica } from '../../measure/lib/topology.ts';
import { readStat } from '../../measure/lib/proc.ts';
import { pollUntil } from '../../measure/lib/wait.ts';
import { assertAllGone, failOnWarnings, skipUnless } from '../helpers.ts';

failOnWarnings();
const lab = new Lab();
after(() => lab.close());

/** How a connection attempt to `port` ends within `ms`: 'connected', 'refused', or 'no-answer'. */
function attempt(port: number, ms: number): Promise<'connected' | 'refused' | 'no-answer'> {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port });
    const timer = setTimeout(() => {
      s.destroy();
      resolve('no-answer');
    }, ms);
    s.once('connect', () => {
      clearTimeout(timer);
      s.destroy();
      resolve('connected');
    });
    s.once('error', () => {
      clearTimeout(timer);
      resolve('refused');
    });
  });
}

/**
 * SIGUSR2 to `r`, then waits until it has stopped itself: its `vanish:` line comes before it fills
 * its queue, and a connection made before the queue is full would be taken into it.
 */
async function vanish(r: Replica): Promise<void> {
  const from = r.proc.lines.length;
  r.proc.signal('SIGUSR2');
  await r.proc.waitForLine(/^vanish: filling the accept queue/, 5000, from);
  await pollUntil(`${r.name} to stop itself`, () => (readStat(r.proc.pid)?.state === 'T' ? true : undefined), 5000);
}

test('SIGUSR2: the replica\'s port answers no connection attempt until SIGCONT, then it serves again', { timeout: 20_000 }, async () => {
  const [r] = await startReplicas(lab, 1, ['--backlog', '1']);
  const port = r!.proc.port;
  assert.equal(await attempt(port, 500), 'connected');
  await vanish(r!);
  assert.equal(await attempt(port, 700), 'no-answer');
  assert.equal(await attempt(port, 700), 'no-answer');
  r!.proc.signal('SIGCONT');
  assert.equal((await probe(`${r!.url}/fast`)).status, 200);
  await lab.stop(r!.proc);
});

test('a vanished replica is ended like any other: the lab thaws it, stops it, and it is gone', { timeout: 20_000 }, async () => {
  const [r] = await startReplicas(lab, 1, ['--backlog', '1']);
  await vanish(r!);
  await lab.stop(r!.proc);
  await assertAllGone([r!.proc.pid]);
});

const BALANCERS: { kind: BalancerKind; skip: string | false }[] = [
  { kind: 'builtin', skip: false },
  { kind: 'nginx', skip: skipUnless('nginx') },
];

for (const { kind, skip } of BALANCERS) {
  test(`${kind}: a try on a vanished address ends at the connect timeout (504), not the response timeout, and is retried`, { skip, timeout: 30_000 }, async () => {
    const replicas = await startReplicas(lab, 2, [], ['--backlog', '1']);
    const file = path.join(lab.tempDir('vanish-test'), 'access.log');
    // A connect timeout under one second (undici's own timer would be up to half a second late
    // there) and a response timeout far from it, so the try's time says which one ended it.
    const lb = await startBalancer(lab, kind, 'round-robin', replicas, 0, true, ['--connect-timeout', '400', '--response-timeout', '3000', '--access-log', file]);
    const gone = replicas[1]!;
    await vanish(gone);
    try {
      const times: number[] = [];
      for (let i = 0; i < 4; i++) {
        const t0 = performance.now();
        assert.equal((await probe(`${lb.url}/fast`)).status, 200);
        times.push(performance.now() - t0);
      }
      await retriesOf(lb);
      const retried = readFileSync(file, 'utf8').trim().split('\n').map(parseAccessLine).filter((e) => e && e.tries.length === 2);
      assert.ok(retried.length >= 1, `a retried request (times ${times.map((t) => t.toFixed(0)).join(', ')} ms)`);
      for (const e of retried) {
        assert.equal(e!.tries[0]!.addr, gone.addr);
        assert.equal(e!.tries[0]!.status, 504);
        const first = e!.tries[0]!.timeS! * 1000;
        assert.ok(first >= 380 && first < 600, `first try ${first} ms, the connect timeout is 400`);
        assert.equal(e!.status, 200);
      }
    } finally {
      gone.proc.signal('SIGCONT');
      await lab.stop(lb);
      await Promise.all(replicas.map((r) => lab.stop(r.proc)));
    }
  });
}
