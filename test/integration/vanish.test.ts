// Proves the vanished-address fault on real processes: after SIGUSR2 a replica's port takes no
// connection (a connect attempt gets no answer, not a refusal) until SIGCONT, after which it
// answers again; a vanished replica (stopped by itself) is still ended by the lab's stop. How the
// balancers time out on it is timed in test/e2e/vanish-timeouts.test.ts.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { Lab } from '../../measure/lib/process/lab.ts';
import { probe } from '../../measure/lib/load/probe.ts';
import { startReplicas } from '../../measure/lib/process/topology.ts';
import { assertAllGone, failOnWarnings } from '../helpers.ts';
import { vanish } from '../fixtures/vanish.ts';

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

test(
  "SIGUSR2: the replica's port answers no connection attempt until SIGCONT, then it serves again",
  { timeout: 20_000 },
  async () => {
    const [r] = await startReplicas(lab, 1, ['--backlog', '1']);
    const port = r!.proc.port;
    assert.equal(await attempt(port, 500), 'connected');
    await vanish(r!);
    assert.equal(await attempt(port, 700), 'no-answer');
    assert.equal(await attempt(port, 700), 'no-answer');
    r!.proc.signal('SIGCONT');
    assert.equal((await probe(`${r!.url}/fast`)).status, 200);
    await lab.stop(r!.proc);
  },
);

test(
  'a vanished replica is ended like any other: the lab thaws it, stops it, and it is gone',
  { timeout: 20_000 },
  async () => {
    const [r] = await startReplicas(lab, 1, ['--backlog', '1']);
    await vanish(r!);
    await lab.stop(r!.proc);
    await assertAllGone([r!.proc.pid]);
  },
);
