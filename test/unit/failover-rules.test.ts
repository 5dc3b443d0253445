// Proves the failover rules shared by the balancer and the simulator (core/failover.ts),
// with an injected clock: passive health checks (max_fails within fail_timeout, one probe after the
// rest), which failed tries may be retried (never a POST that may have been sent), and the retry
// log line both balancers print, including nginx's log turned into it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  admission,
  classifyError,
  failureStatus,
  isIdempotent,
  mayRetry,
  newHealth,
  parseRetryLine,
  recordFailure,
  recordSuccess,
  retryLine,
  startProbe,
} from '../../core/failover.ts';
import { NGINX_KEEPALIVE, nginxRetryLine } from '../../servers/lib/balancer/nginx-config.ts';
import { UPSTREAM_IDLE_MS } from '../../servers/lib/balancer/upstreams.ts';
import { failOnWarnings } from '../helpers.ts';

failOnWarnings();
const rules = { maxFails: 2, failTimeoutMs: 5000 };

test('passive health: max_fails failures within fail_timeout make a replica rest for fail_timeout', () => {
  const h = newHealth();
  assert.equal(admission(h, rules, 0), 'yes');
  assert.equal(recordFailure(h, rules, 1000), false, 'one failure is not enough');
  assert.equal(admission(h, rules, 1001), 'yes');
  assert.equal(recordFailure(h, rules, 2000), true, 'the second within 5 s is');
  assert.equal(admission(h, rules, 2001), 'no');
  assert.equal(admission(h, rules, 6999), 'no', 'still resting just before fail_timeout ends');
  assert.equal(admission(h, rules, 7001), 'probe', 'after fail_timeout one request may probe it');
});

test('passive health: failures further apart than fail_timeout never add up', () => {
  const h = newHealth();
  recordFailure(h, rules, 0);
  assert.equal(recordFailure(h, rules, 6000), false);
  assert.equal(recordFailure(h, rules, 12_000), false);
  assert.equal(admission(h, rules, 12_001), 'yes');
});

test('passive health: only one probe at a time; a good probe puts the replica back, a bad one rests it again', () => {
  const h = newHealth();
  recordFailure(h, rules, 0);
  recordFailure(h, rules, 10);
  assert.equal(admission(h, rules, 5011), 'probe');
  startProbe(h);
  assert.equal(admission(h, rules, 5012), 'no', 'the others skip it while the probe is out');
  recordFailure(h, rules, 5100);
  assert.equal(admission(h, rules, 5101), 'no');
  assert.equal(admission(h, rules, 10_101), 'probe');
  startProbe(h);
  recordSuccess(h, true);
  assert.equal(admission(h, rules, 10_102), 'yes');
});

test('passive health: an answer to a request sent before the rest does not end it; max_fails 0 turns checks off', () => {
  const h = newHealth();
  recordFailure(h, rules, 0);
  recordFailure(h, rules, 1);
  recordSuccess(h, false);
  assert.equal(admission(h, rules, 2), 'no');
  const off = { maxFails: 0, failTimeoutMs: 5000 };
  const h2 = newHealth();
  for (let t = 0; t < 10; t++) recordFailure(h2, off, t);
  assert.equal(admission(h2, off, 11), 'yes');
});

test('retries: a refused or timed-out connection is retried for any method; a reset or a timeout only for idempotent ones', () => {
  for (const m of ['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS']) assert.ok(isIdempotent(m), m);
  for (const m of ['POST', 'PATCH']) assert.ok(!isIdempotent(m), m);
  assert.ok(mayRetry('POST', 'connect'));
  assert.ok(mayRetry('POST', 'connect-timeout'), 'a connect that timed out sent nothing');
  assert.ok(!mayRetry('POST', 'reset'), 'a POST that may have reached a replica is never sent again');
  assert.ok(!mayRetry('POST', 'timeout'));
  assert.ok(mayRetry('GET', 'reset'));
  assert.ok(mayRetry('GET', 'timeout'));
  assert.equal(classifyError('ECONNREFUSED'), 'connect');
  assert.equal(classifyError('UND_ERR_CONNECT_TIMEOUT'), 'connect-timeout');
  assert.equal(classifyError('ECONNRESET'), 'reset', 'a reset may come after the request was sent');
  assert.equal(classifyError('UND_ERR_SOCKET'), 'reset');
  assert.equal(classifyError(undefined), 'reset', 'unknown: assume it was sent');
  assert.equal(failureStatus('timeout'), 504);
  assert.equal(failureStatus('connect-timeout'), 504, 'nginx answers 504 for a connect timeout too');
  assert.equal(failureStatus('connect'), 502);
  assert.equal(failureStatus('reset'), 502);
});

test("the retry line round-trips, and nginx's retries log becomes the same line", () => {
  const attempts = [
    { replica: 'app3', status: 502, ms: 0.4, code: 'ECONNREFUSED' },
    { replica: 'app1', status: 200, ms: 1.04 },
  ];
  const text = retryLine('GET', '/fast', attempts);
  assert.equal(text, 'retry: GET /fast app3 502 0.4ms ECONNREFUSED -> app1 200 1.0ms');
  assert.deepEqual(parseRetryLine(text), {
    method: 'GET',
    path: '/fast',
    attempts: [attempts[0], { replica: 'app1', status: 200, ms: 1 }],
  });
  assert.equal(parseRetryLine('ready: balancer listening'), undefined);
  const names = new Map([
    ['127.0.0.1:4003', 'app3'],
    ['127.0.0.1:4001', 'app1'],
  ]);
  assert.equal(
    nginxRetryLine('GET /fast|127.0.0.1:4003, 127.0.0.1:4001|504, 200|1.501, 0.002', names),
    'retry: GET /fast app3 504 1501.0ms -> app1 200 2.0ms',
  );
  assert.equal(nginxRetryLine('garbage', names), undefined);
});

test('both balancers close idle upstream connections before a Node replica would (keepAliveTimeout 5 s)', async () => {
  const http = await import('node:http');
  const server = http.createServer();
  assert.ok(
    UPSTREAM_IDLE_MS < server.keepAliveTimeout,
    `built-in: ${UPSTREAM_IDLE_MS} ms < ${server.keepAliveTimeout} ms`,
  );
  const nginxIdleS = Number(/keepalive_timeout (\d+)s;/.exec(NGINX_KEEPALIVE)?.[1]);
  assert.ok(nginxIdleS * 1000 < server.keepAliveTimeout, `nginx: ${nginxIdleS} s < ${server.keepAliveTimeout} ms`);
});
