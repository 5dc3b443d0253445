// Proves the loan service on a real process and port: every route, password checks that compare
// keys with the members' stored ones (lesson 3's exercise depends on it), JSON errors for bad input
// (and that it keeps serving after them), the one-line errors for a taken port and a bad cost,
// and that it stops on SIGTERM and when its launcher goes away.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { Lab } from '../../measure/lib/process/lab.ts';
import type { ServerProcess } from '../../measure/lib/process/launch.ts';
import { probe } from '../../measure/lib/load/probe.ts';
import { failOnWarnings, holdPort, runScript } from '../helpers.ts';
import type { Book, ErrorBody, LoanServiceStats, VerifyAnswer } from '../../servers/contracts.ts';

failOnWarnings();
const SMALL = 'N=2^10,r=8,p=1';
const lab = new Lab();
let server: ServerProcess;

before(async () => {
  server = await lab.start({
    server: 'loan',
    args: ['--port', '0', '--cost', SMALL],
    env: { UV_THREADPOOL_SIZE: '6' },
  });
});
after(() => lab.close());

test('prints one ready line with its port and pid', () => {
  assert.ok(server.port > 0);
  assert.equal(server.lines.filter((l) => l.startsWith('ready: ')).length, 1);
  assert.match(
    server.lines[0]!,
    new RegExp(`^ready: loan-service listening on http://127\\.0\\.0\\.1:${server.port} pid=${server.pid}$`),
  );
});

test('GET /books answers one catalog entry', async () => {
  const r = await probe<Book>(`${server.url}/books`);
  assert.equal(r.status, 200);
  assert.equal(typeof r.body.title, 'string');
});

test('the three password checks answer, each where it says it ran', async () => {
  const blocking = await probe<VerifyAnswer>(`${server.url}/member/verify-blocking`);
  const pooled = await probe<VerifyAnswer>(`${server.url}/member/verify-pooled`);
  const light = await probe<VerifyAnswer>(`${server.url}/member/verify-light`);
  assert.deepEqual([blocking.status, pooled.status, light.status], [200, 200, 200]);
  assert.equal(blocking.body.hashedOn, 'event-loop');
  assert.equal(pooled.body.hashedOn, 'thread-pool');
  assert.equal(light.body.hashedOn, 'thread-pool');
});

test("a check compares the key with the member's stored one: right is 200, wrong 401, no such member 404", async () => {
  const ok = await probe<VerifyAnswer>(`${server.url}/member/verify-blocking?member=dee`);
  assert.deepEqual([ok.status, ok.body.member, ok.body.verified], [200, 'dee', true]);
  const wrong = await probe<VerifyAnswer>(`${server.url}/member/verify-pooled?member=eli&password=p%C3%A4sswort`);
  assert.deepEqual([wrong.status, wrong.body.verified], [401, false]);
  const nobody = await probe<ErrorBody>(`${server.url}/member/verify-pooled?member=zed`);
  assert.equal(nobody.status, 404);
  assert.match(nobody.body.error, /^member: no member 'zed'; the members are ann, cam, fay, dee, eli$/);
});

test("at the lesson's own heavy cost ann's shipped key is hers: her password verifies, another is refused", async () => {
  const heavy = await lab.start({ server: 'loan', args: ['--port', '0'] });
  const [right, other] = await Promise.all([
    probe<VerifyAnswer>(`${heavy.url}/member/verify-pooled`),
    probe<VerifyAnswer>(`${heavy.url}/member/verify-pooled?password=Tr0ub4dor%263`),
  ]);
  await lab.stop(heavy);
  assert.deepEqual([right.status, other.status], [200, 401]);
});

test('GET /stats reports delay in ms, utilization, the pool size from the environment', async () => {
  const reset = await probe(`${server.url}/stats/reset`, { method: 'POST' });
  assert.equal(reset.status, 200);
  const r = await probe<LoanServiceStats>(`${server.url}/stats`);
  assert.equal(r.status, 200);
  assert.equal(r.body.threadPoolSize, 6);
  assert.equal(r.body.pooledInFlight, 0);
  assert.equal(r.body.heavyCost, SMALL);
  assert.equal(typeof r.body.eventLoopDelay.maxMs, 'number');
  assert.equal(typeof r.body.eventLoopDelay.p99Ms, 'number');
  assert.ok(r.body.eventLoopUtilization >= 0 && r.body.eventLoopUtilization <= 1);
});

test('unknown path → 404 JSON, wrong method → 405 JSON with Allow', async () => {
  const missing = await probe<ErrorBody>(`${server.url}/nope`);
  assert.equal(missing.status, 404);
  assert.equal(missing.body.error, 'not found');
  const wrong = await probe<ErrorBody>(`${server.url}/books`, { method: 'DELETE' });
  assert.equal(wrong.status, 405);
  assert.equal(wrong.body.allow, 'GET');
  assert.equal((await probe(`${server.url}/stats/reset`)).status, 405);
});

test('query junk is ignored', async () => {
  for (const q of ['?x=%zz', '?&&&==;;', `?${'a'.repeat(4000)}=1`, '?cost=N=2^30', '?__proto__=1']) {
    const r = await probe(`${server.url}/books${q}`);
    assert.equal(r.status, 200, q);
  }
});

test('a malformed request gets a 400 and the server keeps serving', async () => {
  const reply = await new Promise<string>((resolve, reject) => {
    const sock = net.connect(server.port, '127.0.0.1', () => sock.end('GARBAGE / HTTP/9.9\r\n\r\n'));
    let data = '';
    sock.on('data', (d) => (data += d));
    sock.on('end', () => resolve(data));
    sock.on('error', reject);
  });
  assert.match(reply, /^HTTP\/1\.1 400/);
  assert.equal((await probe(`${server.url}/books`)).status, 200);
});

test('port in use: exit code 3 and one line naming the port and what to do', async () => {
  const held = await holdPort();
  try {
    const r = await runScript('servers/loan.ts', ['--port', String(held.port)]);
    assert.equal(r.code, 3);
    const lines = r.stderr.trim().split('\n');
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0]!, new RegExp(`^error KIT_ERR_PORT_IN_USE: port ${held.port} .*--port 0`));
    assert.equal(r.stdout, '');
  } finally {
    await held.release();
  }
});

test("the harness passes a server's coded start-up error on as it is", async () => {
  const held = await holdPort();
  try {
    await assert.rejects(lab.start({ server: 'loan', args: ['--port', String(held.port)] }), (e: any) => {
      assert.equal(e.code, 'KIT_ERR_PORT_IN_USE');
      assert.match(
        e.message,
        new RegExp(`^loan could not start: port ${held.port} on 127\\.0\\.0\\.1 is already in use`),
      );
      return true;
    });
  } finally {
    await held.release();
  }
});

test('a bad cost, flag or port is a one-line start-up error with exit code 2', async () => {
  const cases = [
    [['--cost', 'N=3'], 'KIT_ERR_BAD_COST'],
    [['--port', 'abc'], 'KIT_ERR_USAGE'],
    [['--port', '70000'], 'KIT_ERR_USAGE'],
    [['--nope'], 'KIT_ERR_USAGE'],
  ] as const;
  // Usage errors start nothing, so the scripts are started side by side.
  const runs = await Promise.all(cases.map(([args]) => runScript('servers/loan.ts', [...args])));
  for (const [i, [args, code]] of cases.entries()) {
    const r = runs[i]!;
    assert.equal(r.code, 2, args.join(' '));
    assert.equal(r.stderr.trim().split('\n').length, 1);
    assert.match(r.stderr, new RegExp(`^error ${code}: `));
  }
  const env = await runScript('servers/loan.ts', ['--port', '0'], { LAB_SCRYPT_COST: 'N=2^40' });
  assert.equal(env.code, 2);
  assert.match(env.stderr, /KIT_ERR_BAD_COST/);
});

test('--help exits 0 and names every route-shaping flag', async () => {
  const r = await runScript('servers/loan.ts', ['--help']);
  assert.equal(r.code, 0);
  assert.match(r.stdout, /--port <n>/);
  assert.match(r.stdout, /--cost/);
  assert.match(r.stdout, /UV_THREADPOOL_SIZE/);
});

test('SIGTERM stops it at once when idle', async () => {
  const s = await lab.start({ server: 'loan', args: ['--port', '0'] });
  s.child.kill('SIGTERM');
  const exit = await s.exited;
  assert.equal(exit.code, 0);
});

test('it exits by itself when its launcher is gone (stdin lifeline closes)', async () => {
  const s = await lab.start({ server: 'loan', args: ['--port', '0'] });
  s.child.stdin!.end();
  const exit = await s.exited;
  assert.equal(exit.code, 0);
});
