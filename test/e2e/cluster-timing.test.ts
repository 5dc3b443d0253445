// The cluster server's checks that take seconds by design, so they are in the end-to-end tier:
// a worker stuck in about 5 s of scryptSync is replaced at once, not after its work (compared with
// that work, timed); and six rolling restarts under a stream of new connections leave no request
// unanswered. test/integration/cluster-server.test.ts has the cluster server's other checks.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { isEvent } from '../../servers/lib/cluster/messages.ts';
import { Lab } from '../../measure/lib/process/lab.ts';
import { probe } from '../../measure/lib/load/probe.ts';
import { replacedMsg, startCluster as startIn, workerPids } from '../fixtures/cluster.ts';
import { pidAlive } from '../../lib/terminate.ts';
import { pollUntil } from '../../lib/wait.ts';
import { cpuTicks, failOnWarnings } from '../helpers.ts';

failOnWarnings();
const lab = new Lab();
after(() => lab.close());
const startCluster = (args: string[] = []) => startIn(lab, args);

test('a worker stuck in scryptSync is killed at once (SIGKILL), not after its work', async () => {
  // About 5 s of scrypt on the event loop; killing must not wait for it.
  const s = await startCluster(['--workers', '1', '--cost', 'N=2^16,r=8,p=32']);
  const [stuck] = await workerPids(s, 1);
  const cpuBefore = cpuTicks(stuck!);
  const pending = probe(`${s.url}/member/verify-blocking`, { timeoutMs: 60_000 }).then(
    () => 'answered',
    () => 'cut',
  );
  // It is stuck once it has burnt 200 ms of CPU on the request (clock ticks are 10 ms).
  await pollUntil(
    'the worker to be busy in scryptSync',
    () => (cpuTicks(stuck!) - cpuBefore >= 20 ? true : undefined),
    20_000,
  );
  const from = s.messageCount;
  const started = performance.now();
  s.send({ cmd: 'kill-worker', pid: stuck });
  const msg = await s.waitForMessage(replacedMsg(stuck!), 20_000, from);
  const killToReplaced = performance.now() - started;
  assert.equal(await pending, 'cut');
  assert.equal(pidAlive(stuck!), false);
  assert.notEqual(msg.pid, stuck);
  // Compare with the stuck work itself: a fresh worker's blocking check, timed.
  const t0 = performance.now();
  const r = await probe(`${s.url}/member/verify-blocking`, { timeoutMs: 60_000 });
  const workMs = performance.now() - t0;
  assert.equal(r.status, 200);
  assert.ok(
    killToReplaced < workMs / 2,
    `replacement took ${Math.round(killToReplaced)} ms; the stuck work takes ${Math.round(workMs)} ms`,
  );
  await lab.stop(s);
});

test('workers retired under a stream of new connections leave none unanswered (rolling restarts)', async () => {
  // A connection the primary hands over just as a worker closes its server must reach another
  // worker; before the worker waited for its primary (exitAfterPrimary), about one per rolling
  // restart of 2 workers hung here until its client gave up.
  const s = await startIn(lab, ['--workers', '2'], 'managed-cluster');
  let stop = false;
  let ok = 0;
  const failures: string[] = [];
  const client = async () => {
    for (let n = 0; n < 20_000 && !stop; n++) {
      try {
        const r = await probe(`${s.url}/status`, { timeoutMs: 2000 }); // agent false: a new connection each
        if (r.status === 200) ok++;
        else failures.push(`HTTP ${r.status}`);
      } catch (err) {
        failures.push((err as Error).message);
      }
    }
  };
  const clients = Array.from({ length: 8 }, client);
  try {
    for (let i = 0; i < 6; i++) {
      const from = s.messageCount;
      s.send({ cmd: 'rolling-restart' });
      await s.waitForMessage(isEvent('rolling-restart-done'), 30_000, from);
    }
  } finally {
    stop = true;
    await Promise.all(clients);
  }
  assert.ok(ok > 1000, `only ${ok} answers`);
  assert.deepEqual(failures, []);
});
