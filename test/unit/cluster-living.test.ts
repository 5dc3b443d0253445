// Proves that the cluster primary counts a worker as gone at its own 'exit', although node:cluster
// keeps it in cluster.workers until its IPC channel has disconnected too, which may come later.
// Counted as living there, the last worker of a shutdown never let the primary exit on purpose,
// and a port-in-use start ended with 0 instead of 3 (2 runs in 40 here). Played with stand-in
// workers put into cluster.workers: nothing is forked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import cluster, { type Worker } from 'node:cluster';
import { QuotaDelivery } from '../../servers/lib/cluster/quota.ts';
import { Supervisor } from '../../servers/lib/cluster/supervisor.ts';
import { saysWorkerIsGone } from '../../servers/lib/cluster/keeper.ts';

const workers = cluster.workers as Record<string, Worker>;

test('a worker that has exited but not yet disconnected is not living', (t) => {
  t.after(() => {
    delete workers['901'];
    delete workers['902'];
  });
  const sup = new Supervisor({
    port: 0,
    initial: 1,
    budget: 5,
    workerEnv: {},
    autoscaled: false,
    quota: new QuotaDelivery(undefined, 'auto', 1000),
  });
  const standIn = (id: number, dead: boolean) =>
    ({ id, isDead: () => dead, isConnected: () => true, process: { pid: 10_000 + id } }) as unknown as Worker;
  workers['901'] = standIn(901, false);
  workers['902'] = standIn(902, true);
  assert.deepEqual(
    sup.living().map((w) => w.id),
    [901],
  );
});

test('a message to a worker that is gone fails quietly with either code Node gives it; any other error is printed', () => {
  assert.equal(saysWorkerIsGone('ERR_IPC_CHANNEL_CLOSED'), true);
  assert.equal(
    saysWorkerIsGone('EPIPE'),
    true,
    "the worker's end closed first: seen in make test-all's port-in-use test",
  );
  assert.equal(saysWorkerIsGone('EACCES'), false);
  assert.equal(saysWorkerIsGone(undefined), false);
});
