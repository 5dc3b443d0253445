// Proves the cluster server on real processes: connections spread round robin, per-worker
// counters, one replacement per killed worker, no fork loop for a worker that crashes at start-up,
// and no worker left alive after the primary is stopped or SIGKILLed. The checks that take seconds
// by design (a worker stuck in scryptSync, rolling restarts under load) are in
// test/e2e/cluster-timing.test.ts.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { Lab } from '../../measure/lib/process/lab.ts';
import { probe } from '../../measure/lib/load/probe.ts';
import { replacedMsg, startCluster as startIn, workerPids } from '../fixtures/cluster.ts';
import { pidAlive } from '../../lib/terminate.ts';
import { assertAllGone, childrenOf, failOnWarnings, holdPort, runScript } from '../helpers.ts';
import type { ErrorBody, WorkerStatus } from '../../servers/contracts.ts';

failOnWarnings();
const lab = new Lab();
after(() => lab.close());
const startCluster = (args: string[] = []) => startIn(lab, args);

test('with --port 0, a replacement for the only worker listens on the same port', async () => {
  const s = await startCluster(['--workers', '1']);
  const [only] = await workerPids(s, 1);
  const from = s.messageCount;
  s.send({ cmd: 'kill-worker', pid: only });
  await s.waitForMessage(replacedMsg(only!), 20_000, from);
  assert.equal((await probe(`${s.url}/status`)).status, 200);
  await lab.stop(s);
});

test('ready only when every worker listens; fresh connections spread 4/4/4; counters are per worker', async () => {
  const s = await startCluster(['--workers', '3']);
  const counts = new Map<number, number>();
  for (let i = 0; i < 12; i++) {
    const r = await probe<WorkerStatus>(`${s.url}/loan`, { method: 'POST' });
    assert.equal(r.status, 200);
    counts.set(r.body.pid, r.body.loanCounter);
  }
  assert.deepEqual([...counts.values()], [4, 4, 4]);
  const status = await probe<WorkerStatus>(`${s.url}/status`);
  assert.equal(status.body.loanCounter, 4, '/status does not increment');
  const wrong = await probe<ErrorBody & { pid: number }>(`${s.url}/loan`);
  assert.equal(wrong.status, 405);
  assert.equal(typeof wrong.body.pid, 'number');
  const missing = await probe<ErrorBody & { pid: number }>(`${s.url}/nope?junk=%%`);
  assert.equal(missing.status, 404);
  assert.equal(typeof missing.body.pid, 'number');
  await lab.stop(s);
});

test("round robin even where the platform's default is SCHED_NONE (native Windows; played by NODE_CLUSTER_SCHED_POLICY=none)", async () => {
  const s = await lab.start({
    server: 'cluster',
    args: ['--port', '0', '--workers', '3'],
    ipc: true,
    env: { NODE_CLUSTER_SCHED_POLICY: 'none' },
  });
  const counts = new Map<number, number>();
  for (let i = 0; i < 12; i++) {
    const r = await probe<WorkerStatus>(`${s.url}/loan`, { method: 'POST' });
    counts.set(r.body.pid, r.body.loanCounter);
  }
  assert.deepEqual([...counts.values()], [4, 4, 4]);
  await lab.stop(s);
});

test('a worker killed over IPC is replaced once, by a new pid; SIGUSR2 kills one too', async () => {
  const s = await startCluster(['--workers', '2']);
  const [victim] = await workerPids(s, 2);
  const from = s.messageCount;
  s.send({ cmd: 'kill-worker', pid: victim });
  const msg = await s.waitForMessage(replacedMsg(victim!), 20_000, from);
  assert.notEqual(msg.pid, victim);
  assert.equal(pidAlive(victim!), false);
  assert.equal(s.lines.filter((l) => l.includes(`worker ${victim} killed by SIGKILL`)).length, 1);

  const mark = s.lines.length;
  s.child.kill('SIGUSR2');
  const m = await s.waitForLine(/^worker (\d+) listening, replacing (\d+)$/, 20_000, mark);
  assert.notEqual(m[1], m[2]);
  assert.equal((await workerPids(s, 2)).length, 2);
  assert.equal(s.lines.filter((l) => /starting a replacement/.test(l)).length, 2, 'one replacement per death');
  await lab.stop(s);
});

test('workers that crash at start-up do not fork-loop: the primary gives up within its budget', async () => {
  const r = await runScript('servers/cluster.ts', [
    '--port',
    '0',
    '--workers',
    '2',
    '--restart-budget',
    '3',
    '--crash-at-start',
  ]);
  assert.equal(r.code, 3);
  assert.match(r.stderr, /error KIT_ERR_RESTART_BUDGET: 4 worker deaths/);
  assert.doesNotMatch(r.stdout, /^ready: /m);
  const replacements = r.stdout.split('\n').filter((l) => /starting a replacement in \d+ ms/.test(l));
  assert.equal(replacements.length, 3, r.stdout);
  // The backoff grows: 100, 200, 400 ms.
  assert.deepEqual(
    replacements.map((l) => Number(/in (\d+) ms/.exec(l)![1])),
    [100, 200, 400],
  );
});

test('SIGKILL of the primary leaves no worker alive', async () => {
  const s = await startCluster(['--workers', '3']);
  const workers = await workerPids(s, 3);
  const children = childrenOf(s.pid);
  for (const w of workers) assert.ok(children.includes(w));
  s.child.kill('SIGKILL');
  await s.exited;
  await assertAllGone(children, 10_000);
});

test('SIGTERM to the primary stops every worker and exits 0', async () => {
  const s = await startCluster(['--workers', '2']);
  const children = childrenOf(s.pid);
  s.child.kill('SIGTERM');
  const exit = await s.exited;
  assert.equal(exit.code, 0);
  await assertAllGone(children, 10_000);
});

test('port in use: one line, exit 3, nothing left running', async () => {
  const held = await holdPort();
  try {
    const r = await runScript('servers/cluster.ts', ['--port', String(held.port), '--workers', '3']);
    assert.equal(r.code, 3, `exit ${r.code}; stderr: ${r.stderr}; stdout: ${r.stdout.slice(-2000)}`);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, new RegExp(`^error KIT_ERR_PORT_IN_USE: port ${held.port} `));
  } finally {
    await held.release();
  }
});

// The likely cause of a rare exit 1 in the port-in-use test: node:cluster answers a worker's listen
// request after the primary's shutdown has killed that worker, and the failed send crashed it.
test('a message to a worker that has just died does not crash the primary', async () => {
  const r = await runScript('test/fixtures/send-to-dead-worker.ts', [], {}, 20_000);
  assert.equal(r.code, 0, `exit ${r.code}; stderr: ${r.stderr}`);
  assert.match(r.stdout, /primary still running/);
});

test('bad flags are usage errors (exit 2)', async () => {
  // Usage errors start nothing, so the scripts are started side by side.
  const cases = [['--workers', '0'], ['--workers', 'many'], ['--cost', 'N=7'], ['--oops']];
  const runs = await Promise.all(cases.map((args) => runScript('servers/cluster.ts', args)));
  for (const [i, args] of cases.entries()) {
    const r = runs[i]!;
    assert.equal(r.code, 2, args.join(' '));
    assert.match(r.stderr, /^error KIT_ERR_(USAGE|BAD_COST): /);
  }
});
