// Proves the blocking experiment's shape rules and table on fixed results: a healthy run matches
// expected-output/blocking.txt, and each rule fails on a result that breaks it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { caveats, classifyDelay, classifyLight, render, shape } from '../../results/blocking/report.ts';
import { compareShape } from '../../results/report/shape.ts';
import { blockingResult } from '../fixtures/results.ts';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expectedShape, failedLines, failOnWarnings, ROOT } from '../helpers.ts';

failOnWarnings();
const expected = expectedShape('blocking');
const holds = (r: ReturnType<typeof blockingResult>) => compareShape(expected, shape(r)).holds;

test('a healthy result prints exactly the expected shape', () => {
  assert.deepEqual(shape(blockingResult()), expected);
});

test('classifyLight: waited, at once (within 10x its idle time), and the grey zone between', () => {
  assert.equal(classifyLight(1150, 1200, 50, 2.5), 'waited-for-heavy');
  assert.equal(classifyLight(4, 1200, 50, 2.5), 'answered-at-once');
  assert.equal(classifyLight(25, 1200, 50, 2.5), 'answered-at-once');
  assert.equal(classifyLight(26, 1200, 50, 2.5), 'in-between');
  assert.equal(classifyLight(300, 1200, 50, 2.5), 'in-between');
});

test('a pooled light request of 100 ms no longer counts as at once, whatever the heavy one took', () => {
  const r = blockingResult();
  r.blocks[1]!.lightMs[0] = 100; // under a tenth of the 1.2 s heavy request, but 40x its idle time
  assert.deepEqual(
    compareShape(expected, shape(r))
      .lines.filter((l) => l.status === 'failed')
      .map((l) => l.expected),
    ['pooled  light-1  answered-at-once'],
  );
});

test('classifyDelay: near the heavy duration, far below it, or between', () => {
  assert.equal(classifyDelay(1190, 1200), 'near-heavy-duration');
  assert.equal(classifyDelay(5, 1200), 'far-below-heavy-duration');
  assert.equal(classifyDelay(400, 1200), 'in-between');
});

test('a heavy request too short to overlap the light ones fails, and says why', () => {
  const r = blockingResult();
  r.blocks[0]!.heavyMs = 60; // a tiny --cost: heavy − offset is 10 ms
  r.blocks[0]!.lightMs = [2, 2, 2, 2];
  assert.equal(classifyLight(2, 60, 50, 2.5), 'heavy-too-short');
  assert.equal(holds(r), false);
  assert.match(caveats(r).join(' '), /too short .* larger --cost/);
  assert.deepEqual(caveats(blockingResult()), []);
});

test('fails when a light request on the blocking route did not wait', () => {
  const r = blockingResult();
  r.blocks[0]!.lightMs[2] = 3;
  const cmp = compareShape(expected, shape(r));
  assert.equal(cmp.holds, false);
  assert.deepEqual(
    cmp.lines.filter((l) => l.status === 'failed').map((l) => l.expected),
    ['blocking  light-3  waited-for-heavy'],
  );
});

test('fails when a light request on the pooled route waited', () => {
  const r = blockingResult();
  r.blocks[1]!.lightMs[0] = 1100;
  assert.equal(holds(r), false);
});

test('fails when the event-loop delay does not reflect the block', () => {
  const r = blockingResult();
  r.blocks[0]!.eventLoopDelayMaxMs = 0; // the bug an empty delay window once caused
  assert.equal(holds(r), false);
  const p = blockingResult();
  p.blocks[1]!.eventLoopDelayMaxMs = 900;
  assert.equal(holds(p), false);
});

test('fails when the heavy request took very different times in the two blocks', () => {
  const r = blockingResult();
  r.blocks[1]!.heavyMs = 5000;
  r.blocks[1]!.lightMs = [3, 3, 3, 3];
  assert.equal(holds(r), false);
});

test('render: the table without colour, exactly', () => {
  const text = render(blockingResult(), false);
  assert.equal(
    text,
    [
      'Lesson 3 · blocking: one heavy scrypt, then 4 light requests 50 ms later',
      'heavy cost N=2^16,r=8,p=8 · 2 cores (0.05 busy before the run), load average 0.50, Node 20.20.2',
      '┌──────────────────────┬────────────────────────────┬─────────────────────────────┐',
      '│                      │            verify-blocking │               verify-pooled │',
      '│                      │ (scrypt on the event loop) │ (scrypt on the thread pool) │',
      '│ heavy request        │                   1,200 ms │                    1,210 ms │',
      '│ light-1 (/books)     │           1,151 ms  waited │                     3.50 ms │',
      '│ light-2 (/books)     │           1,150 ms  waited │                     4.10 ms │',
      '│ light-3 (/books)     │           1,150 ms  waited │                     4.90 ms │',
      '│ light-4 (/books)     │           1,150 ms  waited │                     5.60 ms │',
      '│ event-loop delay max │           1,190 ms  waited │                     4.20 ms │',
      '└──────────────────────┴────────────────────────────┴─────────────────────────────┘',
      'A light request waited when it took at least half of (heavy − 50 ms): it sat behind the heavy one. It answered at once when it took at most 10× what the same requests took with nothing else running (2.50 ms).',
    ].join('\n'),
  );
  assert.doesNotMatch(text, /\x1b\[/, 'no ANSI codes without colour');
  assert.match(render(blockingResult(), true), /\x1b\[/, 'colour when asked');
});

test('with --profile: scrypt heaviest in the blocking half and off the main thread in the pooled one, each able to fail', () => {
  const profiled = readFileSync(path.join(ROOT, 'expected-output', 'profile', 'blocking.txt'), 'utf8')
    .trim()
    .split('\n');
  const fn = (functionName: string, share: number) => ({
    functionName,
    where: 'node:internal/crypto/scrypt:1',
    selfMs: share * 1000,
    share,
  });
  const withProfile = (blocking: ReturnType<typeof fn>[], pooled: ReturnType<typeof fn>[]) => ({
    ...blockingResult(),
    profile: {
      windows: [
        { label: 'blocking', samples: 1000, top: blocking },
        { label: 'pooled', samples: 1000, top: pooled },
      ],
    },
  });
  const healthy = withProfile([fn('scryptSync', 0.9), fn('(idle)', 0.05)], [fn('(idle)', 0.95), fn('scrypt', 0.01)]);
  assert.deepEqual(shape(healthy), [...expected, ...profiled]);
  // The route made pooled: nothing of scrypt on the main thread in the blocking half either.
  const bothPooled = withProfile([fn('(idle)', 0.9), fn('parserOnHeadersComplete', 0.05)], [fn('(idle)', 0.95)]);
  assert.deepEqual(failedLines([...expected, ...profiled], shape(bothPooled)), [
    'profile  blocking  heaviest-self-frame  scrypt',
  ]);
  // The pooled route made blocking: scrypt holds the main thread in both halves.
  const bothBlocking = withProfile([fn('scryptSync', 0.9)], [fn('scryptSync', 0.85), fn('(idle)', 0.1)]);
  assert.deepEqual(failedLines([...expected, ...profiled], shape(bothBlocking)), [
    'profile  pooled  scrypt-on-main-thread  none',
  ]);
  // Without --profile the run prints no profile line.
  assert.equal(
    shape(blockingResult()).some((l) => l.startsWith('profile')),
    false,
  );
});

test('render: event-loop utilization beside the delay when the run kept it, not otherwise', () => {
  const r = blockingResult();
  assert.doesNotMatch(render(r, false), /utilization/);
  r.blocks[0]!.eventLoopUtilization = 0.968;
  r.blocks[1]!.eventLoopUtilization = 0.031;
  assert.match(render(r, false), /│ event-loop utilization +│ +97 % │ +3 % │/);
});
