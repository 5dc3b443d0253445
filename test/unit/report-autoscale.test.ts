// Proves the autoscale experiment's shape rules and tables (results/autoscale/report.ts) on
// invented results: a healthy run prints exactly expected-output/autoscale.txt, and each rule is
// also shown a result that must fail it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_HPA } from '../../core/hpa.ts';
import type { LatencySummary } from '../../results/report/latency.ts';
import type { UsersResult } from '../../results/report/users.ts';
import {
  calibratedThinkMs,
  calibrateThink,
  DEMAND_VS_CAPACITY,
  lightLoadDisturbed,
  measureLightLoad,
  thinkNote,
} from '../../results/autoscale/think.ts';
import { caveats, render, shape } from '../../results/autoscale/report.ts';
import {
  stats,
  type AutoscaleResult,
  type Scenario,
  type ScenarioResult,
  type SyncSample,
} from '../../results/autoscale/result.ts';
import { expectedShape, failedLines, failOnWarnings } from '../helpers.ts';
import { measures } from '../../results/autoscale/measures.ts';
import { predictions } from '../../results/autoscale/predictions.ts';

failOnWarnings();

const lat = (p95: number, p50 = p95 / 4): LatencySummary => ({
  count: 100,
  p50,
  p95,
  p99: p95 * 2,
  max: p95 * 3,
  mean: p95 / 3,
});

/** A scenario with `rps` req/s every second of the load, and workers per sync given by `workers` (index = second). */
function scenario(
  name: Scenario,
  o: {
    users: number;
    autoscale: boolean;
    loadS: number;
    rps: number;
    p95: number;
    steadyP95: number;
    steadyP50?: number;
    workers: number[];
    errors?: number;
    backToMinS?: number;
  },
): ScenarioResult {
  const workload: UsersResult = {
    users: o.users,
    thinkMs: 4000,
    durationS: o.loadS,
    iterations: 100,
    counts: {
      signup: { ok: 100, failed: o.errors ?? 0 },
      refresh: { ok: 300, failed: 0 },
      query: { ok: 3000, failed: 0 },
    },
    completed: o.rps * o.loadS,
    errors: o.errors ?? 0,
    latency: lat(o.p95),
    steadyLatency: lat(o.steadyP95, o.steadyP50),
    latencyByType: { signup: lat(o.p95 * 5), refresh: lat(o.p95), query: lat(o.p95) },
    steadyByType: {
      signup: lat(o.steadyP95 * 5),
      refresh: lat(o.steadyP95, o.steadyP50),
      query: lat(o.steadyP95, o.steadyP50),
    },
    timeline: Array.from({ length: o.loadS }, (_, second) => ({
      second,
      completed: o.rps,
      errors: 0,
      p95: o.p95,
      max: o.p95 * 2,
    })),
    failures: o.errors ? ['signup: HTTP 503'] : [],
  };
  const syncs: SyncSample[] = o.workers.map((n, i) => {
    const next = o.workers[i + 1] ?? n;
    return {
      t: i + 0.5,
      workers: n,
      desired: next,
      recommendation: next,
      retiring: 0,
      alive: next,
      reason: next > n ? 'scale-up' : next < n ? 'scale-down' : 'steady',
      average: 0.5,
      perWorker: Array.from({ length: n }, (_, k) => ({
        pid: 1000 + k,
        utilization: k === n - 1 && i === 0 ? null : 0.5,
      })),
    };
  });
  return {
    name,
    users: o.users,
    autoscale: o.autoscale,
    loadS: o.loadS,
    loadEndS: o.loadS,
    quotaLine: 'cpu quota: 0.25 core per worker, enforced by the in-process throttle',
    workload,
    syncs,
    ...(o.backToMinS !== undefined ? { backToMinS: o.backToMinS } : {}),
  };
}

/** Autoscaled worker counts: 1 for 2 s, then `peak`, for the load (24 s), then back to 1 after 12 s. */
const ramp = (peak: number) => [1, 1, 2, 2, 4, ...Array<number>(19).fill(peak), ...Array<number>(12).fill(peak), 1];

function healthy(): AutoscaleResult {
  return {
    machine: { cores: 2, loadavg1: 0.5, busyCoresAtStart: 0.1, node: '20.20.2', platform: 'linux-x64' },
    quota: 0.25,
    quotaLine: 'cpu quota: 0.25 core per worker, enforced by the in-process throttle',
    thinkMs: 4000,
    signupCost: 'N=2^13,r=8,p=1',
    hpa: { ...DEFAULT_HPA, syncMs: 1000 },
    scenarios: [
      scenario('fixed-1w-10u', {
        users: 10,
        autoscale: false,
        loadS: 12,
        rps: 80,
        p95: 30,
        steadyP95: 25,
        steadyP50: 1,
        workers: Array(12).fill(1),
      }),
      scenario('fixed-1w-40u', {
        users: 40,
        autoscale: false,
        loadS: 12,
        rps: 200,
        p95: 180,
        steadyP95: 150,
        steadyP50: 60,
        workers: Array(12).fill(1),
      }),
      scenario('auto-40u', {
        users: 40,
        autoscale: true,
        loadS: 24,
        rps: 350,
        p95: 90,
        steadyP95: 8,
        workers: ramp(4),
        backToMinS: 11,
      }),
      scenario('auto-80u', {
        users: 80,
        autoscale: true,
        loadS: 24,
        rps: 700,
        p95: 120,
        steadyP95: 12,
        workers: ramp(7),
        backToMinS: 12,
      }),
    ],
  };
}

const expected = expectedShape('autoscale');
const edit = (f: (r: AutoscaleResult) => void) => {
  const r = healthy();
  f(r);
  return failedLines(expected, shape(r));
};
const get = (r: AutoscaleResult, name: Scenario) => r.scenarios.find((s) => s.name === name)!;

test('a healthy result prints exactly the expected shape', () => {
  assert.deepEqual(shape(healthy()), expected);
});

test('40 users on one worker must have a steady p50 ten times the 10-user one', () => {
  // 10 users: steady p50 1 ms, so 40 users need 10 ms; their p95 alone does not count.
  assert.deepEqual(
    edit((r) => (get(r, 'fixed-1w-40u').workload.steadyLatency = lat(150, 9.9))),
    ['autoscale  fixed-1w-40u  steady-p50-vs-10-users  far-higher'],
  );
  assert.deepEqual(
    edit((r) => (get(r, 'fixed-1w-40u').workload.steadyLatency = lat(150, 10))),
    [],
  );
  // A worker with no queue at 40 users (no quota enforced): both medians about 1 ms.
  assert.deepEqual(
    edit((r) => (get(r, 'fixed-1w-40u').workload.steadyLatency = lat(30, 1.2))),
    ['autoscale  fixed-1w-40u  steady-p50-vs-10-users  far-higher'],
  );
  // A 10-user p95 on the third quota period (60 ms, as in one run measured here) leaves it alone.
  assert.deepEqual(
    edit((r) => (get(r, 'fixed-1w-10u').workload.steadyLatency = lat(60, 1))),
    [],
  );
});

test('the first scale-up must come within 5 syncs; late or never fails', () => {
  const late = edit(
    (r) =>
      (get(r, 'auto-40u').syncs = get(r, 'auto-40u').syncs.map((s, i) =>
        i < 7 ? { ...s, workers: 1, desired: 1 } : s,
      )),
  );
  assert.ok(late.includes('autoscale  auto-40u  first-scale-up  within-5-syncs'), late.join('\n'));
  const never = edit(
    (r) =>
      (get(r, 'auto-80u').syncs = get(r, 'auto-80u').syncs.map((s) => ({
        ...s,
        workers: 1,
        desired: 1,
        recommendation: 1,
        alive: 1,
      }))),
  );
  assert.ok(never.includes('autoscale  auto-80u  first-scale-up  within-5-syncs'), never.join('\n'));
  assert.ok(
    never.includes('autoscale  auto-80u  steady-recommendation-vs-40-users  more'),
    'and then 80 users are recommended no more workers than 40',
  );
  // Counted in syncs: a machine that stalled 4 s before the first sync delays it, not the count.
  const stalled = edit((r) => (get(r, 'auto-40u').syncs = get(r, 'auto-40u').syncs.map((s) => ({ ...s, t: s.t + 4 }))));
  assert.deepEqual(stalled, []);
  // The sixth sync is late however fast the syncs came; a sync before the load is not one of them.
  const upAt = (i: number) =>
    scenario('auto-40u', {
      users: 40,
      autoscale: true,
      loadS: 24,
      rps: 350,
      p95: 90,
      steadyP95: 8,
      workers: [...Array<number>(i + 1).fill(1), ...Array<number>(30).fill(4), 1],
    }).syncs;
  const sixth = edit((r) => (get(r, 'auto-40u').syncs = upAt(5).map((s) => ({ ...s, t: s.t / 2 }))));
  assert.ok(sixth.includes('autoscale  auto-40u  first-scale-up  within-5-syncs'), sixth.join('\n'));
  const fifth = upAt(4);
  assert.deepEqual(
    edit((r) => (get(r, 'auto-40u').syncs = [{ ...fifth[0]!, t: -0.5 }, ...fifth])),
    [],
    'a sync before the load is not one of its five',
  );
});

test('a scale-up after a scale-down during the load is flapping', () => {
  const counts = [1, 1, 2, 2, 4, 4, 3, 3, 4, ...Array<number>(15).fill(4), 1];
  const failed = edit(
    (r) =>
      (get(r, 'auto-40u').syncs = scenario('auto-40u', {
        users: 40,
        autoscale: true,
        loadS: 24,
        rps: 350,
        p95: 90,
        steadyP95: 8,
        workers: counts,
      }).syncs),
  );
  assert.deepEqual(failed, ['autoscale  auto-40u  scale-up-after-scale-down-during-load  none']);
  // A scale-down alone (correcting an overshoot) is not flapping.
  const down = [1, 1, 2, 4, 5, 5, 4, ...Array<number>(17).fill(4), 1];
  assert.deepEqual(
    edit(
      (r) =>
        (get(r, 'auto-40u').syncs = scenario('auto-40u', {
          users: 40,
          autoscale: true,
          loadS: 24,
          rps: 350,
          p95: 90,
          steadyP95: 8,
          workers: down,
        }).syncs),
    ),
    [],
  );
});

test('workers must return to min after the load, and not before the window has passed', () => {
  assert.deepEqual(
    edit((r) => delete get(r, 'auto-80u').backToMinS),
    ['autoscale  auto-80u  after-load  back-to-min-after-window'],
  );
  assert.deepEqual(
    edit((r) => (get(r, 'auto-40u').backToMinS = 3)),
    ['autoscale  auto-40u  after-load  back-to-min-after-window'],
  );
  assert.deepEqual(
    edit((r) => (get(r, 'auto-40u').backToMinS = 9.2)),
    [],
    'within one sync of the window is on time',
  );
});

test('autoscaled throughput must beat one worker by 1.4×, and its steady p95 come back near the 10-user one', () => {
  assert.deepEqual(
    edit(
      (r) =>
        (get(r, 'auto-40u').workload.timeline = get(r, 'auto-40u').workload.timeline.map((s) => ({
          ...s,
          completed: 250,
        }))),
    ),
    ['autoscale  auto-40u  steady-throughput-vs-1-worker  higher'],
  );
  // One worker with 10 users: steady p95 25 ms, so "near" is at most 50 ms.
  assert.deepEqual(
    edit((r) => (get(r, 'auto-40u').workload.steadyLatency = lat(51))),
    ['autoscale  auto-40u  steady-p95-vs-10-users-on-1-worker  near'],
  );
  assert.deepEqual(
    edit((r) => (get(r, 'auto-40u').workload.steadyLatency = lat(50))),
    [],
  );
});

test('80 users must be recommended more workers than 40 over the steady part', () => {
  assert.deepEqual(
    edit((r) => (get(r, 'auto-80u').syncs = get(r, 'auto-40u').syncs)),
    ['autoscale  auto-80u  steady-recommendation-vs-40-users  more'],
  );
  // Peaks do not count: 40 users overshooting to 8 at the start still settle on fewer.
  const overshoot = [1, 1, 2, 4, 8, 8, 8, 8, 8, 8, 8, 8, 8, ...Array<number>(11).fill(4), 1];
  assert.deepEqual(
    edit(
      (r) =>
        (get(r, 'auto-40u').syncs = scenario('auto-40u', {
          users: 40,
          autoscale: true,
          loadS: 24,
          rps: 350,
          p95: 90,
          steadyP95: 8,
          workers: overshoot,
        }).syncs),
    ),
    [],
  );
  // Nor does the window holding that peak through the steady part: the count stays 8, the controller recommends 4.
  const held = (r: AutoscaleResult) => {
    const s = get(r, 'auto-40u');
    s.syncs = scenario('auto-40u', {
      users: 40,
      autoscale: true,
      loadS: 24,
      rps: 350,
      p95: 90,
      steadyP95: 8,
      workers: [1, 1, 2, 4, ...Array<number>(20).fill(8), 1],
    }).syncs;
    for (const x of s.syncs) if (x.t >= 12) x.recommendation = 4;
  };
  assert.deepEqual(edit(held), []);
  // A controller whose recommendation does not follow the load fails, whatever the counts.
  assert.deepEqual(
    edit((r) => {
      held(r);
      for (const x of get(r, 'auto-80u').syncs) x.recommendation = 4;
    }),
    ['autoscale  auto-80u  steady-recommendation-vs-40-users  more'],
  );
  // Results saved before the recommendation was reported use the worker count.
  assert.deepEqual(
    edit((r) => (get(r, 'auto-80u').syncs = get(r, 'auto-80u').syncs.map(({ recommendation, ...x }) => x))),
    [],
  );
});

test('a caveat when 10 users did not keep one worker about half busy', () => {
  const r = healthy();
  assert.deepEqual(caveats(r), []);
  for (const s of get(r, 'fixed-1w-10u').syncs) s.average = 0.95;
  assert.match(caveats(r)[0] ?? '', /95% busy.*longer --think-ms/);
  for (const s of get(r, 'fixed-1w-10u').syncs) s.average = 0.1;
  assert.match(caveats(r)[0] ?? '', /shorter --think-ms/);
  // 40% busy: 40 users would ask for only about 1.4× what one worker serves, too little to show it.
  for (const s of get(r, 'fixed-1w-10u').syncs) s.average = 0.4;
  assert.match(caveats(r)[0] ?? '', /40% busy.*shorter --think-ms/);
  for (const s of get(r, 'fixed-1w-10u').syncs) s.average = 0.6;
  assert.deepEqual(caveats(r), []);
});

test('a 10-user run busier than a light load is measured again, the least busy try kept, and the caveats say so', async () => {
  assert.equal(lightLoadDisturbed(0.91), true);
  assert.equal(lightLoadDisturbed(0.84), false);
  assert.equal(lightLoadDisturbed(0.3), false, "too light is the calibration's business, not a disturbance");
  assert.equal(lightLoadDisturbed(undefined), false);
  const tryAll = async (us: (number | undefined)[]) => {
    let i = 0;
    const retries: string[] = [];
    const out = await measureLightLoad(
      async () => i++,
      (t) => us[t],
      (u, next) => retries.push(`${u}->${next}`),
    );
    return { ...out, runs: i, retries };
  };
  assert.deepEqual(await tryAll([0.6, 0.95]), { kept: 0, tries: [0.6], runs: 1, retries: [] });
  assert.deepEqual(await tryAll([0.91, 0.62, 0.95]), { kept: 1, tries: [0.91, 0.62], runs: 2, retries: ['0.91->2'] });
  // Busy every time: three tries, no more, and the least busy kept even when it came first.
  assert.deepEqual(await tryAll([0.88, 0.91, 0.93, 0.5]), {
    kept: 0,
    tries: [0.88, 0.91, 0.93],
    runs: 3,
    retries: ['0.88->2', '0.91->3'],
  });
  // A try without a utilization is never the least busy.
  assert.deepEqual(await tryAll([0.9, undefined]), { kept: 0, tries: [0.9, null], runs: 2, retries: ['0.9->2'] });

  const r = healthy();
  for (const s of get(r, 'fixed-1w-10u').syncs) s.average = 0.62;
  r.lightLoadTries = [0.91, 0.62];
  assert.equal(caveats(r).length, 1);
  assert.match(caveats(r)[0]!, /91%, then 62% busy in 2 tries.*least busy/);
  // Busy every time: the kept try also gets the slow-machine caveat.
  for (const s of get(r, 'fixed-1w-10u').syncs) s.average = 0.88;
  r.lightLoadTries = [0.88, 0.91, 0.93];
  assert.equal(caveats(r).length, 2);
  assert.match(caveats(r)[0]!, /88%, then 91%, then 93% busy in 3 tries/);
  assert.match(caveats(r)[1]!, /88% busy.*longer --think-ms/);
});

test('the think time is recalibrated only when 40 users would ask far from 2.1× one saturated worker', () => {
  // Node 20 on the reference machine: one worker served about 290 req/s; 2200 ms is within 10 %.
  assert.equal(calibratedThinkMs(2200, 290, 40, 34), undefined);
  // Node 26: about 390 req/s, so 40 users at 2200 ms asked only ~1.6×; a shorter think time.
  assert.equal(calibratedThinkMs(2200, 390, 40, 34), 1660);
  // A slower machine: a longer one.
  assert.equal(calibratedThinkMs(2200, 150, 40, 34), 4320);
  // Each result, applied, makes 40 users ask DEMAND_VS_CAPACITY × the capacity (think time alone).
  for (const rps of [100, 200, 390, 800]) {
    const ms = calibratedThinkMs(2200, rps, 40, 34)!;
    assert.ok(Math.abs((40 * 34) / (ms / 1000) / rps - DEMAND_VS_CAPACITY) < 0.02, String(rps));
  }
  // Kept within what --think-ms accepts; no capacity, no change.
  assert.equal(calibratedThinkMs(2200, 100_000, 40, 34), 100);
  assert.equal(calibratedThinkMs(2200, 10, 40, 34), 10_000);
  assert.equal(calibratedThinkMs(2200, 0, 40, 34), undefined);
  assert.equal(calibratedThinkMs(2200, Number.NaN, 40, 34), undefined);
});

test('a calibrated think time is named in the report, with what one worker served', () => {
  const r = healthy();
  assert.equal(thinkNote(r), undefined);
  assert.doesNotMatch(render(r, false), /calibrated/);
  r.calibration = { thinkMs: 2200, capacityRps: 390 };
  r.thinkMs = 1660;
  assert.equal(
    thinkNote(r),
    'think time 1660 ms, calibrated: one worker served 40 users 390 req/s at 2200 ms, and at 1660 ms they ask about 2.1× that; the 40-user run was repeated, and every scenario used 1660 ms',
  );
  assert.match(render(r, false), /think 1660 ms ·[^\n]*\ncontroller:[^\n]*\nthink time 1660 ms, calibrated/);
});

test('calibration: the repeated 40-user run sets the think time of the other scenarios, without a third run', async () => {
  const shape40 = { users: 40, requestsPerIteration: 34 };
  /** A measure that answers these req/s in turn, and records the think times it was asked for. */
  const answering = (...rps: number[]) => {
    const asked: number[] = [];
    return { asked, measure: async (ms: number) => (asked.push(ms), rps[asked.length - 1]!) };
  };
  // Within tolerance: one run, no calibration.
  const steady = answering(290);
  assert.deepEqual(await calibrateThink(2200, steady.measure, (x) => x, shape40), { kept: 290, thinkMs: 2200 });
  assert.deepEqual(steady.asked, [2200]);
  // An unlucky first window (232 req/s) asks for 2800 ms; the repeat serves 283, which asks for
  // 2290 ms: the other scenarios use 2290, so 40 users again ask about 2.1× what the worker serves.
  const unlucky = answering(232, 283);
  const told: [number, number, boolean][] = [];
  const r = await calibrateThink(
    2200,
    unlucky.measure,
    (x) => x,
    shape40,
    (m, next, again) => told.push([m.capacityRps, next, again]),
  );
  assert.deepEqual(unlucky.asked, [2200, 2790]);
  assert.deepEqual(r, {
    kept: 283,
    thinkMs: 2290,
    calibration: { thinkMs: 2200, capacityRps: 232, repeat: { thinkMs: 2790, capacityRps: 283 } },
  });
  assert.deepEqual(told, [
    [232, 2790, true],
    [283, 2290, false],
  ]);
  assert.ok(Math.abs((40 * 34) / 2.29 / 283 - DEMAND_VS_CAPACITY) < 0.02);
  // A repeat that agrees with the first: the think time it was run at stays.
  const agreeing = answering(232, 236);
  assert.deepEqual(await calibrateThink(2200, agreeing.measure, (x) => x, shape40), {
    kept: 236,
    thinkMs: 2790,
    calibration: { thinkMs: 2200, capacityRps: 232 },
  });
});

test('a think time the repeat moved again is named in the report with both measurements', () => {
  const r = healthy();
  r.calibration = { thinkMs: 2200, capacityRps: 232, repeat: { thinkMs: 2790, capacityRps: 283 } };
  r.thinkMs = 2290;
  assert.equal(
    thinkNote(r),
    'think time 2290 ms, calibrated: one worker served 40 users 232 req/s at 2200 ms, then 283 req/s at 2790 ms, and at 2290 ms they ask about 2.1× that; the 40-user row is the 2790 ms run, and every other scenario used 2290 ms',
  );
});

test('any failed request fails the errors line', () => {
  assert.deepEqual(
    edit((r) => (get(r, 'fixed-1w-40u').workload.errors = 1)),
    ['autoscale  errors  none'],
  );
});

test('stats: worker-seconds count live workers during the load; steady numbers come from the end of the load', () => {
  const r = healthy();
  const s = stats(get(r, 'auto-40u'), 1000);
  assert.equal(s.maxWorkers, 4);
  assert.equal(s.firstScaleUpS, 1.5);
  assert.equal(s.firstScaleUpSync, 2);
  assert.equal(s.steadyRps, 350);
  assert.equal(
    s.workerSeconds,
    [1, 2, 2, 4, 4, ...Array<number>(19).fill(4)].reduce((a, b) => a + b, 0),
  );
});

test('render: the table, the charts and the per-worker strip, without colour codes', () => {
  const text = render(healthy(), false);
  assert.match(text, /scenario.*requests.*peak req\/s.*steady req\/s.*p95.*steady p95.*errors.*max workers.*worker·s/s);
  assert.match(text, /autoscaled, 80 users/);
  assert.match(text, /worker  1 \(pid +1000\) │/);
  assert.match(text, /back to 1 worker 11\.0 s after the load \(\d+ worker·s after the load, with a 10 s window\)/);
  assert.match(text, /steady part: \d+\.\d workers on average, the controller recommending \d+\.\d/);
  assert.match(text, /[╭╮╰╯│─┼┤]/, 'asciichart charts');
  assert.doesNotMatch(text, /\x1b\[/);
});

test('measures: the numbers behind the lines, and every --predict question answered by one of them', () => {
  const m = measures(healthy());
  const byId = new Map(m.map((x) => [x.id, x]));
  assert.equal(byId.get('throughput-auto-vs-1-worker')?.threshold, 1.4);
  assert.ok(byId.get('throughput-auto-vs-1-worker')!.value >= 1.4, 'a healthy run is above the threshold');
  for (const question of predictions)
    assert.ok(byId.has(question.measure), `${question.id}: measure ${question.measure}`);
  // A result without the 10-user run has no ratio to it: the measure is left out, not NaN.
  const without = healthy();
  without.scenarios = without.scenarios.filter((s) => s.name !== 'fixed-1w-10u');
  assert.ok(!measures(without).some((x) => x.id === 'p50-40-vs-10-users' || Number.isNaN(x.value)));
});
