// Proves the lesson 4 servers on real processes: the replica's routes and its 4xx answers (it keeps
// serving), the shared users database across replicas, the kit's balancer's forwarding, its
// 502 for a dead upstream and 503 at once when none is available, and nginx config rendering.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Lab } from '../../measure/lib/process/lab.ts';
import type { ServerProcess } from '../../measure/lib/process/launch.ts';
import { probe } from '../../measure/lib/load/probe.ts';
import { startBalancer, startReplicas, type Replica } from '../../measure/lib/process/topology.ts';
import { NGINX_METHOD, renderNginxConfig } from '../../servers/lib/balancer/nginx-config.ts';
import { FAILOVER_DEFAULTS } from '../../servers/lib/balancer/upstreams.ts';
import { POLICIES } from '../../core/policies.ts';
import { failOnWarnings, holdPort, ROOT, runScript } from '../helpers.ts';
import type {
  BalancerStats,
  ErrorBody,
  ReplicaStats,
  UpstreamAdded,
  UserRow,
  Whoami,
} from '../../servers/contracts.ts';

failOnWarnings();
const lab = new Lab();
let replicas: Replica[];
let lb: ServerProcess;

before(async () => {
  replicas = await startReplicas(lab, 2);
  lb = await startBalancer(lab, 'builtin', 'round-robin', replicas);
});
after(() => lab.close());

/** One request with a raw body (malformed JSON included); `T` is the body the route answers. */
function send<T = unknown>(
  url: string,
  method: string,
  body: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: T; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method, agent: false, headers: { 'content-type': 'application/json', ...headers } },
      (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) as T, headers: res.headers }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

test('replica routes name the replica in a header and the body', async () => {
  const r = replicas[0]!;
  for (const route of ['/fast', '/whoami', '/health', '/slow-async?ms=5', '/slow-sync?ms=5', '/work?ms=5']) {
    const res = await probe<{ replica: string }>(`${r.url}${route}`);
    assert.equal(res.status, 200, route);
    assert.equal(res.body.replica, 'app1', route);
  }
  const missing = await send(`${r.url}/nope`, 'GET', '');
  assert.equal(missing.status, 404);
  assert.equal(missing.headers['x-replica'], 'app1');
});

test('replica bad input: 400 for a bad ms, 400 for bad JSON, 413 for a big body; it keeps serving', async () => {
  const r = replicas[0]!;
  for (const q of ['', '?ms=', '?ms=-1', '?ms=abc', '?ms=1.5', '?ms=10001', '?ms=99999999999999999999']) {
    assert.equal((await probe(`${r.url}/slow-sync${q}`)).status, 400, q);
    assert.equal((await probe(`${r.url}/work${q}`)).status, 400, q);
  }
  assert.equal((await send(`${r.url}/users`, 'POST', '{not json')).status, 400);
  assert.equal((await send(`${r.url}/users`, 'POST', '{"nom":"x"}')).status, 400);
  assert.equal((await send(`${r.url}/users`, 'POST', JSON.stringify({ name: 'x'.repeat(20_000) }))).status, 413);
  assert.equal((await probe(`${r.url}/users/abc`)).status, 400);
  assert.equal((await probe(`${r.url}/users/%zz`)).status, 400);
  assert.equal((await probe(`${r.url}/fast`)).status, 200);
});

test('a user created through one replica is read back through another', async () => {
  const created = await send<Pick<UserRow, 'id'>>(`${replicas[0]!.url}/users`, 'POST', JSON.stringify({ name: 'ada' }));
  assert.equal(created.status, 201);
  const read = await probe<{ user: UserRow }>(`${replicas[1]!.url}/users/${created.body.id}`);
  assert.equal(read.status, 200);
  assert.deepEqual(read.body.user, { id: created.body.id, name: 'ada', createdBy: 'app1' });
  assert.equal((await probe(`${replicas[1]!.url}/users/999999`)).status, 404);
});

test('the balancer forwards, names the upstream, keeps POST bodies, and counts per replica', async () => {
  const seen = new Set<string>();
  for (let i = 0; i < 4; i++) {
    const r = await send<Whoami>(`${lb.url}/whoami`, 'GET', '');
    assert.equal(r.status, 200);
    assert.match(String(r.headers['x-upstream-addr']), /^127\.0\.0\.1:\d+$/);
    seen.add(r.body.replica);
  }
  assert.deepEqual([...seen].sort(), ['app1', 'app2']);
  const created = await send(`${lb.url}/users`, 'POST', JSON.stringify({ name: 'grace' }));
  assert.equal(created.status, 201);
  const stats = await probe<BalancerStats>(`${lb.url}/__lb/stats`);
  assert.equal(stats.body.policy, 'round-robin');
  assert.equal(stats.body.twoChoices, 'distinct');
  assert.equal(stats.body.upstreams.length, 2);
  for (const u of stats.body.upstreams) assert.equal(u.inFlight, 0);
});

test('--two-choices with-replacement: the balancer says so in its stats, and it stays in force after a policy switch', async () => {
  const sampled = await startBalancer(lab, 'builtin', 'power-of-two-choices', replicas, 0, true, [
    '--two-choices',
    'with-replacement',
  ]);
  try {
    assert.equal((await probe<BalancerStats>(`${sampled.url}/__lb/stats`)).body.twoChoices, 'with-replacement');
    assert.equal((await send(`${sampled.url}/__lb/policy?name=round-robin`, 'POST', '')).status, 200);
    assert.equal((await send(`${sampled.url}/__lb/policy?name=power-of-two-choices`, 'POST', '')).status, 200);
    assert.equal((await probe<BalancerStats>(`${sampled.url}/__lb/stats`)).body.twoChoices, 'with-replacement');
  } finally {
    await lab.stop(sampled);
  }
});

test('a dead upstream is a 502 JSON; no upstream available at all is a 503 at once', async () => {
  const held = await holdPort(); // a port that accepts nothing once released
  await held.release();
  const dead = await lab.start({ server: 'balancer', args: ['--upstream', `127.0.0.1:${held.port}`, '--port', '0'] });
  const t0 = performance.now();
  const r = await probe<ErrorBody>(`${dead.url}/fast`);
  assert.equal(r.status, 502);
  assert.equal(r.body.error, 'bad gateway');
  assert.ok(performance.now() - t0 < 2000, 'a refused connection fails fast');
  await lab.stop(dead);

  // Every replica out of rotation: 503 at once, and back in: served again.
  for (const r of replicas)
    assert.equal((await probe(`${lb.url}/__lb/down?upstream=${r.name}`, { method: 'POST' })).status, 200);
  const t1 = performance.now();
  const none = await probe<ErrorBody>(`${lb.url}/fast`, { timeoutMs: 5000 });
  assert.equal(none.status, 503);
  assert.equal(none.body.error, 'no replica available');
  assert.ok(performance.now() - t1 < 1000, '503 comes at once');
  for (const r of replicas) await probe(`${lb.url}/__lb/up?upstream=${r.name}`, { method: 'POST' });
  assert.equal((await probe(`${lb.url}/fast`)).status, 200);
  assert.equal((await probe(`${lb.url}/__lb/down?upstream=nobody`, { method: 'POST' })).status, 404);
});

test('POST /__lb/add puts one more replica into rotation; a name in use or a non-loopback address is a 400', async () => {
  const own = await lab.start({
    server: 'balancer',
    args: ['--upstream', `${replicas[0]!.name}=${replicas[0]!.addr}`, '--port', '0'],
  });
  try {
    const add = (item: string) =>
      probe<Partial<UpstreamAdded & ErrorBody>>(`${own.url}/__lb/add?upstream=${encodeURIComponent(item)}`, {
        method: 'POST',
      });
    const added = await add(`${replicas[1]!.name}=${replicas[1]!.addr}`);
    assert.equal(added.status, 200);
    assert.deepEqual(added.body.upstreams, ['app1', 'app2']);
    const seen = new Set<string>();
    for (let i = 0; i < 4; i++) seen.add((await probe<Whoami>(`${own.url}/whoami`)).body.replica);
    assert.deepEqual([...seen].sort(), ['app1', 'app2']);
    for (const item of [`app1=${replicas[1]!.addr}`, 'far=10.0.0.1:80', 'app3=127.0.0.1:99999']) {
      const r = await add(item);
      assert.equal(r.status, 400, item);
      assert.equal(r.body.field, 'upstream');
    }
    assert.equal((await probe<BalancerStats>(`${own.url}/__lb/stats`)).body.upstreams.length, 2);
  } finally {
    await lab.stop(own);
  }
});

test(
  "a replica's stats show its event loop delay: a 300 ms block within a second, and near 0 idle",
  { timeout: 20_000 },
  async () => {
    const [blocked, idle] = replicas as [Replica, Replica];
    await probe(`${blocked.url}/slow-sync?ms=300`);
    let max = 0;
    // The figures are of the last whole second: they change once a second.
    for (const until = performance.now() + 3000; performance.now() < until && max < 250; ) {
      max = (await probe<ReplicaStats>(`${blocked.url}/__replica/stats`)).body.loopDelayMs.max;
      if (max < 250) await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(max >= 250 && max < 1000, `blocked 300 ms: max ${max} ms`);
    const calm = (await probe<ReplicaStats>(`${idle.url}/__replica/stats`)).body.loopDelayMs;
    assert.ok(calm.p99 < 100, `idle: p99 ${calm.p99} ms`);
  },
);

test('balancer flags: bad policy, non-loopback upstream, missing upstream → exit 2', async () => {
  const cases = [
    ['--policy', 'fastest', '--upstream', '127.0.0.1:1'],
    ['--upstream', '10.0.0.1:80'],
    [],
    ['--upstream', '127.0.0.1:99999'],
    ['--upstream', '127.0.0.1:1', '--keepalive', 'maybe'],
    ['--upstream', '127.0.0.1:1', '--two-choices', 'twice'],
  ];
  // Usage errors start nothing, so the scripts are started side by side.
  const runs = await Promise.all(cases.map((args) => runScript('servers/balancer.ts', args)));
  for (const [i, args] of cases.entries()) {
    assert.equal(runs[i]!.code, 2, args.join(' '));
    assert.match(runs[i]!.stderr, /^error KIT_ERR_USAGE: /);
  }
});

test('nginx config: each policy maps to its method, keepalive comes after it, no placeholder left', () => {
  const template = readFileSync(path.join(ROOT, 'servers', 'nginx', 'nginx.conf.template'), 'utf8');
  for (const policy of POLICIES) {
    const text = renderNginxConfig(template, {
      prefix: '/tmp/p',
      port: 4000,
      policy,
      upstreams: [
        { name: 'a1', addr: '127.0.0.1:1' },
        { name: 'a2', addr: '127.0.0.1:2' },
      ],
      keepAlive: true,
      token: 't0k',
      failover: FAILOVER_DEFAULTS,
    });
    assert.doesNotMatch(text, /\{\{/);
    const upstream = /upstream replicas \{([\s\S]*?)\n {4}\}/.exec(text)![1]!;
    if (NGINX_METHOD[policy])
      assert.ok(upstream.indexOf(NGINX_METHOD[policy]) < upstream.indexOf('keepalive 64;'), policy);
    assert.match(
      upstream,
      /server 127\.0\.0\.1:1 max_fails=2 fail_timeout=5s;\n\s+server 127\.0\.0\.1:2 max_fails=2 fail_timeout=5s;/,
    );
    assert.match(text, /proxy_next_upstream error timeout;\s+proxy_next_upstream_tries 3;/);
    assert.match(text, /proxy_connect_timeout 2000ms;/);
    assert.match(text, /proxy_read_timeout 10000ms;/);
    assert.match(text, /proxy_http_version 1\.1;/);
    assert.match(text, /proxy_set_header Connection "";/);
    assert.match(text, /listen 127\.0\.0\.1:4000;/);
    assert.match(text, /t0k/);
  }
  const off = renderNginxConfig(template, {
    prefix: '/p',
    port: 1,
    policy: 'random',
    upstreams: [{ name: 'a1', addr: '127.0.0.1:1' }],
    keepAlive: false,
    token: 'x',
    failover: { ...FAILOVER_DEFAULTS, retries: 0 },
  });
  assert.doesNotMatch(off, /keepalive 64;/);
  assert.match(
    off,
    /proxy_set_header Connection close;/,
    'keep-alive off asks the replica to close (newer nginx keeps upstreams alive by default)',
  );
  assert.match(off, /proxy_next_upstream off;/);
  assert.doesNotMatch(off, /access_log "/, 'no access log unless asked');
  const logged = renderNginxConfig(template, {
    prefix: '/p',
    port: 1,
    policy: 'random',
    upstreams: [{ name: 'a1', addr: '127.0.0.1:1' }],
    keepAlive: true,
    token: 'x',
    failover: FAILOVER_DEFAULTS,
    accessLog: '/tmp/nsl/access.log',
  });
  assert.match(logged, /access_log "\/tmp\/nsl\/access\.log" nsl_upstreams;/);
  assert.match(
    logged,
    /log_format nsl_upstreams '\$msec \$request_method \$request_uri status=\$status rt=\$request_time ua="\$upstream_addr"/,
  );
  assert.throws(
    () =>
      renderNginxConfig('{{nope}}', {
        prefix: '/p',
        port: 1,
        policy: 'random',
        upstreams: [],
        keepAlive: false,
        token: 'x',
        failover: FAILOVER_DEFAULTS,
      }),
    /no value/,
  );
});

test('the balancer relays large and unsized answers intact (streamed), and small ones (buffered)', async () => {
  const big = Buffer.alloc(300_000, 'x');
  const upstream = http.createServer((req, res) => {
    if (req.url === '/sized') res.writeHead(200, { 'content-length': big.length }).end(big);
    else if (req.url === '/chunked') {
      res.writeHead(200);
      res.write(big.subarray(0, 100_000));
      setImmediate(() => res.end(big.subarray(100_000)));
    } else res.writeHead(200, { 'content-length': 2 }).end('ok');
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  const port = (upstream.address() as import('node:net').AddressInfo).port;
  try {
    const relay = await lab.start({ server: 'balancer', args: ['--upstream', `127.0.0.1:${port}`, '--port', '0'] });
    for (const route of ['/sized', '/chunked', '/small']) {
      const body = await new Promise<Buffer>((resolve, reject) => {
        http
          .get(`${relay.url}${route}`, { agent: false }, (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c) => chunks.push(c));
            res.on('end', () => resolve(Buffer.concat(chunks)));
          })
          .on('error', reject);
      });
      assert.equal(body.length, route === '/small' ? 2 : big.length, route);
    }
    await lab.stop(relay);
  } finally {
    upstream.closeAllConnections();
    await new Promise((r) => upstream.close(r));
  }
});
