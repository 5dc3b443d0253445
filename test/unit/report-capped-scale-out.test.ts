// Proves the capped-scale-out shape rules (results/capped-scale-out/report.ts) on invented results: a
// healthy run (the numbers measured in lesson 5's table) prints exactly the expected file, and
// each rule fails on a result that breaks it: uncapped replicas that stop at the core count, a
// database that is already full with one replica, a database that never fills (--commit-ms 0),
// errors; a 1-core machine cannot show it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { notShown, render, shape } from '../../results/capped-scale-out/report.ts';
import type { CappedScaleOutResult, CappedStep } from '../../results/capped-scale-out/result.ts';
import { CANNOT_SHOW } from '../../results/report/shape.ts';
import { MACHINE } from '../fixtures/results.ts';
import { expectedShape, failedLines, failOnWarnings } from '../helpers.ts';

failOnWarnings();

const at = (
  replicas: number,
  throughput: number,
  replicaCores: number,
  db: Partial<CappedStep['db']> = {},
): CappedStep => ({
  replicas,
  throughput,
  p50: 50,
  p95: 300,
  failedChecks: 0,
  requests: Math.round(throughput * 2),
  replicaCores,
  throttledShare: 0.3,
  db: { writes: 0, writesPerS: 0, lockBusy: 0, lockWaitMs: 0, lockHoldMs: 0, writeMs: 0, ...db },
  generatorCpu: 0.1,
  busyCores: 1.2,
});

/** A healthy run, as measured here (2 cores, cgroup v1, the kit's balancer). */
const healthy = (): CappedScaleOutResult => ({
  machine: MACHINE,
  balancer: 'builtin',
  cap: { cores: 0.2, periodMs: 20, mode: 'cgroup' },
  database: { kind: 'sqlite', commitMs: 16 },
  load: { connections: 8, durationS: 2 },
  workloads: [
    {
      name: 'cpu-bound',
      description: 'GET /work?ms=5',
      steps: [at(1, 33.9, 0.21), at(2, 65.7, 0.42), at(3, 98.7, 0.61), at(5, 169, 1.0)],
    },
    {
      name: 'user-scenario',
      description: 'POST /users then GET /users/:id, each with ?work=3',
      steps: [
        at(1, 49.2, 0.21, { writes: 67, writesPerS: 26.8, lockBusy: 0.44, lockWaitMs: 0.28, lockHoldMs: 16.3 }),
        at(2, 81.8, 0.35, { writes: 108, writesPerS: 43, lockBusy: 0.71, lockWaitMs: 9.26, lockHoldMs: 16.4 }),
        at(3, 89.8, 0.38, { writes: 113, writesPerS: 45.1, lockBusy: 0.74, lockWaitMs: 19.3, lockHoldMs: 16.4 }),
        at(5, 91.3, 0.4, { writes: 115, writesPerS: 46.1, lockBusy: 0.75, lockWaitMs: 40.2, lockHoldMs: 16.4 }),
      ],
    },
  ],
});

const expected = expectedShape('capped-scale-out');
const edit = (f: (r: CappedScaleOutResult) => void) => {
  const r = healthy();
  f(r);
  return failedLines(expected, shape(r));
};
const user = (r: CappedScaleOutResult) => r.workloads[1]!.steps;

test('capped-scale-out: a healthy run prints exactly the expected shape', () => {
  assert.deepEqual(shape(healthy()), expected);
});

test('capped-scale-out: replicas with no cap stop at the core count, and the cap line says why', () => {
  assert.deepEqual(
    edit((r) => (r.workloads[0]!.steps = [at(1, 184, 0.9), at(2, 350, 1.6), at(3, 352, 1.6), at(5, 355, 1.6)])),
    ['cpu-bound  5-replicas-vs-1  grows', 'cpu-bound  replica-cpu-at-1  at-cap'],
  );
});

test('capped-scale-out: on a machine of 16 cores, uncapped replicas grow 5× too; only the cap line fails', () => {
  const big = (r: CappedScaleOutResult) => {
    r.machine = { ...MACHINE, cores: 16 };
    r.workloads[0]!.steps = [at(1, 184, 0.95), at(2, 368, 1.9), at(3, 550, 2.85), at(5, 910, 4.75)];
  };
  assert.deepEqual(edit(big), ['cpu-bound  replica-cpu-at-1  at-cap']);
  assert.deepEqual(
    edit((r) => (r.workloads[0]!.steps[0]!.replicaCores = 0.27)),
    ['cpu-bound  replica-cpu-at-1  at-cap'],
  );
});

test('capped-scale-out: a database already full with one replica fails the growth before it', () => {
  assert.deepEqual(
    edit((r) => (user(r)[1]!.throughput = 60)),
    ['user-scenario  2-replicas-vs-1  grows'],
  );
});

test('capped-scale-out: a database that never fills (--commit-ms 0) fails all three database lines', () => {
  const measured = [
    at(1, 66, 0.2, { writes: 90, writesPerS: 33, lockBusy: 0.01, lockWaitMs: 0.01, lockHoldMs: 0.3 }),
    at(2, 130, 0.4, { writes: 180, writesPerS: 65, lockBusy: 0.02, lockWaitMs: 0.05, lockHoldMs: 0.3 }),
    at(3, 195, 0.6, { writes: 270, writesPerS: 98, lockBusy: 0.03, lockWaitMs: 0.1, lockHoldMs: 0.3 }),
    at(5, 320, 0.98, { writes: 440, writesPerS: 160, lockBusy: 0.05, lockWaitMs: 0.2, lockHoldMs: 0.3 }),
  ];
  assert.deepEqual(
    edit((r) => (r.workloads[1]!.steps = measured)),
    [
      'user-scenario  5-replicas-vs-3  flat',
      'user-scenario  database-at-5-replicas  full',
      'user-scenario  replicas-cpu-at-5  below-cap',
    ],
  );
});

test('capped-scale-out: each database line fails alone on its own cause', () => {
  assert.deepEqual(
    edit((r) => (user(r)[3]!.throughput = 115)),
    ['user-scenario  5-replicas-vs-3  flat'],
  );
  assert.deepEqual(
    edit((r) => (user(r)[3]!.db.lockBusy = 0.55)),
    ['user-scenario  database-at-5-replicas  full'],
  );
  // Waiting longer than holding is not enough: with no flush a rare collision sleeps 1 ms against a 0.3 ms hold.
  assert.deepEqual(
    edit((r) => Object.assign(user(r)[3]!.db, { lockBusy: 0.04, lockWaitMs: 1.2, lockHoldMs: 0.3 })),
    ['user-scenario  database-at-5-replicas  full'],
  );
  assert.deepEqual(
    edit((r) => (user(r)[3]!.replicaCores = 0.75)),
    ['user-scenario  replicas-cpu-at-5  below-cap'],
  );
  assert.deepEqual(
    edit((r) => r.workloads[1]!.steps.pop()),
    [
      'user-scenario  5-replicas-vs-3  flat',
      'user-scenario  database-at-5-replicas  full',
      'user-scenario  replicas-cpu-at-5  below-cap',
    ],
  );
});

test("capped-scale-out: a failed check or an error fails its workload's line", () => {
  assert.deepEqual(
    edit((r) => (user(r)[2]!.failedChecks = 1)),
    ['user-scenario  failed-checks  none'],
  );
  assert.deepEqual(
    edit((r) => (r.workloads[0]!.steps[0]!.failedChecks = 2)),
    ['cpu-bound  failed-checks  none'],
  );
});

test('capped-scale-out: a 1-core machine says it cannot show it; the table names the cap and the flush', () => {
  const one = healthy();
  one.machine = { ...MACHINE, cores: 1 };
  const lines = shape(one);
  assert.deepEqual(
    lines.filter((l) => !l.endsWith(CANNOT_SHOW)),
    ['cpu-bound  replica-cpu-at-1  at-cap', 'cpu-bound  failed-checks  none', 'user-scenario  failed-checks  none'],
  );
  assert.match(notShown(one).join(' '), /1 core/);
  assert.deepEqual(notShown(healthy()), []);
  const text = render(healthy(), false);
  assert.match(text, /held to 0\.2 core/);
  assert.match(text, /waits 16 ms for a modelled disk flush/);
  assert.match(text, /1\.00 of 1\.0/);
  assert.match(text, /busy handler/);
});

test('capped-scale-out --db postgres: the database lines are not shown, with the measured reason; the table shows its CPU and write time', () => {
  const pg = healthy();
  pg.database = { kind: 'postgres' };
  pg.workloads[1]!.steps = [
    at(1, 37.9, 0.21, { writes: 40, writesPerS: 20.1, writeMs: 85.5, cores: 0.06 }),
    at(2, 73.3, 0.41, { writes: 75, writesPerS: 37.7, writeMs: 42.3, cores: 0.03 }),
    at(3, 99.6, 0.59, { writes: 101, writesPerS: 50.6, writeMs: 28.6, cores: 0.08 }),
    at(5, 181, 1.0, { writes: 179, writesPerS: 89.6, writeMs: 18.7, cores: 0.09 }),
  ];
  const lines = shape(pg);
  assert.deepEqual(failedLines(expected, lines), []);
  for (const key of ['5-replicas-vs-3', 'database-at-5-replicas', 'replicas-cpu-at-5'])
    assert.ok(lines.includes(`user-scenario  ${key}  ${CANNOT_SHOW}`), key);
  assert.match(
    notShown(pg).join(' '),
    /PostgreSQL, a server with no single writer lock, does not fill within 5 replicas of 0\.2 core \(at 5 replicas it used 0\.09 core for 90 creates and reads a second, 1\.00 ms of CPU each\)/,
  );
  const text = render(pg, false);
  assert.match(text, /PostgreSQL \(a throwaway server, durable commits\)/);
  assert.match(text, /18\.7 ms/);
  assert.doesNotMatch(text, /writer lock/);
});
