// Proves the autoscaler's rules (core/hpa.ts) with an injected clock and invented
// utilizations: the HPA formula and its tolerance, clamping, the scale-up limit, the scale-down
// stabilization window, starting workers left out; and, against a simulated closed plant, that it
// settles without flapping, that a start-up burst does not drive it to max, and that it never
// exceeds max. Also the CPU quota's pure parts (the throttle's bucket, utilization from reports).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  decide,
  DEFAULT_HPA,
  initialHpaState,
  validateHpaConfig,
  type HpaConfig,
  type WorkerSample,
} from '../../core/hpa.ts';
import { parseCpuStat, utilizationFrom, type CpuSample } from '../../servers/lib/cpu/quota.ts';
import { periodStep, throttleStep } from '../../servers/lib/cpu/throttle.ts';
import { failOnWarnings } from '../helpers.ts';

failOnWarnings();

const config: HpaConfig = {
  ...DEFAULT_HPA,
  min: 1,
  max: 8,
  target: 0.5,
  tolerance: 0.1,
  windowMs: 10_000,
  initializationMs: 2000,
  scaleUp: { workers: 2, percent: 100, periodMs: 3000 },
};
/** n workers ready long ago, each at `u`. */
const ready = (n: number, u: number): WorkerSample[] =>
  Array.from({ length: n }, (_, i) => ({ pid: 100 + i, readyAt: -60_000, utilization: u }));

test('the HPA formula: desired = ceil(current × utilization / target)', () => {
  assert.equal(decide(config, initialHpaState(), 0, ready(2, 0.9)).desired, 4); // 2 × 0.9 / 0.5 = 3.6
  assert.equal(decide(config, initialHpaState(), 0, ready(1, 0.7)).desired, 2); // 1.4 → 2
  assert.equal(decide(config, initialHpaState(), 0, ready(3, 1.0)).desired, 6);
});

test('no change within the 0.1 tolerance, a change just outside it', () => {
  const within = decide(config, initialHpaState(), 0, ready(4, 0.54)); // ratio 1.08
  assert.equal(within.desired, 4);
  assert.equal(within.reason, 'within-tolerance');
  assert.equal(decide(config, initialHpaState(), 0, ready(4, 0.56)).desired, 5); // ratio 1.12 → ceil(4.48)
  const low = decide(config, initialHpaState(), 0, ready(4, 0.46)); // ratio 0.92
  assert.equal(low.reason, 'within-tolerance');
});

test('clamped to [min, max]', () => {
  assert.equal(decide(config, initialHpaState(), 0, ready(6, 1.0)).desired, 8, 'never above max');
  assert.equal(decide({ ...config, min: 2 }, initialHpaState(), 0, ready(2, 0)).desired, 2, 'never below min');
});

test('scale-up is limited per period: at most max(2 workers, 100 %) added per 3 s', () => {
  let s = initialHpaState();
  const d1 = decide(config, s, 0, ready(1, 1.0)); // wants 2, limit max(1+2, 2) = 3
  assert.equal(d1.desired, 2);
  s = d1.state;
  const d2 = decide(config, s, 1000, ready(2, 1.0)); // wants 4; 1 was added within the period, base 1 → limit 3
  assert.equal(d2.desired, 3);
  assert.equal(d2.reason, 'scale-up-limited');
  const d3 = decide(config, d2.state, 3500, ready(3, 1.0)); // wants 6; the +1 at 1 s is still in the period: base 2 → limit 4
  assert.equal(d3.desired, 4);
  const d4 = decide(config, d3.state, 7000, ready(4, 1.0)); // wants 8; nothing added within 3 s: base 4 → limit 8
  assert.equal(d4.desired, 8);
});

test('scale-down waits for the stabilization window: the highest recommendation of the last 10 s wins', () => {
  let s = initialHpaState();
  let d = decide(config, s, 0, ready(4, 0.5)); // on target: recommendation 4
  s = d.state;
  for (let t = 1000; t < 10_000; t += 1000) {
    d = decide(config, s, t, ready(4, 0.1)); // recommendation 1, but 4 is still in the window
    s = d.state;
    assert.equal(d.desired, 4, `at ${t} ms`);
    assert.equal(d.reason, 'stabilizing');
  }
  d = decide(config, s, 10_000, ready(4, 0.1));
  assert.equal(d.desired, 1, 'once the 4 is older than the window, down to the highest left (1)');
  assert.equal(d.reason, 'scale-down');
});

test('workers still starting are left out of the average; for a scale-up they count as idle', () => {
  const starting: WorkerSample = { pid: 9, readyAt: 9_000, utilization: 1.0 }; // listening for 1 s only
  const notListening: WorkerSample = { pid: 10 };
  // 2 ready at 0.6 (ratio 1.2 → 3), plus 2 starting: counted as 0 %, the ratio is 0.6 → no scale-up.
  const d = decide(config, initialHpaState(), 10_000, [...ready(2, 0.6), starting, notListening]);
  assert.equal(d.starting, 2);
  assert.equal(d.averageUtilization, 0.6);
  assert.equal(d.desired, 4);
  // Only starting workers: no metrics, no change.
  const none = decide(config, initialHpaState(), 10_000, [starting, notListening]);
  assert.equal(none.reason, 'no-metrics');
  assert.equal(none.desired, 2);
});

test('rejects a config that makes no sense', () => {
  assert.throws(() => validateHpaConfig({ ...config, max: 0 }), /max/);
  assert.throws(() => validateHpaConfig({ ...config, target: 0 }), /target/);
  assert.throws(() => validateHpaConfig({ ...config, min: 0 }), /min/);
  assert.doesNotThrow(() => validateHpaConfig(DEFAULT_HPA));
});

/**
 * A closed plant: a fixed amount of CPU demand (in quotas) spread evenly over the ready workers,
 * each capped at 1 (its quota); new workers listen after `startMs` and report a start-up burst
 * of `burst` for their first `burstMs`. Runs the controller every second for `seconds` and
 * returns the worker count after each sync.
 */
function simulate(
  c: HpaConfig,
  demand: (t: number) => number,
  seconds: number,
  opts: { start?: number; startMs?: number; burst?: number; burstMs?: number } = {},
): number[] {
  const startMs = opts.startMs ?? 500;
  let workers: { pid: number; forkedAt: number }[] = Array.from({ length: opts.start ?? 1 }, (_, i) => ({
    pid: i,
    forkedAt: -60_000,
  }));
  let next = workers.length;
  let state = initialHpaState();
  const counts: number[] = [workers.length];
  for (let t = 0; t < seconds * 1000; t += 1000) {
    const listening = workers.filter((w) => t - w.forkedAt >= startMs);
    const share = listening.length ? demand(t) / listening.length : 0;
    const samples: WorkerSample[] = workers.map((w) => {
      if (t - w.forkedAt < startMs) return { pid: w.pid };
      const readyAt = w.forkedAt + startMs;
      const bursting = t - readyAt < (opts.burstMs ?? 0);
      return { pid: w.pid, readyAt, utilization: bursting ? (opts.burst ?? 1) : Math.min(1, share) };
    });
    const d = decide(c, state, t, samples);
    state = d.state;
    assert.ok(d.desired <= c.max && d.desired >= c.min, `desired ${d.desired} outside [${c.min}, ${c.max}]`);
    if (d.desired > workers.length)
      for (let i = workers.length; i < d.desired; i++) workers.push({ pid: next++, forkedAt: t });
    else workers = workers.slice(0, d.desired);
    counts.push(workers.length);
  }
  return counts;
}
const changes = (counts: number[]) => counts.slice(1).filter((n, i) => n !== counts[i]).length;

test('does not flap between N and N+1 when utilization is 70 % on N and 35 % on N+1', () => {
  // Demand of 0.7 quota: on 1 worker that is 70 %, on 2 it is 35 % each. Target 50 %.
  const counts = simulate(config, () => 0.7, 120);
  assert.equal(counts.at(-1), 2);
  assert.equal(changes(counts), 1, `one scale-up, then steady: ${counts.join(' ')}`);
  // A naive controller (add above the target, remove below it) flaps on the same plant: the check
  // above could fail.
  let n = 1;
  const naive: number[] = [];
  for (let i = 0; i < 120; i++) {
    const u = 0.7 / n;
    n = u > 0.5 ? n + 1 : u < 0.5 && n > 1 ? n - 1 : n;
    naive.push(n);
  }
  assert.ok(changes(naive) > 10, 'the naive controller flaps');
});

test('the stabilization window stops flapping on a noisy load; without it the count follows the noise', () => {
  // Demand swings every second between 1.2 and 0.6 quotas (target 50 %): 3 workers, then 2.
  const noisy = (t: number) => (Math.floor(t / 1000) % 2 === 0 ? 1.2 : 0.6);
  const held = simulate(config, noisy, 60, { start: 3 });
  assert.equal(changes(held), 0, `with a 10 s window: ${held.join(' ')}`);
  const flapping = simulate({ ...config, windowMs: 0 }, noisy, 60, { start: 3 });
  assert.ok(changes(flapping) >= 10, `without a window: ${flapping.join(' ')}`);
});

test('floating-point dust does not add a worker: 3 × 0.8 / 0.6 is 4', () => {
  assert.equal(decide({ ...config, target: 0.6 }, initialHpaState(), 0, ready(3, 0.8)).desired, 4);
});

test('a scale-up limited by the period never removes workers', () => {
  // Workers were added and then removed within the period (window 0): the base from additions alone is too low.
  const c = { ...config, windowMs: 0 };
  let d = decide(c, initialHpaState(), 0, ready(4, 1.0)); // 4 → 8
  d = decide(c, d.state, 1000, ready(8, 0.1)); // → 2
  assert.equal(d.desired, 2);
  d = decide(c, d.state, 2000, ready(2, 1.0)); // wants 4; the limit must not go below 2
  assert.ok(d.desired >= 2, `desired ${d.desired}`);
});

test('a start-up burst of CPU does not drive it to max', () => {
  // Steady demand of 1.2 quotas (needs 3 workers at 50 %); each new worker burns 100 % for 3 s after listening.
  const counts = simulate(config, () => 1.2, 60, { burst: 1.0, burstMs: 3000 });
  assert.ok(Math.max(...counts) < config.max, `peaked at ${Math.max(...counts)}: ${counts.join(' ')}`);
  assert.equal(counts.at(-1), 3);
  // With the start-up period switched off the same burst is counted, and the count overshoots.
  const eager = simulate({ ...config, initializationMs: 0 }, () => 1.2, 60, { burst: 1.0, burstMs: 3000 });
  assert.ok(Math.max(...eager) > Math.max(...counts), `without the start-up period: ${eager.join(' ')}`);
});

test('never exceeds max, even with demand far beyond it; returns to min after the load, once the window has passed', () => {
  const counts = simulate(config, (t) => (t < 30_000 ? 50 : 0), 60);
  assert.equal(Math.max(...counts), config.max);
  const end = counts.findIndex((n, i) => i >= 30 && n === config.min);
  assert.ok(
    end >= 30 + config.windowMs / 1000 - 1 && end <= 30 + config.windowMs / 1000 + 1,
    `back to min at ${end} s: ${counts.join(' ')}`,
  );
});

test('the throttle bucket: credit refills at the quota, holds one period, and debt becomes a pause', () => {
  // 0.25 core, a 100 ms period: at most 25 ms of credit.
  assert.deepEqual(
    throttleStep(25, 0, 1000, 0.25, 100),
    { creditMs: 25, pauseMs: 0 },
    'unused credit does not pile up',
  );
  const over = throttleStep(25, 45, 10, 0.25, 100); // min(25, 25 + 2.5) − 45 = −20 → pause 80 ms
  assert.equal(over.creditMs, -20);
  assert.equal(over.pauseMs, 80);
  // Paying the debt: after the pause, the credit is back to 0.
  assert.equal(throttleStep(over.creditMs, 0, 80, 0.25, 100).creditMs, 0);
  // The kit's bucket is that 100 ms: at most 25 ms of credit at 0.25 core.
  assert.equal(throttleStep(0, 0, 1000, 0.25).creditMs, 25);
});

test("the throttle's periods: quota × period granted at each boundary, spent CPU waits for the next one", () => {
  // 0.25 core, a 100 ms period: 25 ms per period.
  const fresh = { creditMs: 25, period: 0 };
  assert.deepEqual(periodStep(fresh, 20, 30, 0.25, 100), { state: { creditMs: 5, period: 0 }, pauseMs: 0 });
  // 30 ms used by 40 ms into the period: 5 ms in debt, so it waits for the boundary at 100 ms.
  const over = periodStep(fresh, 30, 40, 0.25, 100);
  assert.deepEqual(over, { state: { creditMs: -5, period: 0 }, pauseMs: 60 });
  // At the boundary the grant pays the debt: 20 ms left for period 1.
  assert.deepEqual(periodStep(over.state, 0, 100, 0.25, 100), { state: { creditMs: 20, period: 1 }, pauseMs: 0 });
  // A debt larger than one grant waits for as many boundaries as it takes: 35 ms needs two, so it
  // runs again at 200 ms, 150 ms from now.
  assert.equal(periodStep(fresh, 60, 50, 0.25, 100).pauseMs, 150);
  // Idle periods do not pile up credit: a grant holds one period's worth.
  assert.deepEqual(periodStep({ creditMs: 25, period: 0 }, 0, 1050, 0.25, 100).state, { creditMs: 25, period: 10 });
  // Unlike the bucket, the wait does not depend on the size of the debt within a period: 1 ms over
  // 10 ms into a 100 ms period waits 90 ms (the bucket would pause 4 ms).
  assert.equal(periodStep({ creditMs: 0, period: 0 }, 1, 10, 0.25, 100).pauseMs, 90);
  assert.equal(throttleStep(0, 1, 0, 0.25, 100).pauseMs, 4);
});

test("the throttle's periods, charged first (a lone replica): CPU booked to the period it began in", () => {
  // 0.2 core, 20 ms periods: 4 ms per period. A request used 4.4 ms, then slept 16 ms in a
  // synchronous flush; the next request arrives 20.4 ms in, in period 1.
  const fresh = { creditMs: 4, period: 0 };
  // Charged after period 1's grant (the default), the 4.4 ms put it in debt: it would wait for 40 ms.
  assert.equal(periodStep(fresh, 4.4, 20.4, 0.2, 20).pauseMs, 19.6);
  // Charged first, as CFS would have charged it (4 ms in period 0, 0.4 in period 1), no wait.
  const first = periodStep(fresh, 4.4, 20.4, 0.2, 20, true);
  assert.equal(first.pauseMs, 0);
  assert.ok(Math.abs(first.state.creditMs - 3.6) < 1e-9);
  // Charged first still cannot hold more than one grant, and a debt past the grants still waits.
  assert.equal(periodStep(fresh, 0, 200, 0.2, 20, true).state.creditMs, 4);
  assert.equal(periodStep(fresh, 13, 21, 0.2, 20, true).pauseMs, 39); // 5 ms short after period 1's grant: two more boundaries, at 60 ms
});

test('cpu.stat: cgroup v1 counts throttled time in ns, v2 in µs', () => {
  assert.deepEqual(parseCpuStat('nr_periods 120\nnr_throttled 37\nthrottled_time 2150000000\n'), {
    periods: 120,
    throttled: 37,
    throttledMs: 2150,
  });
  assert.deepEqual(
    parseCpuStat(
      'usage_usec 3000000\nuser_usec 2000000\nsystem_usec 1000000\nnr_periods 120\nnr_throttled 37\nthrottled_usec 2150000\n',
    ),
    { periods: 120, throttled: 37, throttledMs: 2150 },
  );
  assert.equal(parseCpuStat('usage_usec 3000000\n'), undefined, 'no quota, no counters');
});

test('utilization from CPU reports: CPU time / wall time / quota, over the last span', () => {
  const reports: CpuSample[] = [0, 250, 500, 750, 1000, 1250].map((at, i) => ({ type: 'cpu', at, cpuUs: i * 62_500 })); // 62.5 ms per 250 ms = 0.25 core
  assert.equal(utilizationFrom(reports, 1000, 0.25), 1);
  assert.equal(utilizationFrom(reports, 1000, 0.5), 0.5);
  assert.equal(utilizationFrom(reports.slice(0, 1), 1000, 0.25), undefined, 'one report is not a rate');
  assert.equal(utilizationFrom(reports.slice(0, 2), 1000, 0.25), undefined, 'a quarter of the span is too little');
});
