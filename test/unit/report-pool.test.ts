// Proves the pool experiment's shape rules on fixed results: a healthy run matches
// expected-output/pool.txt, each rule fails on a result that breaks it, and a 1-core machine is
// reported as "not shown" rather than failed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { caveats, growthVerdict, notShown, plateauVerdict, render, shape } from '../../results/pool/report.ts';
import { CANNOT_SHOW, compareShape } from '../../results/report/shape.ts';
import { poolResult, step } from '../fixtures/results.ts';
import { expectedShape, failedLines, failOnWarnings } from '../helpers.ts';
import { sweepConnections } from '../../measure/lib/load/sweep.ts';

failOnWarnings();
const expected = expectedShape('pool');
const failedKeys = (r: ReturnType<typeof poolResult>) => failedLines(expected, shape(r));

test('a healthy result prints exactly the expected shape', () => {
  assert.deepEqual(shape(poolResult()), expected);
  assert.deepEqual(caveats(poolResult()), []);
});

test('fails when the small pooled task did not wait with 4 threads', () => {
  const r = poolResult();
  r.waits[0]!.lightMs = 30;
  assert.deepEqual(failedKeys(r), ['pool-4-threads  verify-light  waited-for-a-pool-thread']);
});

test('with 8 threads, a small task slowed by sharing the cores still counts as at once; a real wait does not', () => {
  const r = poolResult();
  r.waits[1]!.lightMs = 10 * r.waits[1]!.idleLightMs; // 40 ms: slower than idle, but no queue
  assert.deepEqual(failedKeys(r), []);
  r.waits[1]!.lightMs = 0.2 * r.heavyReferenceMs; // 500 ms: under a quarter of the heavy one, still no "at once"
  assert.deepEqual(failedKeys(r), ['pool-8-threads  verify-light  got-a-thread-at-once']);
});

test('a /books of 600 ms is not "at once" (it was, as a quarter of a 2.5 s heavy request)', () => {
  const r = poolResult();
  r.waits[1]!.booksMs = 600;
  assert.deepEqual(failedKeys(r), ['pool-8-threads  books  answered-at-once']);
  r.waits[1]!.booksMs = 12; // 10x its idle 1.2 ms
  assert.deepEqual(failedKeys(r), []);
});

test('fails when the small pooled task waited with 8 threads', () => {
  const r = poolResult();
  r.waits[1]!.lightMs = 2400;
  assert.deepEqual(failedKeys(r), ['pool-8-threads  verify-light  got-a-thread-at-once']);
});

test('fails when /books waited (the event loop was blocked)', () => {
  const r = poolResult();
  r.waits[0]!.booksMs = 2000;
  assert.deepEqual(failedKeys(r), ['pool-4-threads  books  answered-at-once']);
});

test('fails when throughput does not grow up to the core count', () => {
  const r = poolResult();
  r.sweep.steps = [step(1, 50), step(2, 54), step(4, 55), step(8, 52)];
  assert.equal(growthVerdict(r), 'does-not-grow');
  assert.deepEqual(failedKeys(r), ['throughput  up-to-core-count  grows']);
});

test('fails when throughput keeps growing past the core count', () => {
  const r = poolResult();
  r.sweep.steps = [step(1, 28), step(2, 54), step(4, 90), step(8, 100)];
  assert.equal(plateauVerdict(r), 'keeps-growing');
  assert.deepEqual(failedKeys(r), ['throughput  past-core-count  flat']);
});

test('one core: growth is "not shown", with a sentence saying why, and the shape still holds', () => {
  const r = poolResult();
  r.machine = { ...r.machine, cores: 1 };
  r.sweep.steps = [step(1, 28), step(2, 29), step(4, 28), step(8, 27)];
  assert.equal(growthVerdict(r), CANNOT_SHOW);
  const cmp = compareShape(expected, shape(r));
  assert.equal(cmp.holds, true);
  assert.deepEqual(
    cmp.lines.filter((l) => l.status === 'not-shown').map((l) => l.expected),
    ['throughput  up-to-core-count  grows'],
  );
  assert.match(notShown(r).join(' '), /1 core/);
});

test('sweep connections always reach past the core count', () => {
  assert.deepEqual(sweepConnections(2), [1, 2, 4]);
  assert.deepEqual(sweepConnections(1), [1, 2]);
  assert.deepEqual(sweepConnections(6), [1, 2, 6, 12]);
  assert.deepEqual(sweepConnections(16), [1, 2, 16, 32]);
});

test('a busy load generator is reported', () => {
  const r = poolResult();
  r.sweep.steps[3]!.generatorCpu = 0.8;
  assert.match(caveats(r).join(' '), /load generator/);
});

test('render: both tables, the core count marked, no colour codes', () => {
  const text = render(poolResult(), false);
  assert.match(text, /UV_THREADPOOL_SIZE/);
  assert.match(text, /2,450 ms {2}waited for a thread/);
  assert.match(text, /2 ← core count/);
  assert.match(text, /54\.0 req\/s/);
  assert.doesNotMatch(text, /\x1b\[/);
});
