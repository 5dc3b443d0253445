// Proves the shared-compute experiment's shape rules and table (results/shared-compute/report.ts) on
// invented results: a healthy run prints exactly expected-output/shared-compute.txt, and each rule
// is also shown a result that must fail it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { LatencySummary } from '../../results/report/latency.ts';
import type { UsersResult } from '../../results/report/users.ts';
import type { SyncSample } from '../../results/autoscale/result.ts';
import {
  computeStats,
  render,
  shape,
  type ComputeScenario,
  type ComputeScenarioResult,
  type SharedComputeResult,
} from '../../results/shared-compute/report.ts';
import { expectedShape, failedLines, failOnWarnings } from '../helpers.ts';

failOnWarnings();

const lat = (p95: number, max: number, p50 = 0.4): LatencySummary => ({
  count: 1000,
  p50,
  p95,
  p99: (p95 + max) / 2,
  max,
  mean: p95 / 5,
});

/** A 12 s scenario at 100 req/s: the searches' steady p95 and max, the worker's utilization and, when given, its throttling. */
function scenario(
  name: ComputeScenario,
  o: {
    periodMs?: number;
    queryP95: number;
    queryMax: number;
    slowest: number;
    utilization: number;
    throttled?: number;
    errors?: number;
  },
): ComputeScenarioResult {
  const q = lat(o.queryP95, o.queryMax);
  const workload: UsersResult = {
    users: 10,
    thinkMs: 2200,
    durationS: 12,
    iterations: 35,
    counts: {
      signup: { ok: 35, failed: o.errors ?? 0 },
      refresh: { ok: 105, failed: 0 },
      query: { ok: 1050, failed: 0 },
    },
    completed: 1200,
    errors: o.errors ?? 0,
    latency: lat(o.queryP95, o.slowest),
    steadyLatency: lat(o.queryP95, o.slowest),
    latencyByType: { signup: lat(150, 250, 20), refresh: q, query: q },
    steadyByType: { signup: lat(150, 250, 20), refresh: q, query: q },
    timeline: Array.from({ length: 12 }, (_, second) => ({
      second,
      completed: 100,
      errors: 0,
      p95: o.queryP95,
      max: o.queryMax * (second % 3 ? 0.5 : 1),
    })),
    failures: o.errors ? ['signup: HTTP 503'] : [],
  };
  const syncs: SyncSample[] = Array.from({ length: 12 }, (_, i) => ({
    t: i + 0.5,
    workers: 1,
    desired: 1,
    retiring: 0,
    alive: 1,
    reason: 'steady',
    average: o.utilization,
    perWorker: [
      {
        pid: 1000,
        utilization: o.utilization,
        ...(o.throttled !== undefined
          ? {
              throttle: {
                periods: (i + 1) * 10,
                throttled: Math.round(((i + 1) * o.throttled) / 12),
                throttledMs: (i + 1) * 100,
              },
            }
          : {}),
      },
    ],
  }));
  return {
    name,
    ...(o.periodMs ? { periodMs: o.periodMs } : {}),
    users: 10,
    autoscale: false,
    loadS: 12,
    loadEndS: 12.1,
    quotaLine: 'cpu quota: 0.25 core per worker, period 100 ms, enforced by a cgroup v2 (/sys/fs/cgroup/nsl-1)',
    workload,
    syncs,
  };
}

function healthy(): SharedComputeResult {
  return {
    machine: { cores: 2, loadavg1: 0.5, busyCoresAtStart: 0.1, node: '20.20.2', platform: 'linux-x64' },
    quota: 0.25,
    thinkMs: 2200,
    scenarios: [
      scenario('shared-100ms', {
        periodMs: 100,
        queryP95: 2.5,
        queryMax: 88,
        slowest: 120,
        utilization: 0.6,
        throttled: 40,
      }),
      scenario('shared-20ms', {
        periodMs: 20,
        queryP95: 18,
        queryMax: 45,
        slowest: 140,
        utilization: 0.6,
        throttled: 200,
      }),
      scenario('dedicated', { queryP95: 1, queryMax: 6, slowest: 20, utilization: 0.15 }),
    ],
  };
}

const expected = expectedShape('shared-compute');
const edit = (f: (r: SharedComputeResult) => void) => {
  const r = healthy();
  f(r);
  return failedLines(expected, shape(r));
};
const get = (r: SharedComputeResult, name: ComputeScenario) => r.scenarios.find((s) => s.name === name)!;
const setSlowest = (s: ComputeScenarioResult, ms: number) => (s.workload.steadyLatency = lat(1, ms));

test('a healthy result prints exactly the expected shape', () => {
  assert.deepEqual(shape(healthy()), expected);
});

test('a 100 ms period the quota never stopped the worker in fails the throttled line', () => {
  assert.deepEqual(
    edit((r) =>
      get(r, 'shared-100ms').syncs.forEach(
        (x) => (x.perWorker[0]!.throttle = { periods: 100, throttled: 0, throttledMs: 0 }),
      ),
    ),
    ['shared-compute  shared-100ms  throttled-periods  some'],
  );
  // No counts at all (a quota that was not enforced) fails it too.
  assert.deepEqual(
    edit((r) => get(r, 'shared-100ms').syncs.forEach((x) => delete x.perWorker[0]!.throttle)),
    ['shared-compute  shared-100ms  throttled-periods  some'],
  );
});

test("the 100 ms period's slowest request must be 2× the dedicated core's: the spikes", () => {
  assert.deepEqual(
    edit((r) => setSlowest(get(r, 'dedicated'), 60.1)),
    ['shared-compute  shared-100ms  slowest-request-vs-dedicated  spikes'],
  );
  assert.deepEqual(
    edit((r) => setSlowest(get(r, 'dedicated'), 60)),
    [],
  );
  // A quota that never made anyone wait: the 100 ms row as smooth as the dedicated core.
  assert.deepEqual(
    edit((r) => setSlowest(get(r, 'shared-100ms'), 25)),
    ['shared-compute  shared-100ms  slowest-request-vs-dedicated  spikes'],
  );
  // No quota on any row: all alike.
  assert.deepEqual(
    edit((r) => r.scenarios.forEach((s) => setSlowest(s, 20))),
    ['shared-compute  shared-100ms  slowest-request-vs-dedicated  spikes'],
  );
});

test('any failed request fails the errors line', () => {
  assert.deepEqual(
    edit((r) => (get(r, 'dedicated').workload.errors = 1)),
    ['shared-compute  errors  none'],
  );
});

test("stats: CPU in cores (the quota's share, or one core's), throttling from the last sync of the load", () => {
  const r = healthy();
  const s = computeStats(get(r, 'shared-100ms'), r.quota);
  assert.ok(Math.abs(s.cpuCores! - 0.15) < 1e-9);
  assert.equal(s.throttled, 40);
  assert.equal(s.periods, 120);
  assert.ok(Math.abs(computeStats(get(r, 'dedicated'), r.quota).cpuCores! - 0.15) < 1e-9);
  assert.equal(computeStats(get(r, 'dedicated'), r.quota).throttled, undefined);
});

test('render: the table and one chart of per-second slowest requests per row, without colour codes', () => {
  const text = render(healthy(), false);
  assert.match(
    text,
    /worker.*requests.*steady req\/s.*CPU used.*throttled periods.*throttled.*search p50.*search p95.*search p99.*search max.*sign-up p50.*slowest.*errors/s,
  );
  assert.match(text, /shared, 100 ms period.*40 of 120 \(33%\)/);
  assert.match(text, /dedicated core.*—/);
  assert.match(text, /cpu quota: 0\.25 core per worker, enforced by a cgroup v2 .*\(shared rows\)/);
  for (const label of ['shared, 100 ms period', 'shared, 20 ms period', 'dedicated core'])
    assert.match(text, new RegExp(`\\n  ${label}\\n`));
  assert.match(text, /[╭╮╰╯│─┼┤]/, 'asciichart charts');
  assert.doesNotMatch(text, /\x1b\[/);
});

test("the caption gives a sign-up's CPU where the run timed it, and nothing for an older saved run", () => {
  assert.match(
    render({ ...healthy(), signupCpuMs: 15.2 }, false),
    /think \d+ ms · a sign-up's scrypt: 15\.2 ms of CPU · /,
  );
  assert.doesNotMatch(render(healthy(), false), /sign-up's scrypt/);
});
