// Proves the sim-vs-lab shape rules on fixed results: a lab and a simulation that agree match the
// expected file; each rule fails on a pair that breaks it (a different order of the policies by
// p95 or by throughput, round robin's p95 more than 2x apart, lab errors); ties in the lab are not an order.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { DegradedResult, PolicyRun } from '../../results/degraded/report.ts';
import { render, rrOverLc, sameOrder, shape, type SimVsLabResult } from '../../results/sim-vs-lab/report.ts';
import { MACHINE } from '../fixtures/results.ts';
import { expectedShape, failedLines, failOnWarnings } from '../helpers.ts';

failOnWarnings();

const run = (policy: string, throughput: number, p50: number, p95: number, app3: number): PolicyRun => ({
  policy,
  throughput,
  p50,
  p95,
  p99: p95 * 1.2,
  errors: 0,
  perReplica: { app1: 500, app2: 500, app3 },
  generatorCpu: 0.3,
});

const degraded = (balancer: string, runs: PolicyRun[]): DegradedResult => ({
  machine: MACHINE,
  balancer,
  degraded: 'app3',
  hog: { route: '/stall?ms=30', connections: 3 },
  load: { connections: 6, durationS: 1, repetitions: 1 },
  policies: runs,
});

// Numbers like a healthy --quick run on the 2-core machine.
const healthy = (): SimVsLabResult => ({
  machine: MACHINE,
  lab: degraded('builtin', [
    run('round-robin', 119, 4.7, 165, 42),
    run('least-connections', 1806, 1.5, 6.1, 14),
    run('random', 111, 5.5, 188, 36),
    run('power-of-two-choices', 1839, 1.1, 5.6, 21),
  ]),
  sim: degraded('the simulated balancer', [
    run('round-robin', 161, 5.2, 152, 484),
    run('least-connections', 1083, 3.5, 10.3, 114),
    run('random', 159, 5.5, 152, 468),
    run('power-of-two-choices', 981, 3.6, 10.8, 166),
  ]),
  calibration: {
    direct: { p50: 0.18, p95: 0.57, samples: 3369 },
    replicaCpuMs: 0.07,
    path: { p50: 3.4, p95: 9.2, throughput: 1429, connections: 6 },
    hogMs: 30,
    pathQueue: { meanMs: 0.41, stallShare: 0.03, stallMs: 5.8, fitted: { p50: 3.4, p95: 9.1, throughput: 1431 } },
  },
  seed: 1,
  loop: 'turns',
  simRequests: 100_000,
  simWallMs: 450,
});

const set = (r: DegradedResult, policy: string, patch: Partial<PolicyRun>) => {
  Object.assign(r.policies.find((p) => p.policy === policy)!, patch);
};

test('a lab and a simulation that agree print the expected shape', () => {
  assert.deepEqual(shape(healthy()), expectedShape('sim-vs-lab'));
});

test('sameOrder: pairs within the tie factor in the lab may come in either order; clear pairs may not', () => {
  assert.equal(sameOrder({ a: 10, b: 11, c: 100 }, { a: 12, b: 9, c: 90 }), true); // a, b tied
  assert.equal(sameOrder({ a: 10, b: 100 }, { a: 100, b: 10 }), false);
  assert.equal(sameOrder({ a: 10, b: 21 }, { a: 20, b: 10 }), false); // 2.1x apart is clear
  assert.equal(sameOrder({ a: 10, b: 19 }, { a: 20, b: 10 }), true); // 1.9x apart is a tie
  assert.equal(sameOrder({ a: 10, b: 100 }, { a: 50, b: 50 }), false); // the model must order them, not tie them
});

test('a simulation that ranks round robin above least connections on p95 breaks the p95 order', () => {
  const r = healthy();
  set(r.sim, 'round-robin', { p95: 5 });
  assert.ok(failedLines(expectedShape('sim-vs-lab'), shape(r)).includes('policies-by-p95  lab-vs-sim  same-order'));
  const swapped = healthy(); // random and two choices swap places, the ratio untouched
  set(swapped.sim, 'random', { p95: 4 });
  assert.deepEqual(failedLines(expectedShape('sim-vs-lab'), shape(swapped)), [
    'policies-by-p95  lab-vs-sim  same-order',
  ]);
});

test('a simulation where random out-serves two choices breaks the throughput order', () => {
  const r = healthy();
  set(r.sim, 'random', { throughput: 2000 });
  assert.ok(
    failedLines(expectedShape('sim-vs-lab'), shape(r)).includes('policies-by-throughput  lab-vs-sim  same-order'),
  );
});

test("round robin's p95 more than 2x apart (either way) breaks its line; within 2x holds, whatever least connections does", () => {
  const r = healthy();
  const line = 'round-robin-p95  lab-vs-sim  within-2x';
  set(r.sim, 'least-connections', { p95: r.sim.policies.find((p) => p.policy === 'least-connections')!.p95 * 3 }); // the rr/lc ratios 3x apart: not this line's business
  assert.deepEqual(failedLines(expectedShape('sim-vs-lab'), shape(r)), []);
  const low = healthy();
  set(low.sim, 'round-robin', { p95: 60 }); // 60 against the lab's 165
  assert.deepEqual(failedLines(expectedShape('sim-vs-lab'), shape(low)), [line]);
  const high = healthy();
  set(high.sim, 'round-robin', { p95: 400 });
  assert.ok(failedLines(expectedShape('sim-vs-lab'), shape(high)).includes(line));
  const none = healthy();
  none.sim.policies = none.sim.policies.filter((p) => p.policy !== 'round-robin');
  assert.ok(
    failedLines(expectedShape('sim-vs-lab'), shape(none)).includes(line),
    'a missing round robin is not within anything',
  );
  assert.ok(rrOverLc(r.lab)! > 1, 'the ratio is still computed for the table');
});

test('lab errors break the errors line', () => {
  const r = healthy();
  set(r.lab, 'random', { errors: 3 });
  assert.deepEqual(failedLines(expectedShape('sim-vs-lab'), shape(r)), ['lab  errors  none']);
});

test('render puts lab and simulation side by side, with the ratios and what was fed in', () => {
  const text = render(healthy(), false);
  assert.match(text, /req\/s lab .* req\/s sim/);
  assert.match(text, /round robin p95 \/ least connections p95: lab 27\.0×, simulation 14\.8×/);
  assert.match(text, /its round trip over one connection/);
  assert.match(text, /served in turns/);
  assert.doesNotMatch(text, /\u001b\[/);
});
