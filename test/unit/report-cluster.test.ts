// Proves the cluster experiment's shape rules on fixed results: a healthy run matches
// expected-output/cluster.txt and each of the four findings fails on a result that breaks it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { countersVerdict, freshVerdict, render, shape, spread } from '../../results/cluster/report.ts';
import { clusterResult } from '../fixtures/results.ts';
import { expectedShape, failedLines, failOnWarnings } from '../helpers.ts';

failOnWarnings();
const expected = expectedShape('cluster');
const failed = (r: ReturnType<typeof clusterResult>) => failedLines(expected, shape(r));

test('a healthy result prints exactly the expected shape', () => {
  assert.deepEqual(shape(clusterResult()), expected);
});

test('spread: largest first, idle workers count as 0', () => {
  assert.equal(spread({ a: 4, b: 4, c: 4 }, 3), '4/4/4');
  assert.equal(spread({ a: 6, b: 6 }, 3), '6/6/0');
});

test('fails when fresh connections are not spread evenly', () => {
  const r = clusterResult();
  r.fresh.byPid = { '101': 6, '102': 6 };
  assert.equal(freshVerdict(r), 'uneven-6/6/0');
  assert.deepEqual(failed(r), ['fresh-connections  4-loans-per-worker  4-on-every-worker']);
  r.fresh.byPid = { '101': 5, '102': 4, '103': 3 };
  assert.deepEqual(failed(r), ['fresh-connections  4-loans-per-worker  4-on-every-worker']);
});

test('an even spread over any worker count holds the same line (--workers 4: 16 loans, 4/4/4/4)', () => {
  const r = clusterResult();
  r.workers = 4;
  r.fresh = { requests: 16, byPid: { '101': 4, '102': 4, '103': 4, '104': 4 } };
  r.counters = { total: 20, byPid: { '101': 5, '102': 5, '103': 5, '104': 5 } };
  assert.deepEqual(shape(r), expected);
  r.fresh.byPid = { '101': 4, '102': 4, '103': 4, '104': 3, '105': 1 };
  assert.deepEqual(failed(r), ['fresh-connections  4-loans-per-worker  4-on-every-worker']);
});

test('fails when one worker saw every loan, or the counters do not add up', () => {
  const r = clusterResult();
  r.counters.byPid = { '101': 16 };
  assert.equal(countersVerdict(r.counters), 'one-worker-saw-the-total');
  assert.deepEqual(failed(r), ['counters  after-every-loan  no-worker-saw-the-total']);
  r.counters.byPid = { '101': 5, '102': 5, '103': 5 };
  assert.equal(countersVerdict(r.counters), 'do-not-add-up');
});

test('fails when the replacement has an old pid, requests failed, or it kept a count', () => {
  const same = clusterResult();
  same.kill.newPid = 102;
  assert.deepEqual(failed(same), ['kill-worker  replacement  new-pid']);
  const lost = clusterResult();
  lost.kill.answeredAfter = 4;
  assert.deepEqual(failed(lost), ['kill-worker  after-replacement  all-answered']);
  const counted = clusterResult();
  counted.kill.newWorkerCounter = 3;
  assert.deepEqual(failed(counted), ['kill-worker  new-worker-counter  starts-at-zero']);
  const silent = clusterResult();
  silent.kill.newWorkerCounter = undefined;
  assert.deepEqual(failed(silent), ['kill-worker  new-worker-counter  starts-at-zero']);
});

test('fails when keep-alive requests spread over workers or did not share one connection', () => {
  const spreadOut = clusterResult();
  spreadOut.keepAlive.byPid = { '102': 15, '103': 15 };
  assert.deepEqual(failed(spreadOut), ['keep-alive  30-requests-one-connection  all-on-one-worker']);
  const fresh = clusterResult();
  fresh.keepAlive.reusedSocket = 0; // one worker by luck, but not over one connection
  assert.deepEqual(failed(fresh), ['keep-alive  30-requests-one-connection  all-on-one-worker']);
});

test('render: one row per pid, the killed worker and its replacement marked', () => {
  const text = render(clusterResult(), false);
  for (const pid of ['101', '102', '103', '104']) assert.match(text, new RegExp(`│\\s+${pid} │`));
  assert.match(text, /killed \(SIGKILL\)/);
  assert.match(text, /replacement, counter 0/);
  assert.doesNotMatch(text, /\x1b\[/);
});
