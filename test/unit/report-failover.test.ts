// Proves the shape rules of lesson 6's failover, graceful and rolling-restart experiments on fixed
// results: healthy runs match the expected files, and each rule fails on a result that breaks it
// (client errors, no slow burst or one that does not match the timeout, no errors without retries,
// a POST stored twice, the balancer's access log against the clients, a graceful stop that cuts, an abrupt one that costs nothing, a failed
// request during a rolling restart, an old worker still answering).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { render as renderFailover, shape as failoverShape } from '../../results/failover/report.ts';
import { FAILOVER_SPEC, type FailoverResult, type FaultRun } from '../../results/failover/result.ts';
import {
  render as renderGraceful,
  shape as gracefulShape,
  type GracefulResult,
  type StopRun,
} from '../../results/graceful/report.ts';
import {
  render as renderRolling,
  shape as rollingShape,
  type RollingRestartResult,
} from '../../results/rolling-restart/report.ts';
import type { TimelineSecond } from '../../results/report/timeline.ts';
import { MACHINE } from '../fixtures/results.ts';
import { expectedShape, failedLines, failOnWarnings, ROOT } from '../helpers.ts';

failOnWarnings();

const second = (s: number, completed = 3000, errors = 0, max = 20): TimelineSecond => ({
  second: s,
  completed,
  ok2xx: completed - errors,
  non2xx: errors,
  errors: 0,
  p99: 10,
  max,
});

const faultRun = (name: string, fault: FaultRun['fault'], over: Partial<FaultRun> = {}): FaultRun => ({
  name,
  fault,
  method: 'GET',
  retries: 2,
  faultAtS: 2,
  timeline: [0, 1, 2, 3, 4].map((s) => second(s)),
  totals: { completed: 15000, ok2xx: 15000, non2xx: 0, errors: 0 },
  retried: 4,
  slow: { count: 0, medianMs: 0, maxMs: 0 },
  p99: 12,
  max: 40,
  log: { answered: 15000, retried: 4, slow: 0, names: NAMES },
  clientRetried: 4,
  ...over,
});

const NAMES = { '127.0.0.1:40001': 'app1', '127.0.0.1:40002': 'app2', '127.0.0.1:40003': 'app3' };
/** The frozen run's slowest retried request, as both balancers log it (1.5 s response timeout). */
const FROZEN_LINE =
  '1764820862.517 GET /fast status=200 rt=1.504 ua="127.0.0.1:40003, 127.0.0.1:40001" us="504, 200" ut="1.501, 0.003"';
const frozenLog = (over: Partial<NonNullable<FaultRun['log']>> = {}) => ({
  log: { answered: 15000, retried: 8, slow: 8, sample: FROZEN_LINE, names: NAMES, ...over },
  clientRetried: 8,
});
/** The vanished replica's slowest retried request: 2 s, the connect timeout, as nginx logs it. */
const VANISHED_LINE =
  '1764820870.100 GET /fast status=200 rt=2.000 ua="127.0.0.1:40003, 127.0.0.1:40002" us="504, 200" ut="2.000, 0.000"';
const vanishedLog = (over: Partial<NonNullable<FaultRun['log']>> = {}) => ({
  log: {
    answered: 9000,
    retried: 8,
    slow: 8,
    sample: VANISHED_LINE,
    names: NAMES,
    firstTriesS: [1.5, 2, 2, 2, 2, 2, 2, 2],
    ...over,
  },
  clientRetried: 8,
});

const failover = (): FailoverResult => ({
  machine: MACHINE,
  balancer: 'builtin',
  policy: 'round-robin',
  victim: 'app3',
  load: { connections: 8, durationS: 5, route: '/fast' },
  settings: { responseTimeoutMs: 1500, connectTimeoutMs: 2000, maxFails: 2, failTimeoutS: 5, retries: 2 },
  slowThresholdMs: 1000,
  runs: [
    faultRun('sigterm', 'sigterm'),
    faultRun('sigkill', 'sigkill'),
    faultRun('sigstop', 'sigstop', { slow: { count: 8, medianMs: 1508, maxMs: 1512 }, ...frozenLog() }),
    faultRun('vanish', 'vanish', { slow: { count: 8, medianMs: 2001, maxMs: 2004 }, ...vanishedLog() }),
    faultRun('sigkill-without-retries', 'sigkill', {
      retries: 0,
      retried: 0,
      totals: { completed: 15000, ok2xx: 14992, non2xx: 8, errors: 0 },
    }),
    faultRun('post-during-kill', 'sigkill', {
      method: 'POST',
      retried: 0,
      totals: { completed: 10000, ok2xx: 9995, non2xx: 5, errors: 0 },
      post: { created: 9995, createdAndStoredOnce: 9995, stored: 10003, storedTwice: 0, retried: 0 },
    }),
  ],
});

const withRun = (r: FailoverResult, name: string, over: Partial<FaultRun>): FailoverResult => ({
  ...r,
  runs: r.runs.map((x) => (x.name === name ? { ...x, ...over } : x)),
});

test('failover: a healthy result matches expected-output/failover.txt and renders its timelines', () => {
  assert.deepEqual(failoverShape(failover()), expectedShape('failover'));
  const text = renderFailover(failover(), false);
  assert.match(text, /← SIGSTOP app3/);
  assert.match(text, /9995 answered 201/);
  assert.match(text, /One retried request of the sigstop run/);
  assert.match(text, /ua {2}the replicas tried, in order: app3, then app1/);
  assert.match(text, /us {2}each try's status: app3: 504, no answer within the 1500 ms response timeout; app1: 200/);
  assert.match(text, /One retried request of the vanish run/);
  assert.match(text, /us {2}each try's status: app3: 504, no connection within the 2000 ms connect timeout; app2: 200/);
  assert.match(
    text,
    /│ vanish +│ +9000 │ +8 │ +8 │ +8 │ +8 │ +7 │ +1 │/,
    'first tries: 7 ran out the connect timeout, 1 the response timeout',
  );
});

test("failover: the vanished address's lines fail when its requests waited the response timeout, or were refused at once", () => {
  const expected = expectedShape('failover');
  // Every slow request waited 1.5 s: the kernel queued the balancer's connections (the fault's queue was not full).
  const queued = withRun(failover(), 'vanish', {
    slow: { count: 8, medianMs: 1502, maxMs: 1504 },
    ...vanishedLog({ sample: FROZEN_LINE }),
  });
  assert.deepEqual(failedLines(expected, failoverShape(queued)), [
    'vanish  slow-latency-vs-connect-timeout  matches',
    'vanish  log-retried-line  connect-timeout-then-200',
  ]);
  // Refused at once (the listener closed): retried, nothing slow.
  const refused = VANISHED_LINE.replace('us="504, 200"', 'us="502, 200"')
    .replace('ut="2.000, 0.000"', 'ut="0.000, 0.001"')
    .replace('rt=2.000', 'rt=0.001');
  assert.deepEqual(
    failedLines(
      expected,
      failoverShape(
        withRun(failover(), 'vanish', {
          slow: { count: 0, medianMs: 0, maxMs: 0 },
          ...vanishedLog({ slow: 0, sample: refused }),
        }),
      ),
    ),
    [
      'vanish  slow-requests  burst',
      'vanish  slow-latency-vs-connect-timeout  matches',
      'vanish  log-retried-line  connect-timeout-then-200',
    ],
  );
});

test('failover: the access log lines fail when the log and the clients disagree, when there is no log, and on another kind of retried line', () => {
  const expected = expectedShape('failover');
  assert.deepEqual(failedLines(expected, failoverShape(withRun(failover(), 'sigkill', { clientRetried: 3 }))), [
    'sigkill  log-retried-vs-clients  equal',
  ]);
  assert.deepEqual(failedLines(expected, failoverShape(withRun(failover(), 'sigstop', frozenLog({ slow: 7 })))), [
    'sigstop  log-slow-vs-clients  equal',
  ]);
  const { log: _gone, ...noLog } = failover().runs.find((r) => r.name === 'sigstop')!;
  assert.deepEqual(
    failedLines(
      expected,
      failoverShape(
        withRun({ ...failover(), runs: failover().runs.map((r) => (r.name === 'sigstop' ? noLog : r)) }, 'sigstop', {}),
      ),
    ),
    [
      'sigstop  log-retried-vs-clients  equal',
      'sigstop  log-slow-vs-clients  equal',
      'sigstop  log-retried-line  response-timeout-then-200',
    ],
  );
  // A refused connection, then 200: a retry, but not the frozen replica's timeout.
  const refused = FROZEN_LINE.replace('us="504, 200"', 'us="502, 200"').replace(
    'ut="1.501, 0.003"',
    'ut="0.000, 0.003"',
  );
  assert.deepEqual(
    failedLines(expected, failoverShape(withRun(failover(), 'sigstop', frozenLog({ sample: refused })))),
    ['sigstop  log-retried-line  response-timeout-then-200'],
  );
  // A first try that waited three times the response timeout does not match it.
  const late = FROZEN_LINE.replace('ut="1.501, 0.003"', 'ut="4.502, 0.003"');
  assert.deepEqual(failedLines(expected, failoverShape(withRun(failover(), 'sigstop', frozenLog({ sample: late })))), [
    'sigstop  log-retried-line  response-timeout-then-200',
  ]);
  assert.deepEqual(
    failedLines(expected, failoverShape(withRun(failover(), 'sigstop', frozenLog({ sample: undefined } as never)))),
    ['sigstop  log-retried-line  response-timeout-then-200'],
  );
});

test('failover: the throughput line fails when the seconds before the fault were still warming up, and when the survivors could not take the load', () => {
  const expected = expectedShape('failover');
  // The artefact of a 1 s warm-up on the reference machine: 1,548 and 2,534 req/s before the SIGTERM, 8,262 and 7,872 after.
  const cold = [1548, 2534, 3434, 8262, 7872].map((n, s) => second(s, n));
  assert.deepEqual(failedLines(expected, failoverShape(withRun(failover(), 'sigterm', { timeline: cold }))), [
    'sigterm  throughput-after-vs-before  similar',
  ]);
  assert.deepEqual(failedLines(expected, failoverShape(withRun(failover(), 'sigkill', { timeline: cold }))), [
    'sigkill  throughput-after-vs-before  similar',
  ]);
  const collapsed = [7000, 7200, 5000, 2500, 2400].map((n, s) => second(s, n));
  assert.deepEqual(failedLines(expected, failoverShape(withRun(failover(), 'sigterm', { timeline: collapsed }))), [
    'sigterm  throughput-after-vs-before  similar',
  ]);
  // A warmed-up run that gains half again after the stop (one process fewer on two cores, and a second's swing) holds; the fault's own second is left out.
  const warm = [6000, 6400, 100, 9000, 9300].map((n, s) => second(s, n));
  assert.deepEqual(failedLines(expected, failoverShape(withRun(failover(), 'sigterm', { timeline: warm }))), []);
  assert.deepEqual(failedLines(expected, failoverShape(withRun(failover(), 'sigterm', { timeline: [] }))), [
    'sigterm  throughput-after-vs-before  similar',
  ]);
});

test("failover: lesson 6 gives the fault's second with and without --quick, and the warm-up, as the spec has them", () => {
  const text = readFileSync(path.join(ROOT, 'lessons/06-failure.md'), 'utf8').replace(/\s+/g, ' ');
  const { faultAtS, warmupS } = FAILOVER_SPEC;
  assert.ok(text.includes(`at second ${faultAtS.full} (second ${faultAtS.quick} with \`--quick\`)`), 'both seconds');
  assert.ok(text.includes(`after a ${warmupS} s warm-up`), 'the warm-up');
  assert.match(
    renderFailover({ ...failover(), load: { ...failover().load, warmupS } }, false),
    new RegExp(`for 5 s after a ${warmupS} s warm-up on the same connections;`),
  );
});

test('failover: each rule fails on a result that breaks it', () => {
  const expected = expectedShape('failover');
  const errors = { totals: { completed: 15000, ok2xx: 14990, non2xx: 10, errors: 0 } };
  assert.deepEqual(failedLines(expected, failoverShape(withRun(failover(), 'sigkill', errors))), [
    'sigkill  client-errors  none',
  ]);
  assert.deepEqual(failedLines(expected, failoverShape(withRun(failover(), 'sigkill', { retried: 0 }))), [
    'sigkill  retried  some',
  ]);
  assert.deepEqual(
    failedLines(
      expected,
      failoverShape(withRun(failover(), 'sigterm', { slow: { count: 3, medianMs: 1200, maxMs: 1300 } })),
    ),
    ['sigterm  slow-requests  none'],
  );
  assert.deepEqual(
    failedLines(expected, failoverShape(withRun(failover(), 'sigstop', { slow: { count: 0, medianMs: 0, maxMs: 0 } }))),
    [
      'sigstop  slow-requests  burst',
      'sigstop  slow-latency-vs-response-timeout  matches',
      'sigstop  log-slow-vs-clients  equal', // the fixture's log still has its 8
    ],
  );
  // a burst that took twice the timeout (undici's coarse timers would do this) does not match
  assert.deepEqual(
    failedLines(
      expected,
      failoverShape(withRun(failover(), 'sigstop', { slow: { count: 8, medianMs: 3000, maxMs: 3100 } })),
    ),
    ['sigstop  slow-latency-vs-response-timeout  matches'],
  );
  assert.deepEqual(
    failedLines(
      expected,
      failoverShape(
        withRun(failover(), 'sigkill-without-retries', {
          totals: { completed: 15000, ok2xx: 15000, non2xx: 0, errors: 0 },
        }),
      ),
    ),
    ['sigkill-without-retries  client-errors  some'],
  );
  const twice = { post: { created: 9995, createdAndStoredOnce: 9995, stored: 10004, storedTwice: 1, retried: 1 } };
  assert.deepEqual(failedLines(expected, failoverShape(withRun(failover(), 'post-during-kill', twice))), [
    'post-during-kill  users-stored-twice  none',
  ]);
  const lost = { post: { created: 9995, createdAndStoredOnce: 9990, stored: 9990, storedTwice: 0, retried: 0 } };
  assert.deepEqual(failedLines(expected, failoverShape(withRun(failover(), 'post-during-kill', lost))), [
    'post-during-kill  201s-stored-exactly-once  all',
  ]);
});

const stop = (over: Partial<StopRun> = {}): StopRun => ({
  inFlight: 1,
  cut: 0,
  retried: 2,
  clientErrors: 0,
  p99: 10,
  mean: 1,
  max: 30,
  requests: 9000,
  ...over,
});

const graceful = (): GracefulResult => ({
  machine: MACHINE,
  balancer: 'builtin',
  victim: 'app3',
  durationS: 3,
  stopAtS: 1,
  cases: [
    { key: 'fast', route: '/fast', connections: 8, mode: 'graceful', runs: [stop()] },
    { key: 'fast', route: '/fast', connections: 8, mode: 'abrupt', runs: [stop({ cut: 1, p99: 12, mean: 1.1 })] },
    {
      key: 'slow-500ms',
      route: '/slow-async?ms=500',
      connections: 24,
      mode: 'graceful',
      runs: [stop({ inFlight: 8, p99: 522, max: 524, requests: 140 })],
    },
    {
      key: 'slow-500ms',
      route: '/slow-async?ms=500',
      connections: 24,
      mode: 'abrupt',
      runs: [stop({ inFlight: 8, cut: 8, retried: 8, p99: 1029, max: 1032, requests: 140 })],
    },
  ],
});

const withCase = (r: GracefulResult, key: string, mode: string, over: Partial<StopRun>): GracefulResult => ({
  ...r,
  cases: r.cases.map((c) =>
    c.key === key && c.mode === mode ? { ...c, runs: c.runs.map((x) => ({ ...x, ...over })) } : c,
  ),
});

test('graceful: a healthy result matches expected-output/graceful.txt', () => {
  assert.deepEqual(gracefulShape(graceful()), expectedShape('graceful'));
  assert.match(renderGraceful(graceful(), false), /in flight at stop/);
});

test('graceful: each rule fails on a result that breaks it', () => {
  const expected = expectedShape('graceful');
  assert.deepEqual(failedLines(expected, gracefulShape(withCase(graceful(), 'slow-500ms', 'graceful', { cut: 2 }))), [
    'slow-500ms  graceful  requests-cut  none',
  ]);
  assert.deepEqual(
    failedLines(expected, gracefulShape(withCase(graceful(), 'slow-500ms', 'abrupt', { cut: 0, p99: 530 }))),
    ['slow-500ms  abrupt  requests-cut  some', 'slow-500ms  abrupt-p99-vs-graceful  clearly-worse'],
  );
  // Short requests: each stop's p99 is judged in units of its own run's mean latency (10 and 10.9 here).
  const fastWorse = ['fast  abrupt-p99-vs-graceful  within-noise'];
  assert.deepEqual(
    failedLines(expected, gracefulShape(withCase(graceful(), 'fast', 'abrupt', { p99: 200, mean: 1.2 }))),
    fastWorse,
  );
  // twice graceful's is no longer noise (it passed when the factor was 3)
  assert.deepEqual(
    failedLines(expected, gracefulShape(withCase(graceful(), 'fast', 'abrupt', { p99: 22, mean: 1.1 }))),
    fastWorse,
  );
  assert.deepEqual(
    failedLines(expected, gracefulShape(withCase(graceful(), 'fast', 'abrupt', { p99: 15.4, mean: 1.1 }))),
    [],
    '1.4x still is',
  );
  // The same raw p99s, but abrupt's run went at twice the pace: its stop cost it twice as much.
  assert.deepEqual(
    failedLines(expected, gracefulShape(withCase(graceful(), 'fast', 'abrupt', { p99: 10, mean: 0.5 }))),
    fastWorse,
  );
  // A run 1.6x slower throughout (mean and p99 alike) is that run's pace, not its stop's cost.
  assert.deepEqual(
    failedLines(expected, gracefulShape(withCase(graceful(), 'fast', 'abrupt', { p99: 16, mean: 1.6 }))),
    [],
  );
  // Without a mean (the simulation's runs), the raw p99s compare.
  const raw = (x: GracefulResult) => ({
    ...x,
    cases: x.cases.map((c) => ({ ...c, runs: c.runs.map(({ mean: _, ...rest }) => rest) })),
  });
  assert.deepEqual(
    failedLines(expected, gracefulShape(raw(withCase(graceful(), 'fast', 'abrupt', { p99: 16 })))),
    fastWorse,
  );
  assert.deepEqual(failedLines(expected, gracefulShape(raw(graceful()))), []);
  assert.deepEqual(
    failedLines(expected, gracefulShape(withCase(graceful(), 'fast', 'graceful', { clientErrors: 3 }))),
    ['all-stops  client-errors  none'],
  );
});

const rolling = (): RollingRestartResult => ({
  machine: MACHINE,
  workers: 3,
  load: { connections: 8, route: '/status' },
  restartAtS: 1.01,
  doneAtS: 4.2,
  steps: [
    { old: 101, pid: 201, ms: 1200 },
    { old: 102, pid: 202, ms: 1300 },
    { old: 103, pid: 203, ms: 1250 },
  ],
  pidsBefore: [101, 102, 103],
  pidsAfter: [201, 202, 203],
  timeline: [0, 1, 2, 3, 4, 5].map((s) => second(s, 12000)),
  totals: { completed: 72000, non2xx: 0, errors: 0, p99: 8, max: 40 },
  duringRestart: 48000,
});

test('rolling restart: a healthy result matches expected-output/rolling-restart.txt', () => {
  assert.deepEqual(rollingShape(rolling()), expectedShape('rolling-restart'));
  assert.match(renderRolling(rolling(), false), /all workers replaced/);
});

test('rolling restart: each rule fails on a result that breaks it', () => {
  const expected = expectedShape('rolling-restart');
  assert.deepEqual(failedLines(expected, rollingShape({ ...rolling(), totals: { ...rolling().totals, errors: 11 } })), [
    'rolling-restart  errors  none',
  ]);
  assert.deepEqual(failedLines(expected, rollingShape({ ...rolling(), totals: { ...rolling().totals, non2xx: 2 } })), [
    'rolling-restart  non-2xx  none',
  ]);
  assert.deepEqual(failedLines(expected, rollingShape({ ...rolling(), pidsAfter: [102, 201, 202] })), [
    'rolling-restart  old-pids-answering-after  none',
  ]);
  assert.deepEqual(failedLines(expected, rollingShape({ ...rolling(), steps: rolling().steps.slice(0, 2) })), [
    'rolling-restart  workers-replaced  all',
  ]);
  assert.deepEqual(failedLines(expected, rollingShape({ ...rolling(), duringRestart: 0 })), [
    'rolling-restart  requests-during-restart  some',
  ]);
});
