// Proves the lesson 7 shape rules on fixed results: healthy runs match the expected files, each
// rule fails on a result that breaks it (a shared store losing a count or a session, a memory
// store that happens to agree, a limit let through too often, ip-hash that spreads, an error), and
// a store this machine does not have (no redis-server) is "not shown", not failed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  countVerdict,
  render as renderCounter,
  shape as counterShape,
  type CounterResult,
  type CounterRun,
} from '../../results/counter/report.ts';
import { render as renderLimit, shape as limitShape } from '../../results/rate-limit/report.ts';
import {
  render as renderSessions,
  shape as sessionsShape,
  type SessionRun,
  type SessionsResult,
} from '../../results/sessions/report.ts';
import { compareShape, CANNOT_SHOW } from '../../results/report/shape.ts';
import { MACHINE, rateLimitResult } from '../fixtures/results.ts';
import { expectedShape, failedLines, failOnWarnings } from '../helpers.ts';

failOnWarnings();

const counterRun = (
  store: string,
  answered: number,
  total: number,
  views: number[],
  cut = 2,
  topology: CounterRun['topology'] = 'cluster',
): CounterRun => ({
  topology,
  store,
  answered,
  cut,
  total,
  views: Object.fromEntries(views.map((v, i) => [String(100 + i), v])),
  killed: '100',
});

const counter = (): CounterResult => ({
  machine: MACHINE,
  balancer: 'builtin',
  workers: 3,
  load: { connections: 6, loans: 2000 },
  runs: [
    counterRun('memory', 1999, 1696, [1000, 696, 0]),
    counterRun('sqlite', 1998, 1999, [1999, 1999, 1999]),
    counterRun('redis', 1997, 1997, [1997, 1997, 1997]),
    counterRun('memory', 1995, 1330, [665, 665], 5, 'replicas'),
    counterRun('sqlite', 1996, 1998, [1998, 1998], 4, 'replicas'),
    counterRun('redis', 1996, 1996, [1996, 1996], 4, 'replicas'),
  ],
  notRun: {},
});

test('counter: a healthy result matches expected-output/counter.txt', () => {
  assert.deepEqual(counterShape(counter()), expectedShape('counter'));
  assert.match(renderCounter(counter(), false), /none lost \(\+1 counted, then cut\)/);
});

test('counter: each rule fails on a result that breaks it', () => {
  const expected = expectedShape('counter');
  const withRun = (run: CounterRun) => ({
    ...counter(),
    runs: counter().runs.map((r) => (r.store === run.store && r.topology === run.topology ? run : r)),
  });
  assert.deepEqual(failedLines(expected, counterShape(withRun(counterRun('sqlite', 1998, 1990, [1990, 1990, 1990])))), [
    'cluster-sqlite  each-process-sees  all-loans',
    'cluster-sqlite  total-vs-200s  none-lost',
  ]);
  assert.deepEqual(
    failedLines(expected, counterShape(withRun(counterRun('redis', 1997, 2004, [2004, 2004, 2004])))),
    ['cluster-redis  total-vs-200s  none-lost'],
    'more counted than answered or cut',
  );
  assert.deepEqual(failedLines(expected, counterShape(withRun(counterRun('redis', 1997, 1997, [1997, 1990, 1997])))), [
    'cluster-redis  each-process-sees  all-loans',
  ]);
  assert.deepEqual(failedLines(expected, counterShape(withRun(counterRun('memory', 1999, 1999, [1999, 1999, 1999])))), [
    'cluster-memory  each-process-sees  only-its-own',
    'cluster-memory  total-vs-200s  lost',
  ]);
  // two memory replicas with equal shares agree with each other, and still each sees only its own
  assert.deepEqual(
    failedLines(expected, counterShape(withRun(counterRun('memory', 1330, 1330, [665, 665], 0, 'replicas')))),
    ['replicas-memory  total-vs-200s  lost'],
  );
  assert.deepEqual(
    failedLines(expected, counterShape(withRun(counterRun('sqlite', 1996, 1900, [1900, 1900], 4, 'replicas')))),
    ['replicas-sqlite  each-process-sees  all-loans', 'replicas-sqlite  total-vs-200s  none-lost'],
  );
  assert.equal(countVerdict(counterRun('x', 10, 16, [16], 2), 6), 'none-lost', 'at most one in flight per connection');
  assert.equal(countVerdict(counterRun('x', 10, 17, [17], 2), 6), 'over-counted');
  assert.equal(countVerdict(counterRun('x', 10, 9, [9], 2), 6), 'lost');
});

test('counter: without Redis its lines are not shown, and the shape still holds', () => {
  const noRedis = {
    ...counter(),
    runs: counter().runs.filter((r) => r.store !== 'redis'),
    notRun: { redis: 'redis-server is not installed' },
  };
  const lines = counterShape(noRedis);
  assert.ok(lines.includes(`cluster-redis  total-vs-200s  ${CANNOT_SHOW}`));
  assert.ok(lines.includes(`replicas-redis  total-vs-200s  ${CANNOT_SHOW}`));
  assert.equal(compareShape(expectedShape('counter'), lines).holds, true);
});

const limit = rateLimitResult;

test('rate limit: a healthy result matches expected-output/rate-limit.txt; each rule can fail', () => {
  assert.deepEqual(limitShape(limit()), expectedShape('rate-limit'));
  assert.match(renderLimit(limit(), false), /10 \+ 10 \+ 10 \+ 10/);
  const expected = expectedShape('rate-limit');
  const set = (store: string, allowed: number) => ({
    ...limit(),
    runs: limit().runs.map((r) => (r.store === store ? { ...r, allowed } : r)),
  });
  assert.deepEqual(failedLines(expected, limitShape(set('sqlite', 11))), [
    'sqlite  allowed-vs-limit  exactly-the-limit',
  ]);
  assert.deepEqual(failedLines(expected, limitShape(set('redis', 9))), ['redis  allowed-vs-limit  exactly-the-limit']);
  assert.deepEqual(failedLines(expected, limitShape(set('memory', 10))), [
    'memory  allowed-vs-limit  one-limit-per-worker',
  ]);
  // A limiter that never refuses lets all 60 through: not one limit per worker.
  const none = {
    ...limit(),
    runs: limit().runs.map((r) =>
      r.store === 'memory' ? { ...r, allowed: 60, refused: 0, allowedByWorker: { 1: 15, 2: 15, 3: 15, 4: 15 } } : r,
    ),
  };
  assert.deepEqual(limitShape(none)[0], 'memory  allowed-vs-limit  no-limit');
  assert.deepEqual(failedLines(expected, limitShape(none)), ['memory  allowed-vs-limit  one-limit-per-worker']);
  // 40 in all, but not 10 on each worker (one worker's limit shared by two): not one limit per worker.
  const lopsided = {
    ...limit(),
    runs: limit().runs.map((r) => (r.store === 'memory' ? { ...r, allowedByWorker: { 1: 20, 2: 10, 3: 10 } } : r)),
  };
  assert.deepEqual(failedLines(expected, limitShape(lopsided)), ['memory  allowed-vs-limit  one-limit-per-worker']);
});

const phase = (requests: number, lost: number, errors = 0) => ({ requests, lost, errors });
const sessionRun = (
  name: string,
  store: string,
  policy: string,
  before: number,
  after: number,
  perReplica: Record<string, number>,
): SessionRun => ({
  name,
  store,
  policy,
  before: phase(90, before),
  after: phase(90, after),
  perReplica,
  victim: 'app1',
  p95: 30,
});
const even = { app1: 33, app2: 33, app3: 33 };

const sessions = (): SessionsResult => ({
  machine: MACHINE,
  balancer: 'builtin',
  members: 9,
  reads: 10,
  runs: [
    sessionRun('memory-round-robin', 'memory', 'round-robin', 57, 55, even),
    sessionRun('memory-ip-hash', 'memory', 'ip-hash', 0, 90, { app1: 99, app2: 0, app3: 0 }),
    sessionRun('memory-sticky-cookie', 'memory', 'sticky-cookie', 0, 30, even),
    sessionRun('sqlite-round-robin', 'sqlite', 'round-robin', 0, 0, even),
    sessionRun('redis-round-robin', 'redis', 'round-robin', 0, 0, even),
    sessionRun('token-round-robin', 'token', 'round-robin', 0, 0, even),
  ],
  notRun: {},
});

test('sessions: a healthy result matches expected-output/sessions.txt', () => {
  assert.deepEqual(sessionsShape(sessions()), expectedShape('sessions'));
  assert.match(renderSessions(sessions(), false), /ip-hash/);
});

test('sessions: each rule fails on a result that breaks it', () => {
  const expected = expectedShape('sessions');
  const edit = (name: string, over: Partial<SessionRun>) => ({
    ...sessions(),
    runs: sessions().runs.map((r) => (r.name === name ? { ...r, ...over } : r)),
  });
  assert.deepEqual(failedLines(expected, sessionsShape(edit('sqlite-round-robin', { after: phase(90, 3) }))), [
    'sqlite-round-robin  after-kill  none-lost',
  ]);
  assert.deepEqual(failedLines(expected, sessionsShape(edit('memory-round-robin', { before: phase(90, 0) }))), [
    'memory-round-robin  before-kill  most-lost',
  ]);
  assert.deepEqual(failedLines(expected, sessionsShape(edit('memory-ip-hash', { perReplica: even }))), [
    'memory-ip-hash  spread  one-replica',
  ]);
  assert.deepEqual(failedLines(expected, sessionsShape(edit('memory-sticky-cookie', { after: phase(90, 0) }))), [
    'memory-sticky-cookie  after-kill  some-lost',
  ]);
  assert.deepEqual(failedLines(expected, sessionsShape(edit('token-round-robin', { after: phase(90, 0, 2) }))), [
    'all-configs  errors  none',
  ]);
});

test('rate limit: a store that could not run still has its line, and it cannot show', () => {
  const redisOnly = { ...limit(), runs: [], notRun: { redis: 'missing' } };
  assert.deepEqual(limitShape(redisOnly).at(-1), `redis  allowed-vs-limit  ${CANNOT_SHOW}`);
});
