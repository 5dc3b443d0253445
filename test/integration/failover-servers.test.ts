// Proves failover on real processes: passive health checks rest a failing replica for
// fail_timeout and then probe it once (the kit's balancer and nginx); a lone replica is never taken
// out; GETs are retried after a reset but a POST that reached a replica never is, while a POST
// whose connection was refused is; a replica drains an in-flight request on SIGTERM, its deadline
// cuts a stuck one, --abrupt cuts at once. Sparse traffic over upstream keep-alive waits 12 s by
// design, so it is in the end-to-end tier: test/e2e/keep-alive-idle.test.ts.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { Lab } from '../../measure/lib/process/lab.ts';
import type { ServerProcess } from '../../measure/lib/process/launch.ts';
import { probe } from '../../measure/lib/load/probe.ts';
import { retriesOf, startBalancer, startReplicas, type Replica } from '../../measure/lib/process/topology.ts';
import { pollUntil } from '../../lib/wait.ts';
import { STOP_LINE, stopFields } from '../../servers/lib/serve/drain.ts';
import { failOnWarnings, holdPort, balancersToTest } from '../helpers.ts';
import type { BalancerStats, ReplicaStats } from '../../servers/contracts.ts';

failOnWarnings();
const lab = new Lab();
after(() => lab.close());

const BALANCERS = balancersToTest();

/** A loopback port nothing listens on (taken, then released). */
async function closedPort(): Promise<number> {
  const held = await holdPort();
  await held.release();
  return held.port;
}

/** A fake upstream that reads each request whole, notes it, then resets the connection: no answer. */
async function resetter(): Promise<{
  addr: string;
  seen: { method: string; body: string }[];
  close: () => Promise<void>;
}> {
  const seen: { method: string; body: string }[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      seen.push({ method: req.method!, body });
      res.socket?.resetAndDestroy();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = `127.0.0.1:${(server.address() as import('node:net').AddressInfo).port}`;
  return { addr, seen, close: () => new Promise((r) => server.close(() => r())) };
}

/** Sends one request on a fresh connection; resolves with status and parsed body. */
function send(url: string, method = 'GET', body = ''): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, agent: false, headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => {
        let body: unknown = text; // nginx's own error pages are HTML
        try {
          body = JSON.parse(text);
        } catch {
          /* keep the text */
        }
        resolve({ status: res.statusCode!, body });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A fake "replica" entry pointing at `addr`, for startBalancer's upstream list. */
const fake = (name: string, addr: string) => ({ name, addr }) as Replica;

for (const { kind, skip } of BALANCERS) {
  test(
    `${kind}: after max_fails failures a dead replica is skipped; the retries stop at max_fails`,
    { skip },
    async () => {
      const [live] = await startReplicas(lab, 1);
      const dead = await closedPort();
      const lb = await startBalancer(lab, kind, 'round-robin', [live!, fake('dead', `127.0.0.1:${dead}`)], 0, true, [
        '--max-fails',
        '2',
        '--fail-timeout',
        '5',
      ]);
      for (let i = 0; i < 12; i++)
        assert.equal((await send(`${lb.url}/fast`)).status, 200, `request ${i}: a refused connection is retried`);
      const { total, requests } = await retriesOf(lb);
      // startBalancer's own check request may have met the dead replica first; then 2 in all.
      assert.equal(total, 2, `retried requests: ${JSON.stringify(requests)}`);
      assert.ok(requests.every((r) => r.attempts[0]!.replica === 'dead' && r.attempts[1]!.status === 200));
      await lab.stop(lb);
      await lab.stop(live!.proc);
    },
  );
}

test('builtin: a resting replica is probed once after fail_timeout, and rests again when the probe fails', async () => {
  const [live] = await startReplicas(lab, 1);
  const dead = await closedPort();
  const failTimeoutMs = 1000;
  const lb = await startBalancer(lab, 'builtin', 'round-robin', [live!, fake('dead', `127.0.0.1:${dead}`)], 0, true, [
    '--max-fails',
    '2',
    '--fail-timeout',
    '1',
  ]);
  const stats = async () =>
    (await probe<BalancerStats>(`${lb.url}/__lb/stats`)).body.upstreams.find((u) => u.name === 'dead')!;
  for (let i = 0; i < 4; i++) await send(`${lb.url}/fast`);
  const rested = await stats();
  assert.equal(rested.resting, true);
  assert.equal(rested.failures, 2);
  const since = performance.now();
  await pollUntil(
    'the dead replica to come out of its rest',
    async () => ((await stats()).resting ? undefined : true),
    5 * failTimeoutMs,
    20,
  );
  const restMs = performance.now() - since;
  assert.ok(
    restMs > 0.5 * failTimeoutMs && restMs < 2.5 * failTimeoutMs,
    `rested ${Math.round(restMs)} ms for a fail_timeout of ${failTimeoutMs} ms`,
  );
  for (let i = 0; i < 6; i++) assert.equal((await send(`${lb.url}/fast`)).status, 200);
  const after = await stats();
  assert.equal(after.failures, 3, 'exactly one probe went to it');
  assert.equal(after.resting, true);
  await lab.stop(lb);
  await lab.stop(live!.proc);
});

test('builtin: a lone replica is never taken out, however often it fails', async () => {
  const dead = await closedPort();
  const lb = await lab.start({
    server: 'balancer',
    args: ['--upstream', `only=127.0.0.1:${dead}`, '--port', '0', '--max-fails', '1'],
  });
  for (let i = 0; i < 5; i++) assert.equal((await send(`${lb.url}/fast`)).status, 502);
  const only = (await probe<BalancerStats>(`${lb.url}/__lb/stats`)).body.upstreams[0]!;
  assert.equal(only.failures, 5, 'every request was tried on it');
  assert.equal(only.resting, false);
  await lab.stop(lb);
});

for (const { kind, skip } of BALANCERS) {
  test(
    `${kind}: a GET cut by a reset is retried; a POST that reached a replica is never sent again`,
    { skip },
    async () => {
      const reset = await resetter();
      const replicas = await startReplicas(lab, 1);
      const replica = replicas[0];
      try {
        const lb = await startBalancer(lab, kind, 'round-robin', [replica!, fake('reset', reset.addr)], 0, true, [
          '--max-fails',
          '0',
        ]);
        for (let i = 0; i < 6; i++) assert.equal((await send(`${lb.url}/fast`)).status, 200, 'GETs are retried');
        const gets = reset.seen.filter((s) => s.method === 'GET').length;
        assert.ok(gets >= 2, `the resetter saw ${gets} GETs`);
        const statuses: number[] = [];
        for (let i = 0; i < 10; i++)
          statuses.push((await send(`${lb.url}/users`, 'POST', JSON.stringify({ name: `post-${kind}-${i}` }))).status);
        const posts = reset.seen.filter((s) => s.method === 'POST');
        const created = statuses.filter((s) => s === 201).length;
        const failed = statuses.filter((s) => s === 502).length;
        assert.equal(created + failed, 10, `statuses ${statuses}`);
        assert.ok(failed >= 2, `some POSTs met the resetter: ${statuses}`);
        assert.equal(posts.length, failed, 'each POST the resetter swallowed became a 502, not a retry');
        const db = new Database(replicas.dbFile!, { readonly: true });
        const stored = (
          db.prepare('SELECT name FROM users WHERE name LIKE ?').all(`post-${kind}-%`) as { name: string }[]
        ).map((u) => u.name);
        db.close();
        assert.equal(stored.length, created, 'the replica stored exactly the POSTs that answered 201');
        assert.equal(new Set(stored).size, stored.length, 'no name stored twice');
        for (const p of posts)
          assert.ok(
            !stored.includes(JSON.parse(p.body).name),
            'a POST the resetter swallowed was not stored elsewhere',
          );
        const { requests } = await retriesOf(lb);
        assert.ok(
          requests.every((r) => r.method !== 'POST'),
          'no POST was retried',
        );
        await lab.stop(lb);
      } finally {
        await reset.close();
        await lab.stop(replica!.proc);
      }
    },
  );

  test(`${kind}: a POST whose connection was refused is sent to another replica`, { skip }, async () => {
    const [replica] = await startReplicas(lab, 1);
    const dead = await closedPort();
    const lb = await startBalancer(lab, kind, 'round-robin', [replica!, fake('dead', `127.0.0.1:${dead}`)], 0, true, [
      '--max-fails',
      '0',
    ]);
    for (let i = 0; i < 6; i++)
      assert.equal(
        (await send(`${lb.url}/users`, 'POST', JSON.stringify({ name: `refused-${kind}-${i}` }))).status,
        201,
      );
    const { requests } = await retriesOf(lb);
    const posts = requests.filter((r) => r.method === 'POST');
    assert.ok(posts.length >= 2, `POSTs retried after a refused connection: ${posts.length}`);
    assert.ok(posts.every((r) => r.attempts[0]!.replica === 'dead' && r.attempts.at(-1)!.status === 201));
    await lab.stop(lb);
    await lab.stop(replica!.proc);
  });
}

/** The replica's stop lines so far, parsed. */
function stopLines(proc: ServerProcess): { kind: string; n: Record<string, number> }[] {
  return proc.lines
    .map((l) => STOP_LINE.exec(l))
    .filter((m) => m !== null)
    .map((m) => ({ kind: m[1]!, n: stopFields(m[2]!) }));
}

/** Starts a slow request on `replica` and resolves once the replica has it (its own count). */
async function slowInFlight(
  replica: Replica,
  ms: number,
): Promise<{ pending: Promise<{ status: number; body: unknown }> }> {
  const pending = send(`${replica.url}/slow-async?ms=${ms}`);
  pending.catch(() => undefined); // judged by the caller
  await pollUntil(
    'the slow request to reach the replica',
    async () =>
      (await probe<ReplicaStats>(`${replica.url}/__replica/stats`)).body.served['/slow-async'] === 1 ? true : undefined,
    5000,
    10,
  );
  return { pending };
}

test('SIGTERM: the replica refuses new connections, finishes the request in flight, then exits', async () => {
  const [replica] = await startReplicas(lab, 1);
  const { pending } = await slowInFlight(replica!, 800);
  const stoppedAt = performance.now();
  replica!.proc.signal('SIGTERM');
  await replica!.proc.waitForLine(/^stop: graceful/, 5000);
  // Refused once the listening socket is closed; reset if the connect raced the close (the kernel
  // had queued it, then dropped the queue). Either way no new request is served.
  await assert.rejects(probe(`${replica!.url}/fast`), /ECONNREFUSED|ECONNRESET/, 'no new connections while draining');
  const answer = await pending;
  assert.equal(answer.status, 200, 'the in-flight request finished');
  await replica!.proc.closed;
  const lines = stopLines(replica!.proc);
  assert.equal(lines[0]!.n['in-flight'], 1);
  assert.equal(lines[1]!.kind, 'drained');
  assert.equal(lines[1]!.n.cut, 0);
  assert.ok(performance.now() - stoppedAt < 5000, 'it exited well before the deadline');
});

test('SIGTERM with a stuck request: the drain deadline closes it and the replica exits', async () => {
  const deadlineMs = 300;
  const [replica] = await startReplicas(lab, 1, ['--drain-deadline', String(deadlineMs)]);
  const { pending } = await slowInFlight(replica!, 8000);
  const stoppedAt = performance.now();
  replica!.proc.signal('SIGTERM');
  await assert.rejects(pending, /socket hang up|ECONNRESET/);
  await replica!.proc.closed;
  const took = performance.now() - stoppedAt;
  assert.ok(
    took >= 0.8 * deadlineMs && took < 10 * deadlineMs,
    `exited ${Math.round(took)} ms after SIGTERM, deadline ${deadlineMs} ms`,
  );
  assert.equal(stopLines(replica!.proc).at(-1)!.n.cut, 1);
});

test('--abrupt: SIGTERM cuts the request in flight at once', async () => {
  const [replica] = await startReplicas(lab, 1, ['--abrupt']);
  const { pending } = await slowInFlight(replica!, 8000);
  const stoppedAt = performance.now();
  replica!.proc.signal('SIGTERM');
  await assert.rejects(pending, /socket hang up|ECONNRESET/);
  await replica!.proc.closed;
  assert.ok(performance.now() - stoppedAt < 2000, 'no drain');
  const [line] = stopLines(replica!.proc);
  assert.equal(line!.kind, 'abrupt');
  assert.equal(line!.n.cut, 1);
});
