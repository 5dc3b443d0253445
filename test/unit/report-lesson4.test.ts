// Proves the shape rules of distribution and degraded (lesson 4) and scale-out (lesson 5) on fixed
// results: healthy runs match the expected files, and each rule fails on a result that breaks it
// (a replica left out, round robin not exact, a tail that is not there, a load-aware policy as slow
// as round robin, errors, throughput that keeps growing past the core count).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  evenness,
  orderVerdict,
  render as renderDistribution,
  shape as distributionShape,
  type DistributionResult,
} from '../../results/distribution/report.ts';
import {
  caveats as degradedCaveats,
  render as renderDegraded,
  shape as degradedShape,
  type DegradedResult,
  type PolicyRun,
} from '../../results/degraded/report.ts';
import {
  notShown as scaleNotShown,
  render as renderScale,
  shape as scaleShape,
  type ScaleOutResult,
  type ScaleStep,
} from '../../results/scale-out/report.ts';
import { CANNOT_SHOW } from '../../results/report/shape.ts';
import { MACHINE } from '../fixtures/results.ts';
import { expectedShape, failedLines, failOnWarnings } from '../helpers.ts';

failOnWarnings();

/** An order of `n` answers with the given counts per replica, shuffled by a fixed permutation (not in turn). */
const mixed = (counts: Record<string, number>): string[] => {
  const flat = Object.entries(counts).flatMap(([r, n]) => Array.from({ length: n }, () => r));
  return flat.map((_, i) => flat[(i * 7) % flat.length]!);
};
const inTurn = (n: number, names = ['app1', 'app2', 'app3']) =>
  Array.from({ length: n }, (_, i) => names[i % names.length]!);
/** 30 answers avoiding `busy` (least connections, two choices). */
const avoiding = (busy: string) => {
  const [a, b] = ['app1', 'app2', 'app3'].filter((r) => r !== busy);
  return mixed({ [a!]: 15, [b!]: 15 });
};

const distribution = (): DistributionResult => ({
  machine: MACHINE,
  balancer: 'builtin',
  replicas: ['app1', 'app2', 'app3'],
  requests: 30,
  byPolicy: {
    'round-robin': { order: inTurn(30), busy: 'app2', withBusy: inTurn(30), heldThroughout: true },
    'least-connections': {
      order: mixed({ app1: 12, app2: 9, app3: 9 }),
      busy: 'app3',
      withBusy: avoiding('app3'),
      heldThroughout: true,
    },
    // Exactly even by luck, but not in turn: still random.
    random: {
      order: mixed({ app1: 10, app2: 10, app3: 10 }),
      busy: 'app1',
      withBusy: mixed({ app1: 9, app2: 11, app3: 10 }),
      heldThroughout: true,
    },
    'power-of-two-choices': {
      order: mixed({ app1: 6, app2: 13, app3: 11 }),
      busy: 'app1',
      withBusy: avoiding('app1'),
      heldThroughout: true,
    },
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
  policies: [
    run('round-robin', 120, 5, 156, 100),
    run('least-connections', 2500, 1.1, 4.4, 3),
    run('random', 115, 5, 170, 100),
    run('power-of-two-choices', 5000, 0.4, 1.2, 2),
  ],
});

const step = (replicas: number, throughput: number): ScaleStep => ({
  replicas,
  throughput,
  mean: 20,
  p95: 40,
  failedChecks: 0,
  requests: throughput,
  generatorCpu: 0.1,
  busyCores: 1.8,
  perReplica: Object.fromEntries(
    Array.from({ length: replicas }, (_, i) => [`app${i + 1}`, Math.round(throughput / replicas)]),
  ),
});
const scale = (): ScaleOutResult => ({
  machine: MACHINE,
  balancer: 'builtin',
  load: { connections: 8, durationS: 2 },
  workloads: [
    {
      name: 'user-scenario',
      description: 'create then read',
      steps: [step(1, 950), step(2, 930), step(3, 900), step(5, 940)],
    },
    { name: 'cpu-bound', description: '/work', steps: [step(1, 184), step(2, 292), step(3, 285), step(5, 295)] },
  ],
});

test('distribution: healthy runs match; round robin must be exact; a replica left out fails', () => {
  const expected = expectedShape('distribution');
  assert.deepEqual(distributionShape(distribution()), expected);
  const offByOne = distribution();
  offByOne.byPolicy['round-robin']!.order = [...inTurn(29), 'app1'];
  assert.deepEqual(failedLines(expected, distributionShape(offByOne)), [
    'round-robin  30-requests  10/10/10',
    'round-robin  order  in-turn',
  ]);
  const leftOut = distribution();
  leftOut.byPolicy.random!.order = mixed({ app1: 15, app2: 15 });
  assert.deepEqual(failedLines(expected, distributionShape(leftOut)), ['random  30-requests  roughly-even']);
  assert.equal(evenness({ a: 1, b: 14, c: 15 }, ['a', 'b', 'c'], 30), 'uneven');
  assert.equal(evenness({ a: 2, b: 14, c: 14 }, ['a', 'b', 'c'], 30), 'roughly-even');
  assert.match(renderDistribution(distribution(), false), /exactly-even/);
});

test('distribution: a policy that degenerated into another fails its order or busy-replica line', () => {
  const expected = expectedShape('distribution');
  const names = ['app1', 'app2', 'app3'];
  assert.equal(orderVerdict(inTurn(30), names), 'in-turn');
  assert.equal(orderVerdict(inTurn(30, ['app2', 'app3', 'app1']), names), 'in-turn');
  assert.equal(orderVerdict(mixed({ app1: 10, app2: 10, app3: 10 }), names), 'not-in-turn');
  assert.equal(
    orderVerdict(inTurn(30, ['app1', 'app1', 'app2']), names),
    'not-in-turn',
    'a cycle that leaves a replica out is not round robin',
  );
  // random that became round robin: exact and in turn
  const rrRandom = distribution();
  rrRandom.byPolicy.random = { order: inTurn(30), busy: 'app1', withBusy: inTurn(30), heldThroughout: true };
  assert.deepEqual(failedLines(expected, distributionShape(rrRandom)), ['random  order  not-in-turn']);
  // round robin that became random
  const randomRr = distribution();
  randomRr.byPolicy['round-robin'] = {
    order: mixed({ app1: 10, app2: 10, app3: 10 }),
    busy: 'app1',
    withBusy: mixed({ app1: 12, app2: 9, app3: 9 }),
    heldThroughout: true,
  };
  assert.deepEqual(failedLines(expected, distributionShape(randomRr)), ['round-robin  order  in-turn']);
  // round robin that reads load (least connections with its ties in turn, as nginx breaks them)
  const lcRr = distribution();
  lcRr.byPolicy['round-robin']!.withBusy = avoiding('app2');
  assert.deepEqual(failedLines(expected, distributionShape(lcRr)), [
    'round-robin  30-requests-with-one-replica-busy  some-to-the-busy-one',
  ]);
  // least connections or two choices that stopped reading load
  const blind = distribution();
  blind.byPolicy['least-connections']!.withBusy = inTurn(30);
  blind.byPolicy['power-of-two-choices']!.withBusy = mixed({ app1: 1, app2: 15, app3: 14 });
  assert.deepEqual(failedLines(expected, distributionShape(blind)), [
    'least-connections  30-requests-with-one-replica-busy  none-to-the-busy-one',
    'power-of-two-choices  30-requests-with-one-replica-busy  none-to-the-busy-one',
  ]);
  // random that never picks the busy one is reading load: not random
  const aware = distribution();
  aware.byPolicy.random!.withBusy = avoiding('app1');
  assert.deepEqual(failedLines(expected, distributionShape(aware)), [
    'random  30-requests-with-one-replica-busy  some-to-the-busy-one',
  ]);
  // a long request that ended before the sequence did proves nothing
  const short = distribution();
  short.byPolicy['least-connections']!.heldThroughout = false;
  assert.deepEqual(failedLines(expected, distributionShape(short)), [
    'least-connections  30-requests-with-one-replica-busy  none-to-the-busy-one',
  ]);
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
    'power-of-two-choices  p95-vs-own-p50  close',
    'power-of-two-choices  blocked-replica-share  under-5-percent',
  ]);

  // least connections that stopped reading load: the blocked replica gets its third, the tail follows
  const lcBlind = degraded();
  lcBlind.policies[1] = run('least-connections', 2500, 1.1, 30, 100);
  assert.deepEqual(failedLines(expected, degradedShape(lcBlind)), [
    'round-robin  p95-vs-load-aware-policies  order-of-magnitude-higher',
    'random  p95-vs-load-aware-policies  order-of-magnitude-higher',
    'least-connections  p95-vs-own-p50  close',
    'least-connections  blocked-replica-share  under-5-percent',
  ]);
  // round robin that skips the blocked replica (it reads load after all)
  const rrAware = degraded();
  rrAware.policies[0] = run('round-robin', 120, 5, 156, 4);
  assert.deepEqual(failedLines(expected, degradedShape(rrAware)), [
    'round-robin  blocked-replica-share  about-a-third',
  ]);
  // random that sends the blocked replica more than half
  const heavy = degraded();
  heavy.policies[2] = run('random', 115, 5, 170, 250);
  assert.deepEqual(failedLines(expected, degradedShape(heavy)), ['random  blocked-replica-share  about-a-third']);

  const noTail = degraded(); // round robin slow everywhere, not only in its tail
  noTail.policies[0] = run('round-robin', 120, 60, 156, 100);
  assert.deepEqual(failedLines(expected, degradedShape(noTail)), [
    'round-robin  p95-vs-own-p50  order-of-magnitude-higher',
  ]);

  const errors = degraded();
  errors.policies[1]!.errors = 3;
  assert.deepEqual(failedLines(expected, degradedShape(errors)), ['all-policies  errors  none']);

  const text = renderDegraded(degraded(), false);
  assert.match(text, /app3 \(busy\)/);
  assert.match(text, /\/stall\?ms=30/);
  assert.deepEqual(degradedCaveats(degraded()), []);
  const sampled = { ...degraded(), twoChoices: 'with-replacement' as const };
  assert.match(renderDegraded(sampled, false), /two choices with-replacement/);
  assert.match(degradedCaveats(sampled).join(' '), /shape is expected not to hold/);
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

  const idle = scale(); // replicas that add nothing because the balancer sends them nothing
  idle.workloads[0]!.steps[3]!.perReplica = { app1: 900, app2: 40, app3: 0, app4: 0, app5: 0 };
  assert.deepEqual(failedLines(expected, scaleShape(idle)), ['user-scenario  requests-spread  every-replica-served']);
  const missing = scale(); // a replica that never answered is not in the counts at all
  missing.workloads[0]!.steps[1]!.perReplica = { app1: 930 };
  assert.deepEqual(failedLines(expected, scaleShape(missing)), [
    'user-scenario  requests-spread  every-replica-served',
  ]);

  const oneCore = scale();
  oneCore.machine = { ...MACHINE, cores: 1 };
  assert.match(scaleShape(oneCore).find((l) => l.startsWith('cpu-bound  up-to-core-count'))!, new RegExp(CANNOT_SHOW));
  assert.match(scaleNotShown(oneCore).join(' '), /1 core/);
  assert.match(renderScale(scale(), false), /2 ← core count/);
});
