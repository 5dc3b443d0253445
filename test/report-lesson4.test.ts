// Proves the lesson 4 shape rules on fixed results: healthy runs match the expected files, and
// each rule fails on a result that breaks it (a replica left out, round robin not exact, a tail
// that is not there, a load-aware policy as slow as round robin, errors, throughput that keeps
// growing past the core count).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { evenness, render as renderDistribution, shape as distributionShape, type DistributionResult } from '../measure/report/distribution.ts';
import { render as renderDegraded, shape as degradedShape, type DegradedResult, type PolicyRun } from '../measure/report/degraded.ts';
import { caveats as scaleCaveats, render as renderScale, shape as scaleShape, type ScaleOutResult, type ScaleStep } from '../measure/report/scale-out.ts';
import { CANNOT_SHOW } from '../measure/lib/shape.ts';
import { MACHINE } from './fixtures/results.ts';
import { expectedShape, failedLines, failOnWarnings } from './helpers.ts';

failOnWarnings();

const distribution = (): DistributionResult => ({
  machine: MACHINE,
  balancer: 'builtin',
  replicas: ['app1', 'app2', 'app3'],
  requests: 30,
  byPolicy: {
    'round-robin': { app1: 10, app2: 10, app3: 10 },
    'least-connections': { app1: 12, app2: 9, app3: 9 },
    random: { app1: 10, app2: 10, app3: 10 },
    'power-of-two-choices': { app1: 6, app2: 13, app3: 11 },
  },
});

const run = (policy: string, throughput: number, p50: number, p95: number, app3: number): PolicyRun => ({
  policy,
  throughput,
  p50,
  p95,
  p99: p95 * 1.2,
  errors: 0,
  perReplica: { app1: 100, app2: 100, app3 },
  generatorCpu: 0.2,
});

const degraded = (): DegradedResult => ({
  machine: MACHINE,
  balancer: 'builtin',
  degraded: 'app3',
  hog: { route: '/stall?ms=30', connections: 3 },
  load: { connections: 6, durationS: 2, repetitions: 3 },
  policies: [run('round-robin', 120, 5, 156, 100), run('least-connections', 2500, 1.1, 4.4, 3), run('random', 115, 5, 170, 100), run('power-of-two-choices', 5000, 0.4, 1.2, 2)],
});

const step = (replicas: number, throughput: number): ScaleStep => ({ replicas, throughput, mean: 20, p95: 40, failedChecks: 0, requests: throughput, generatorCpu: 0.1 });
const scale = (): ScaleOutResult => ({
  machine: MACHINE,
  balancer: 'builtin',
  load: { connections: 8, durationS: 2 },
  workloads: [
    { name: 'user-scenario', description: 'create then read', steps: [step(1, 950), step(2, 930), step(3, 900), step(5, 940)] },
    { name: 'cpu-bound', description: '/work', steps: [step(1, 184), step(2, 292), step(3, 285), step(5, 295)] },
  ],
});

test('distribution: healthy runs match; round robin must be exact; a replica left out fails', () => {
  const expected = expectedShape('distribution');
  assert.deepEqual(distributionShape(distribution()), expected);
  const offByOne = distribution();
  offByOne.byPolicy['round-robin'] = { app1: 11, app2: 10, app3: 9 };
  assert.deepEqual(failedLines(expected, distributionShape(offByOne)), ['round-robin  30-requests  10/10/10']);
  const leftOut = distribution();
  leftOut.byPolicy.random = { app1: 15, app2: 15 };
  assert.deepEqual(failedLines(expected, distributionShape(leftOut)), ['random  30-requests  roughly-even']);
  assert.equal(evenness({ a: 1, b: 14, c: 15 }, ['a', 'b', 'c'], 30), 'uneven');
  assert.equal(evenness({ a: 2, b: 14, c: 14 }, ['a', 'b', 'c'], 30), 'roughly-even');
  assert.match(renderDistribution(distribution(), false), /exactly-even/);
});

test('degraded: a healthy run matches; each finding fails when broken', () => {
  const expected = expectedShape('degraded');
  assert.deepEqual(degradedShape(degraded()), expected);

  const awareSlow = degraded(); // two choices as slow as round robin: the p95 gap is gone
  awareSlow.policies[3] = run('power-of-two-choices', 130, 0.5, 150, 100);
  assert.deepEqual(failedLines(expected, degradedShape(awareSlow)), [
    'round-robin  p95-vs-load-aware-policies  order-of-magnitude-higher',
    'round-robin  throughput-vs-load-aware-policies  much-lower',
    'random  p95-vs-load-aware-policies  order-of-magnitude-higher',
    'random  throughput-vs-load-aware-policies  much-lower',
  ]);

  const noTail = degraded(); // round robin slow everywhere, not only in its tail
  noTail.policies[0] = run('round-robin', 120, 60, 156, 100);
  assert.deepEqual(failedLines(expected, degradedShape(noTail)), ['round-robin  p95-vs-own-p50  order-of-magnitude-higher']);

  const errors = degraded();
  errors.policies[1]!.errors = 3;
  assert.deepEqual(failedLines(expected, degradedShape(errors)), ['all-policies  errors  none']);

  const text = renderDegraded(degraded(), false);
  assert.match(text, /app3 \(busy\)/);
  assert.match(text, /\/stall\?ms=30/);
});

test('scale-out: a healthy run matches; growth past the cores, no growth, failed checks all fail', () => {
  const expected = expectedShape('scale-out');
  assert.deepEqual(scaleShape(scale()), expected);

  const wallClock = scale(); // the bug a wall-clock busy loop caused: more replicas, more "CPU" work
  wallClock.workloads[1]!.steps = [step(1, 179), step(2, 324), step(3, 357), step(5, 420)];
  assert.deepEqual(failedLines(expected, scaleShape(wallClock)), ['cpu-bound  past-core-count  flat']);

  const flat = scale();
  flat.workloads[1]!.steps = [step(1, 184), step(2, 200), step(3, 205), step(5, 210)];
  assert.deepEqual(failedLines(expected, scaleShape(flat)), ['cpu-bound  up-to-core-count  grows']);

  const failing = scale();
  failing.workloads[0]!.steps[2]!.failedChecks = 4;
  assert.deepEqual(failedLines(expected, scaleShape(failing)), ['user-scenario  failed-checks  none']);

  const oneCore = scale();
  oneCore.machine = { ...MACHINE, cores: 1 };
  assert.match(scaleShape(oneCore)[0]!, new RegExp(CANNOT_SHOW));
  assert.match(scaleCaveats(oneCore).join(' '), /1 core/);
  assert.match(renderScale(scale(), false), /2 ← core count/);
});
