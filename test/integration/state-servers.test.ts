// Proves lesson 7's routes and policies on real processes: login sets a session the replica finds
// again, a wrong password or a missing, tampered or expired session is a 401 (never a crash), the
// loan limit answers 429 past the limit, bad state flags are usage errors, an unreachable Redis is a
// start-up error; the sticky policies (ip-hash, sticky-cookie) in the kit's balancer and in
// nginx's generated config (checked with `nginx -t` where nginx is installed); pickByKey moves only
// the keys of a replica that is down.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Lab } from '../../measure/lib/process/lab.ts';
import { probe } from '../../measure/lib/load/probe.ts';
import { startBalancer, type Replica } from '../../measure/lib/process/topology.ts';
import {
  acceptsErrorLogSwitch,
  findNginx,
  nginxVersion,
  renderNginxConfig,
} from '../../servers/lib/balancer/nginx-config.ts';
import { hashKey, ipHashKey, pickByKey } from '../../core/policies.ts';
import { createToken } from '../../servers/lib/state/session-token.ts';
import { FAILOVER_DEFAULTS } from '../../servers/lib/balancer/upstreams.ts';
import { failOnWarnings, skipUnless, holdPort, ROOT, runScript } from '../helpers.ts';
import type { ErrorBody, LoanCount, MemberAnswer } from '../../servers/contracts.ts';

failOnWarnings();
const lab = new Lab();
after(() => lab.close());

const redisSkip = skipUnless('redis-server');
const nginxSkip = skipUnless('nginx');

const cookieOf = (headers: Record<string, unknown>, name: string): string | undefined => {
  const all = headers['set-cookie'] as string[] | undefined;
  const hit = all?.map((c) => c.split(';')[0]!).find((c) => c.startsWith(`${name}=`));
  return hit?.slice(name.length + 1);
};

test('login, /me and the session cookie; wrong passwords and unknown sessions are 401', async () => {
  const replica = await lab.start({ server: 'replica', args: ['--name', 'app1', '--port', '0'] });
  const bad = await probe(`${replica.url}/login`, { method: 'POST', json: { member: 'ann', password: 'wrong' } });
  assert.equal(bad.status, 401);
  assert.equal(
    (await probe(`${replica.url}/login`, { method: 'POST', json: { member: 'a b', password: 'x' } })).status,
    400,
  );
  assert.equal((await probe(`${replica.url}/login`, { method: 'POST', json: 'nonsense' })).status, 400);
  const good = await probe(`${replica.url}/login`, { method: 'POST', json: { member: 'ann', password: 'pw-ann' } });
  assert.equal(good.status, 200);
  const sid = cookieOf(good.headers, 'session')!;
  assert.ok(sid, 'a session cookie');
  assert.match(String(good.headers['set-cookie']), /HttpOnly/);
  const me = await probe<MemberAnswer>(`${replica.url}/me`, { headers: { cookie: `session=${sid}` } });
  assert.equal(me.status, 200);
  assert.equal(me.body.member, 'ann');
  for (const cookie of ['', 'session=', 'session=nope', `session=${sid}x`, 'other=1', 'session']) {
    assert.equal((await probe(`${replica.url}/me`, { headers: cookie ? { cookie } : {} })).status, 401, cookie);
  }
  assert.equal((await probe(`${replica.url}/fast`)).status, 200, 'still serving');
  await lab.stop(replica);
});

test('--sessions token: a token from another replica works; tampered, expired or foreign tokens are 401', async () => {
  const secret = 'test-secret';
  const [a, b] = await Promise.all(
    ['app1', 'app2'].map((name) =>
      lab.start({
        server: 'replica',
        args: ['--name', name, '--port', '0', '--sessions', 'token', '--session-secret', secret],
      }),
    ),
  );
  const login = await probe(`${a!.url}/login`, { method: 'POST', json: { member: 'bob', password: 'pw-bob' } });
  const token = cookieOf(login.headers, 'session')!;
  assert.equal(
    (await probe<MemberAnswer>(`${b!.url}/me`, { headers: { cookie: `session=${token}` } })).body.member,
    'bob',
    'any replica with the secret accepts it',
  );
  const [payload, sig] = token.split('.');
  // Tampered: the signature's first character changed (a fixed 'x' was no change for 1 token in 64).
  const forged = Buffer.from(JSON.stringify({ m: 'admin', exp: Date.now() + 60_000 })).toString('base64url');
  for (const t of [
    `${forged}.${sig}`,
    `${payload}.${sig![0] === 'x' ? 'y' : 'x'}${sig!.slice(1)}`,
    createToken('bob', -1, secret),
    createToken('bob', 60_000, 'other-secret'),
    'a.b.c',
    '%%%',
  ]) {
    const r = await probe(`${b!.url}/me`, { headers: { cookie: `session=${t}` } });
    assert.equal(r.status, 401, t);
  }
  assert.equal((await probe(`${b!.url}/fast`)).status, 200, 'still serving');
  await Promise.all([lab.stop(a!), lab.stop(b!)]);
});

test('the loan limit: 200 up to the limit, then 429 with retry-after; loans without a member are not limited', async () => {
  const replica = await lab.start({
    server: 'replica',
    args: ['--name', 'app1', '--port', '0', '--loan-limit', '3', '--loan-window', '60000'],
  });
  const statuses = [];
  for (let i = 0; i < 5; i++)
    statuses.push((await probe(`${replica.url}/loan`, { method: 'POST', json: { member: 'cy' } })).status);
  assert.deepEqual(statuses, [200, 200, 200, 429, 429]);
  const refused = await probe(`${replica.url}/loan`, { method: 'POST', json: { member: 'cy' } });
  assert.equal(refused.headers['retry-after'], '60');
  assert.equal(
    (await probe(`${replica.url}/loan`, { method: 'POST', json: { member: 'dee' } })).status,
    200,
    'a limit per member',
  );
  for (let i = 0; i < 5; i++) assert.equal((await probe(`${replica.url}/loan`, { method: 'POST' })).status, 200);
  assert.equal((await probe<LoanCount>(`${replica.url}/loans`)).body.loans, 9);
  await lab.stop(replica);
});

test('bad state flags are usage errors (exit 2); an unreachable Redis is a one-line start-up error', async () => {
  // Usage errors start nothing, so the scripts are started side by side.
  const cases = [
    ['--state', 'mongo'],
    ['--state', 'sqlite'],
    ['--state', 'redis'],
    ['--state', 'redis', '--redis-url', 'http://127.0.0.1:6379'],
    ['--sessions', 'token'],
    ['--sessions', 'jwt'],
    ['--loan-limit', '0'],
  ];
  const runs = await Promise.all(cases.map((args) => runScript('servers/replica.ts', ['--port', '0', ...args])));
  for (const [i, args] of cases.entries()) {
    const r = runs[i]!;
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, /^error KIT_ERR_USAGE: /, args.join(' '));
  }
  const closed = await holdPort();
  await closed.release();
  const r = await runScript('servers/replica.ts', [
    '--port',
    '0',
    '--state',
    'redis',
    '--redis-url',
    `redis://127.0.0.1:${closed.port}`,
  ]);
  assert.equal(r.code, 3);
  assert.match(r.stderr, /^error KIT_ERR_STORE: cannot reach Redis at redis:\/\/127\.0\.0\.1:\d+/m);
  const noDir = await runScript('servers/replica.ts', [
    '--port',
    '0',
    '--state',
    'sqlite',
    '--state-file',
    '/nonexistent-dir/state.db',
  ]);
  assert.equal(noDir.code, 3);
  assert.match(noDir.stderr, /^error KIT_ERR_STORE: cannot open the SQLite file \/nonexistent-dir\/state\.db/m);
});

test(
  'a state store that stops answering is a 503 naming it, and the replica keeps serving',
  { skip: redisSkip },
  async () => {
    const redis = await lab.start({ server: 'redis', args: ['--port', '0'] });
    const replica = await lab.start({
      server: 'replica',
      args: ['--name', 'app1', '--port', '0', '--state', 'redis', '--redis-url', `redis://127.0.0.1:${redis.port}`],
    });
    assert.equal((await probe(`${replica.url}/loan`, { method: 'POST' })).status, 200);
    await lab.stop(redis);
    const r = await probe<ErrorBody>(`${replica.url}/loans`);
    assert.equal(r.status, 503);
    assert.match(r.body.error, /state store \(redis at redis:\/\/127\.0\.0\.1:\d+\) is not answering/);
    assert.equal((await probe(`${replica.url}/fast`)).status, 200);
    await lab.stop(replica);
  },
);

test("pickByKey: a key keeps its replica while it is up; only a down replica's keys move", () => {
  const up = (n: number) => Array.from({ length: n }, () => ({ inFlight: 0, available: true }));
  const keys = Array.from({ length: 300 }, (_, i) => `member${i}`);
  const before = keys.map((k) => pickByKey(up(3), k)!);
  assert.deepEqual(new Set(before), new Set([0, 1, 2]), 'keys spread over all replicas');
  const oneDown = up(3);
  oneDown[1]!.available = false;
  const afterDown = keys.map((k) => pickByKey(oneDown, k)!);
  keys.forEach((_, i) => {
    if (before[i] !== 1) assert.equal(afterDown[i], before[i], 'a live replica keeps its keys');
    else assert.notEqual(afterDown[i], 1);
  });
  assert.equal(
    pickByKey(
      up(3).map((r) => ({ ...r, available: false })),
      'x',
    ),
    undefined,
  );
  assert.equal(hashKey('abc'), hashKey('abc'));
  assert.equal(
    ipHashKey('127.0.0.1'),
    ipHashKey('127.0.0.99'),
    'ip_hash uses three octets: all loopback clients are one key',
  );
  assert.equal(ipHashKey('::ffff:10.1.2.3'), '10.1.2');
  assert.equal(ipHashKey('::1'), '::1');
});

test("the kit's balancer: ip-hash sends every loopback client to one replica; sticky-cookie follows its cookie, and moves when that replica dies", async () => {
  const replicas: Replica[] = await Promise.all(
    ['app1', 'app2', 'app3'].map(async (name) => {
      const proc = await lab.start({ server: 'replica', args: ['--name', name, '--port', '0'] });
      return { name, proc, url: proc.url, addr: `127.0.0.1:${proc.port}` };
    }),
  );
  const ipHash = await startBalancer(lab, 'builtin', 'ip-hash', replicas);
  const who = new Set<string>();
  for (let i = 0; i < 9; i++) who.add(String((await probe(`${ipHash.url}/whoami`)).headers['x-replica']));
  assert.equal(who.size, 1, `one replica for everyone: ${[...who]}`);
  await lab.stop(ipHash);

  const sticky = await startBalancer(lab, 'builtin', 'sticky-cookie', replicas);
  const first = await probe(`${sticky.url}/whoami`);
  const lb = cookieOf(first.headers, 'lb')!;
  assert.equal(lb, first.headers['x-replica'], 'the cookie names the replica that answered');
  for (let i = 0; i < 5; i++) {
    const r = await probe(`${sticky.url}/whoami`, { headers: { cookie: `lb=${lb}` } });
    assert.equal(r.headers['x-replica'], lb, 'followed');
    assert.equal(cookieOf(r.headers, 'lb'), undefined, 'no new cookie while it holds');
  }
  const target = replicas.find((r) => r.name === lb)!;
  target.proc.signal('SIGKILL');
  await target.proc.exited;
  const moved = await probe(`${sticky.url}/whoami`, { headers: { cookie: `lb=${lb}` } });
  assert.equal(moved.status, 200);
  assert.notEqual(moved.headers['x-replica'], lb);
  assert.equal(cookieOf(moved.headers, 'lb'), moved.headers['x-replica'], 'a new cookie for the new replica');
  await lab.stop(sticky);
  await Promise.all(replicas.map((r) => lab.stop(r.proc)));
});

test(
  'nginx config for ip-hash and sticky-cookie: the right directives, and `nginx -t` accepts them',
  { skip: nginxSkip },
  () => {
    const template = readFileSync(path.join(ROOT, 'servers', 'nginx', 'nginx.conf.template'), 'utf8');
    const upstreams = [
      { name: 'app1', addr: '127.0.0.1:4001' },
      { name: 'app2', addr: '127.0.0.1:4002' },
    ];
    const dir = lab.tempDir('nginx-t');
    for (const sub of ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'])
      mkdirSync(path.join(dir, 'tmp', sub), { recursive: true });
    for (const policy of ['ip-hash', 'sticky-cookie'] as const) {
      const text = renderNginxConfig(template, {
        prefix: dir,
        port: 4000,
        policy,
        upstreams,
        keepAlive: true,
        token: 't',
        failover: FAILOVER_DEFAULTS,
      });
      if (policy === 'ip-hash') assert.match(text, /upstream replicas \{[^}]*ip_hash;/);
      else {
        assert.match(
          text,
          /map \$cookie_lb \$nsl_sticky \{\s+default replicas;\s+app1 sticky_app1;\s+app2 sticky_app2;/,
        );
        assert.match(
          text,
          /upstream sticky_app2 \{\s+server 127\.0\.0\.1:4002 [^;]*;\s+server 127\.0\.0\.1:4001 [^;]* backup;/,
        );
        assert.match(text, /proxy_pass http:\/\/\$nsl_sticky;/);
        assert.match(text, /Set-Cookie "lb=\$upstream_http_x_replica/);
      }
      const file = path.join(dir, `${policy}.conf`);
      writeFileSync(file, text);
      const errorSwitch = acceptsErrorLogSwitch(nginxVersion(findNginx())) ? ['-e', path.join(dir, 'error.log')] : [];
      execFileSync(findNginx(), ['-t', '-q', '-p', dir, '-c', file, ...errorSwitch], { stdio: 'pipe' });
    }
  },
);
