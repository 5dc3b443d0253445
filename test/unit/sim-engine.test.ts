// Proves the simulator (sim/engine.ts): runs are reproducible from a seed; M/M/1, M/D/1, Little's law
// and the closed-loop response-time law come out as queueing theory says; it balances with the
// balancer's own pickers; kill, freeze and stop change what they should; stale load counts hurt
// least connections far more than two choices; the HPA scales up under load; memory stays flat.
// Since: loop 'turns' keeps the M/M/1 mean and the lab's hogged-replica waits; refused connections
// cost REFUSED_MS (no recursion with every replica gone); series are clamped to the run; stop and
// freeze compose; counts and series.replicas mean what they say; validate catches more.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import {
  REFUSED_MS,
  simulate,
  validate,
  type SimConfig,
  type SimResult,
  type TimelineEvent,
} from '../../sim/engine.ts';
import { exp, fixed, meanOf, withStalls } from '../../sim/dist.ts';
import { fitPath } from '../../sim/scenarios/degraded.ts';
import { DEFAULT_HPA } from '../../core/hpa.ts';
import { PICKERS, type Policy } from '../../core/policies.ts';
import { failOnWarnings } from '../helpers.ts';

failOnWarnings();

/** |actual / expected − 1| ≤ rel. */
const within = (actual: number, expected: number, rel: number) => Math.abs(actual / expected - 1) <= rel;

function assertWithin(actual: number, expected: number, rel: number, what: string): void {
  assert.ok(within(actual, expected, rel), `${what}: ${actual} is not within ${rel * 100} % of ${expected}`);
}

/** Runs `f` once, on first use (runs shared by several tests). */
function once<T>(f: () => T): () => T {
  let value: T | undefined;
  let done = false;
  return () => {
    if (!done) {
      value = f();
      done = true;
    }
    return value as T;
  };
}

// --- determinism ----------------------------------------------------------------------------

/** A config that draws randomness everywhere: arrivals, service, pool work, picks, a hog, a kill. */
const busyConfig = (seed: number): SimConfig => ({
  seed,
  replicas: 3,
  policy: 'power-of-two-choices',
  clients: { kind: 'open', ratePerS: 1000 },
  service: exp(1.5),
  pool: { threads: 2, work: exp(1) },
  hogs: [{ replica: 0, ms: exp(5), ratePerS: 20 }],
  events: [{ atMs: 10_000, action: 'kill', replica: 2 }],
  durationMs: 20_000,
  warmupMs: 1000,
  timeline: true,
});

test('the same config and seed give the same result exactly; another seed gives another result', () => {
  const config = busyConfig(7);
  const copy = structuredClone(config);
  const a = simulate(config);
  const b = simulate(busyConfig(7));
  assert.deepEqual(config, copy, 'simulate does not change its config');
  assert.deepEqual(a, b);
  assert.ok(a.counts.completed > 15_000, `a real run: ${a.counts.completed} answers`);
  const c = simulate(busyConfig(8));
  assert.notDeepEqual(c.latency, a.latency);
  assert.notDeepEqual(
    c.replicas.map((r) => r.served),
    a.replicas.map((r) => r.served),
  );
});

/** busyConfig's kind of run with the loop in turns (no pool: turns has none): hogs, a freeze, a kill. */
const turnsConfig = (seed: number, loop: 'fifo' | 'turns' = 'turns'): SimConfig => ({
  seed,
  loop,
  replicas: 3,
  policy: 'power-of-two-choices',
  clients: { kind: 'open', ratePerS: 1000 },
  service: exp(1),
  hogs: [
    { replica: 0, ms: exp(5), ratePerS: 20 },
    { replica: 1, ms: fixed(3), connections: 1 },
  ],
  events: [
    { atMs: 5000, action: 'freeze', replica: 1 },
    { atMs: 6000, action: 'thaw', replica: 1 },
    { atMs: 10_000, action: 'kill', replica: 2 },
  ],
  failover: { responseTimeoutMs: 500 },
  durationMs: 20_000,
  warmupMs: 1000,
  timeline: true,
});

test("loop 'turns': the same config and seed give the same result exactly; another seed, or the fifo loop, another", () => {
  const a = simulate(turnsConfig(7));
  assert.deepEqual(simulate(turnsConfig(7)), a);
  assert.ok(
    a.counts.completed > 15_000 && a.counts.timeouts > 0,
    `a real run: ${a.counts.completed} answers, ${a.counts.timeouts} timeouts`,
  );
  assert.notDeepEqual(simulate(turnsConfig(8)).latency, a.latency);
  // The turns are real: the same seed served first come, first served is another run.
  assert.notDeepEqual(simulate(turnsConfig(7, 'fifo')).latency, a.latency);
});

// --- queueing theory ------------------------------------------------------------------------

/** One replica, Poisson arrivals at `rho` per ms, service mean 1 ms: about 1M requests after a 10 s warm-up. */
const singleServer = (rho: number, service: SimConfig['service'], seed = 1): SimConfig => ({
  seed,
  replicas: 1,
  policy: 'round-robin',
  clients: { kind: 'open', ratePerS: rho * 1000 },
  service,
  durationMs: 1_000_000 / rho, // a whole number of 1 s buckets
  warmupMs: 10_000,
});

const mm1At05 = once(() => simulate(singleServer(0.5, exp(1))));
const mm1At08 = once(() => simulate(singleServer(0.8, exp(1))));
const md1At08 = once(() => simulate(singleServer(0.8, fixed(1))));

/** M/M/1 mean response time, 1/(μ − λ), with μ = 1 per ms. */
const mm1Mean = (rho: number) => 1 / (1 - rho);
/** M/D/1 mean response time, S + ρ·S / (2(1 − ρ)) (Pollaczek–Khinchine), with S = 1 ms. */
const md1Mean = (rho: number) => 1 + rho / (2 * (1 - rho));

test('M/M/1: mean response time is 1/(μ − λ) within 3 % at ρ = 0.5 and 0.8; utilization is ρ within 2 %', () => {
  for (const [rho, r] of [
    [0.5, mm1At05()],
    [0.8, mm1At08()],
  ] as const) {
    assert.ok(r.latency.count > 900_000, `≈1M answers measured at ρ = ${rho}: ${r.latency.count}`);
    assertWithin(r.latency.mean, mm1Mean(rho), 0.03, `M/M/1 mean response at ρ = ${rho}`);
    assertWithin(r.replicas[0]!.utilization, rho, 0.02, `utilization at ρ = ${rho}`);
    assertWithin(r.throughput, rho * 1000, 0.02, `throughput at ρ = ${rho}`);
  }
});

test('M/D/1: mean waiting time is ρ·S / (2(1 − ρ)) (Pollaczek–Khinchine) within 5 %', () => {
  const r = md1At08();
  assertWithin(r.latency.mean - 1, md1Mean(0.8) - 1, 0.05, 'M/D/1 mean wait at ρ = 0.8');
  assert.ok(r.latency.count > 900_000, `≈1M answers measured: ${r.latency.count}`);
  assertWithin(r.replicas[0]!.utilization, 0.8, 0.02, 'utilization');
});

test("Little's law: the replica's time-averaged queue is λ·W within 3 %", () => {
  for (const [name, rho, r] of [
    ['M/M/1', 0.5, mm1At05()],
    ['M/M/1', 0.8, mm1At08()],
    ['M/D/1', 0.8, md1At08()],
  ] as const) {
    assertWithin(r.replicas[0]!.meanQueue, rho * r.latency.mean, 0.03, `${name} at ρ = ${rho}: L vs λW`);
  }
});

test('the checks tell distributions apart: exponential service is not M/D/1, fixed service is not M/M/1', () => {
  assert.ok(
    !within(mm1At08().latency.mean, md1Mean(0.8), 0.03),
    `M/M/1 run (${mm1At08().latency.mean}) passes for M/D/1 (${md1Mean(0.8)})`,
  );
  assert.ok(
    !within(md1At08().latency.mean, mm1Mean(0.8), 0.03),
    `M/D/1 run (${md1At08().latency.mean}) passes for M/M/1 (${mm1Mean(0.8)})`,
  );
});

test('closed loop, no think time: throughput 1000/S req/s and every response takes N·S', () => {
  const N = 8;
  const S = 2;
  const r = simulate({
    replicas: 1,
    policy: 'round-robin',
    clients: { kind: 'closed', count: N },
    service: fixed(S),
    durationMs: 10_000,
    warmupMs: 1000,
  });
  assertWithin(r.throughput, 1000 / S, 0.005, 'throughput');
  // The histogram keeps 3 significant digits: 16 ms reads as 16.007 at worst.
  for (const k of ['p50', 'p99', 'max', 'mean'] as const) assertWithin(r.latency[k], N * S, 0.001, `latency ${k}`);
  assertWithin(r.replicas[0]!.utilization, 1, 0.001, 'utilization');
  assertWithin(r.replicas[0]!.meanQueue, N, 0.001, 'requests in the replica');
});

// --- loop 'turns' -----------------------------------------------------------------------------

const mm1TurnsAt08 = once(() => simulate({ ...singleServer(0.8, exp(1)), loop: 'turns' }));

test("loop 'turns', M/M/1 at ρ = 0.8: the mean is still 1/(μ − λ) within 3 %; the random order within turns spreads the waits (p99 up, p50 down)", () => {
  const turns = mm1TurnsAt08();
  const fifo = mm1At08();
  assert.ok(turns.latency.count > 900_000, `≈1M answers measured: ${turns.latency.count}`);
  // Any order that keeps the server busy while work waits has the same mean (work-conserving).
  assertWithin(turns.latency.mean, mm1Mean(0.8), 0.03, 'M/M/1 mean response in turns');
  assertWithin(turns.replicas[0]!.utilization, 0.8, 0.02, 'utilization in turns');
  assertWithin(turns.replicas[0]!.meanQueue, 0.8 * turns.latency.mean, 0.03, "Little's law in turns");
  assert.ok(turns.latency.p99 >= 1.05 * fifo.latency.p99, `p99: turns ${turns.latency.p99}, fifo ${fifo.latency.p99}`);
  assert.ok(turns.latency.p50 < fifo.latency.p50, `p50: turns ${turns.latency.p50}, fifo ${fifo.latency.p50}`);
});

test("loop 'turns': a probe on a replica hogged by 3 connections of 30 ms waits 90 ms flat in FIFO, 0 to 2 turns in turns (the lab: mean 115, p95 181)", () => {
  // sim/t.mts and measure/sim-vs-lab.ts: one closed-loop client of /fast behind the lab's hog.
  const probe = (loop: 'fifo' | 'turns') =>
    simulate({
      loop,
      replicas: 1,
      policy: 'round-robin',
      clients: { kind: 'closed', count: 1 },
      pathDelay: exp(0.3),
      service: fixed(0.1),
      hogs: [{ replica: 0, ms: fixed(30), connections: 3 }],
      durationMs: 60_000,
      warmupMs: 1000,
    });
  const fifo = probe('fifo');
  const turns = probe('turns');
  assert.ok(
    fifo.latency.count > 400 && turns.latency.count > 400,
    `probes: fifo ${fifo.latency.count}, turns ${turns.latency.count}`,
  );
  // FIFO: every probe waits behind the three hog requests queued ahead of it.
  for (const k of ['p50', 'p95', 'mean'] as const) assertWithin(fifo.latency[k], 90, 0.01, `fifo ${k}`);
  // Turns: the rest of the current turn, then its place among the 4 requests of the next.
  assert.ok(turns.latency.mean >= 95 && turns.latency.mean <= 130, `turns mean ${turns.latency.mean}`);
  assert.ok(turns.latency.p95 >= 1.7 * fifo.latency.p95, `p95: turns ${turns.latency.p95}, fifo ${fifo.latency.p95}`);
  assert.ok(turns.latency.p95 >= 170 && turns.latency.p95 <= 190, `turns p95 ${turns.latency.p95}`);
});

test("loop 'turns' with a thread pool is a RangeError (no pool model in turns); fifo with one is fine", () => {
  const config: SimConfig = {
    replicas: 1,
    policy: 'round-robin',
    clients: { kind: 'closed', count: 1 },
    service: fixed(1),
    pool: { threads: 2, work: fixed(1) },
    durationMs: 100,
  };
  assert.throws(
    () => simulate({ ...config, loop: 'turns' }),
    (e: unknown) => e instanceof RangeError && /turns/.test(e.message),
  );
  assert.throws(() => validate({ ...config, loop: 'turns' }), RangeError);
  assert.doesNotThrow(() => simulate({ ...config, loop: 'fifo' }));
  assert.doesNotThrow(() => simulate({ ...config, pool: undefined, loop: 'turns' }));
});

// --- policies -------------------------------------------------------------------------------

test('round robin over 3 equal replicas in a closed loop serves them evenly, in the order app1, app2, app3', () => {
  // Random service times, but every request answered before the end: served = sent to each.
  const r = simulate({
    replicas: 3,
    policy: 'round-robin',
    clients: { kind: 'closed', count: 5 },
    service: exp(1),
    durationMs: 60_000,
    maxRequests: 30_001,
  });
  const served = r.replicas.map((x) => x.served);
  assert.equal(r.counts.completed, 30_001);
  assert.ok(Math.max(...served) - Math.min(...served) <= 1, `served ${served.join(', ')}`);
  // One client, n requests: the first goes to app1, then app2, app3, app1 again.
  const order = [1, 2, 3, 4, 5].map((n) =>
    simulate({
      replicas: 3,
      policy: 'round-robin',
      clients: { kind: 'closed', count: 1 },
      service: fixed(1),
      durationMs: 1000,
      maxRequests: n,
    }).replicas.map((x) => x.served),
  );
  assert.deepEqual(order, [
    [1, 0, 0],
    [1, 1, 0],
    [1, 1, 1],
    [2, 1, 1],
    [2, 2, 1],
  ]);
});

test("the engine picks with the balancer's own pickers (PICKERS of core/policies.ts)", () => {
  const original = PICKERS['random'];
  let calls = 0;
  try {
    // Counting: one pick per try.
    PICKERS['random'] = (replicas, cursor, rng) => {
      calls++;
      return original(replicas, cursor, rng);
    };
    const counted = simulate({
      replicas: 3,
      policy: 'random',
      clients: { kind: 'closed', count: 2 },
      service: fixed(1),
      durationMs: 1000,
      maxRequests: 50,
    });
    assert.equal(counted.counts.sent, 50);
    assert.equal(calls, 50);
    // Obeyed: a picker that always answers app3 gets app3 every request.
    PICKERS['random'] = (_replicas, cursor) => ({ index: 2, cursor });
    const forced = simulate({
      replicas: 3,
      policy: 'random',
      clients: { kind: 'closed', count: 2 },
      service: fixed(1),
      durationMs: 1000,
      maxRequests: 50,
    });
    assert.deepEqual(
      forced.replicas.map((x) => x.served),
      [0, 0, 50],
    );
  } finally {
    PICKERS['random'] = original;
  }
});

test('a hog blocking one replica: least connections and two choices avoid it, round robin and random do not', () => {
  const run = (policy: Policy) =>
    simulate({
      replicas: 3,
      policy,
      clients: { kind: 'closed', count: 6 },
      service: fixed(0.2),
      hogs: [{ replica: 2, ms: fixed(30), connections: 3 }],
      durationMs: 20_000,
      warmupMs: 1000,
    });
  const r = {
    rr: run('round-robin'),
    random: run('random'),
    lc: run('least-connections'),
    p2c: run('power-of-two-choices'),
  };
  const hogged = (x: SimResult) => x.replicas[2]!.served / x.counts.completed;
  for (const [name, x] of Object.entries(r))
    assert.ok(x.replicas[2]!.hogServed > 500, `${name}: the hog runs (${x.replicas[2]!.hogServed})`);
  // Blind policies give the hogged replica its third of the requests.
  assert.ok(hogged(r.rr) > 0.3 && hogged(r.random) > 0.3, `round robin ${hogged(r.rr)}, random ${hogged(r.random)}`);
  for (const name of ['lc', 'p2c'] as const) {
    assert.ok(
      hogged(r[name]) < 0.02,
      `${name} sends the hogged replica ${(100 * hogged(r[name])).toFixed(1)} % of requests`,
    );
    for (const blind of ['rr', 'random'] as const) {
      assert.ok(
        r[name].latency.p95 * 10 <= r[blind].latency.p95,
        `${name} p95 ${r[name].latency.p95} vs ${blind} p95 ${r[blind].latency.p95}`,
      );
    }
  }
});

test('withStalls: the mean is mean + share × stall; a share of 0 is the exponential; bad input is a RangeError', () => {
  const d = withStalls(0.3, 0.04, 5);
  assert.ok(Math.abs(meanOf(d) - (0.3 + 0.04 * 5)) < 0.01, `mean ${meanOf(d)}`);
  assert.ok(d.kind === 'empirical' && d.valuesMs.filter((v) => v > 5).length === 20, 'a stall in 4 % of 500 values');
  assert.ok(Math.abs(meanOf(withStalls(0.3, 0, 5)) - 0.3) < 0.01);
  assert.throws(() => withStalls(0.3, 1.5, 5), RangeError);
  assert.throws(() => withStalls(-1, 0.1, 5), RangeError);
});

test("fitPath: the model's healthy path shows the target's throughput, p50 and p95 within 10 %; an exponential queue of the same throughput misses the p95", () => {
  // A lab path measured here (sim-vs-lab --quick): p95 about 4 times p50.
  const target = { throughput: 2655, p50: 1.6, p95: 6.27 };
  const fit = fitPath(fixed(0.15), target, 6, { seed: 1 });
  assert.ok(fit.queue && fit.stallShare > 0 && fit.stallMs > 1, JSON.stringify(fit));
  for (const k of ['throughput', 'p50', 'p95'] as const) {
    assert.ok(Math.abs(fit.fitted[k] / target[k] - 1) < 0.1, `${k}: model ${fit.fitted[k]}, target ${target[k]}`);
  }
  // The same mean time per request without stalls: the throughput holds, the tail does not.
  const plain = simulate({
    replicas: 2,
    policy: 'least-connections',
    clients: { kind: 'closed', count: 6 },
    service: fixed(0.15),
    pathQueue: exp(meanOf(fit.queue)),
    durationMs: 2500,
    warmupMs: 500,
  });
  assert.ok(Math.abs(plain.throughput / target.throughput - 1) < 0.15, `throughput ${plain.throughput}`);
  assert.ok(plain.latency.p95 < target.p95 / 1.4, `p95 ${plain.latency.p95} without stalls`);
});

test('fitPath: no queue when the replicas alone carry no more than the target (they are the bottleneck)', () => {
  const fit = fitPath(fixed(2), { throughput: 5000, p50: 1, p95: 2 }, 6, { seed: 1 });
  assert.equal(fit.queue, undefined);
  assert.ok(fit.fitted.throughput <= 5000);
});

// --- faults ---------------------------------------------------------------------------------

/** Three replicas, six closed-loop clients, 20 ms requests (always some in flight), replica 1 killed at 5 s. */
const killConfig = (extra: Partial<SimConfig> = {}): SimConfig => ({
  replicas: 3,
  policy: 'round-robin',
  clients: { kind: 'closed', count: 6 },
  service: fixed(20),
  durationMs: 10_000,
  events: [{ atMs: 5000, action: 'kill', replica: 1 }],
  ...extra,
});

test('kill with GET and retries: the cut requests are retried, none fail', () => {
  const r = simulate(killConfig());
  const killed = r.replicas[1]!;
  assert.ok(killed.inFlightAtFault! > 0, 'requests were in flight at the kill');
  assert.ok(killed.cut > 0);
  assert.equal(r.counts.failed, 0);
  assert.equal(r.counts.ok, r.counts.completed);
  assert.ok(r.counts.retried >= killed.cut, `retried ${r.counts.retried}, cut ${killed.cut}`);
  assert.ok(r.latency.max >= 3 * 20, 'a retried request waited for its first try and a second queue');
});

test('kill without retries: the cut requests fail', () => {
  const r = simulate(killConfig({ failover: { retries: 0 } }));
  const killed = r.replicas[1]!;
  assert.ok(killed.cut > 0);
  assert.ok(r.counts.failed >= killed.cut, `failed ${r.counts.failed}, cut ${killed.cut}`);
  assert.equal(r.counts.retried, 0);
});

test('kill with POST: a reset POST is not retried, a refused connection is', () => {
  // maxFails 0: no passive health checks, so the balancer keeps sending to the dead replica and
  // each of those tries is a refused connection.
  const post = simulate(killConfig({ method: 'POST', durationMs: 20_000, failover: { maxFails: 0 } }));
  const killed = post.replicas[1]!;
  assert.ok(killed.cut > 0);
  assert.equal(post.counts.failed, killed.cut, 'exactly the reset POSTs fail');
  assert.ok(post.counts.retried > 100, `refused connections are retried: ${post.counts.retried}`);
  // The same without retries: the refused connections fail too.
  const noRetries = simulate(killConfig({ method: 'POST', durationMs: 20_000, failover: { maxFails: 0, retries: 0 } }));
  assert.ok(noRetries.counts.failed > noRetries.replicas[1]!.cut + 100, `failed ${noRetries.counts.failed}`);
  assert.equal(noRetries.counts.retried, 0);
});

test('freeze with a 200 ms response timeout: tries time out and are retried; the slow answers take about the timeout', () => {
  const freeze = (retries: number) =>
    simulate({
      replicas: 3,
      policy: 'round-robin',
      clients: { kind: 'closed', count: 6 },
      service: exp(5),
      durationMs: 20_000,
      failover: { responseTimeoutMs: 200, retries },
      slowMs: 150,
      events: [
        { atMs: 5000, action: 'freeze', replica: 1 },
        { atMs: 15_000, action: 'thaw', replica: 1 },
      ],
    });
  const r = freeze(2);
  assert.ok(r.counts.timeouts > 0);
  assert.equal(r.counts.failed, 0);
  assert.equal(r.replicas[1]!.cut, 0, 'a freeze cuts nothing');
  assert.ok(r.counts.retried >= r.counts.timeouts);
  assert.ok(r.slow.count >= r.counts.timeouts, `slow ${r.slow.count}, timeouts ${r.counts.timeouts}`);
  assert.ok(r.slow.medianMs >= 0.95 * 200 && r.slow.medianMs <= 1.4 * 200, `slow median ${r.slow.medianMs} ms`);
  const noRetries = freeze(0);
  assert.ok(noRetries.counts.failed > 0);
  assert.equal(noRetries.counts.failed, noRetries.counts.timeouts, 'each timed-out try is a 504');
});

test('the response timeout also ends tries stuck in a long queue, without any fault', () => {
  // Ten clients on one replica, 30 ms each: from the seventh request on, every try waits over 200 ms.
  const r = simulate({
    replicas: 1,
    policy: 'round-robin',
    clients: { kind: 'closed', count: 10 },
    service: fixed(30),
    durationMs: 5000,
    failover: { responseTimeoutMs: 200 },
  });
  assert.ok(r.counts.timeouts > 100, `timeouts ${r.counts.timeouts}`);
  assert.equal(r.counts.failed, r.counts.timeouts, 'a lone replica: nothing to retry on, each is a 504');
  assert.ok(r.counts.ok >= 6 && r.counts.ok < 10, `only the first requests answer: ${r.counts.ok}`);
  assertWithin(r.latency.p50, 200, 0.001, 'a timed-out request takes the timeout');
  assert.ok(r.latency.max <= 200.2, `max ${r.latency.max}`);
});

test('a graceful stop drains: nothing cut, nothing failed; a kill at the same moment cuts and costs p99', () => {
  const run = (action: 'stop' | 'kill') =>
    simulate({
      replicas: 3,
      policy: 'round-robin',
      clients: { kind: 'closed', count: 6 },
      service: fixed(500),
      durationMs: 20_000,
      events: [{ atMs: 5100, action, replica: 1 }],
    });
  const stop = run('stop');
  const kill = run('kill');
  assert.ok(stop.replicas[1]!.inFlightAtFault! > 0, 'requests were in flight at the stop');
  assert.equal(stop.replicas[1]!.cut, 0);
  assert.equal(stop.counts.failed, 0);
  assert.ok(kill.replicas[1]!.cut > 0);
  assert.equal(kill.counts.failed, 0, 'GETs cut by the kill are retried');
  assert.ok(kill.latency.p99 > stop.latency.p99, `p99 kill ${kill.latency.p99}, stop ${stop.latency.p99}`);
  assert.ok(stop.replicas[1]!.served > kill.replicas[1]!.served, 'the stopped replica finished its requests');
});

test('a refused connection costs REFUSED_MS: a try on a dead replica retried on a live one takes S + REFUSED_MS', () => {
  // maxFails 0: the dead replica stays in rotation, so every other request is refused first.
  const r = simulate({
    replicas: 2,
    policy: 'round-robin',
    clients: { kind: 'closed', count: 1 },
    service: fixed(1),
    failover: { maxFails: 0 },
    maxRequests: 4,
    durationMs: 100,
    events: [{ atMs: 0.5, action: 'kill', replica: 1 }],
  });
  assert.ok(REFUSED_MS > 0);
  assert.deepEqual(
    r.replicas.map((x) => x.served),
    [4, 0],
  );
  assert.equal(r.counts.retried, 3);
  assert.equal(r.counts.failed, 0);
  assertWithin(r.latency.max, 1 + REFUSED_MS, 0.001, 'a refused, then answered request');
  assertWithin(
    r.latency.mean,
    (1 + 3 * (1 + REFUSED_MS)) / 4,
    0.001,
    'mean of one direct and three refused-first requests',
  );
});

test('every replica gone, zero think time: no recursion; a closed-loop client fails once per REFUSED_MS (refused try or 503)', () => {
  // Before REFUSED_MS: a refused try or a 503 took no time, the client sent again at once, and the
  // engine recursed until the stack overflowed.
  const perSecond = 1000 / REFUSED_MS;
  for (const action of ['kill', 'stop', 'remove'] as const) {
    const r = simulate({
      replicas: 1,
      policy: 'round-robin',
      clients: { kind: 'closed', count: 1 },
      service: fixed(1),
      durationMs: 2000,
      events: [{ atMs: 1000, action, replica: 0 }],
      timeline: true,
    });
    const [before, after] = r.timeline!;
    assert.ok(before!.ok2xx >= 998 && before!.non2xx === 0, `${action}: second 0 answered ${before!.ok2xx}`);
    assert.ok(after!.ok2xx <= 1, `${action}: nothing answered after it (${after!.ok2xx})`);
    assertWithin(after!.non2xx, perSecond, 0.01, `${action}: failures in the second after`);
  }
  // Three dead replicas and two clients: each request is refused three times (retries 2), 0.3 ms.
  const all = simulate({
    replicas: 3,
    policy: 'round-robin',
    clients: { kind: 'closed', count: 2 },
    service: fixed(1),
    durationMs: 2000,
    events: [0, 1, 2].map((i): TimelineEvent => ({ atMs: 1000, action: 'kill', replica: i })),
    timeline: true,
  });
  assertWithin(all.timeline![1]!.non2xx, (2 * perSecond) / 3, 0.01, 'failures with three refused tries each');
  assertWithin(all.latency.max, 1 + 2 * REFUSED_MS, 0.01, 'a request cut by the kill, then refused twice');
});

/** Three replicas, six closed-loop clients of 20 ms requests, round robin, and events on replica 1. */
const composed = (events: TimelineEvent[], durationMs: number) =>
  simulate({
    replicas: 3,
    policy: 'round-robin',
    clients: { kind: 'closed', count: 6 },
    service: fixed(20),
    durationMs,
    events,
  });

test('stop, then freeze, then thaw: the replica is still stopping after the thaw, drains and never serves again', () => {
  // Before: the thaw made it 'up', back in rotation (it served 125, not ~50, by 3 s).
  const events: TimelineEvent[] = [
    { atMs: 1000, action: 'stop', replica: 1 },
    { atMs: 1010, action: 'freeze', replica: 1 },
    { atMs: 1500, action: 'thaw', replica: 1 },
  ];
  const r = composed(events, 3000);
  const longer = composed(events, 6000);
  const stopOnly = composed([events[0]!], 3000);
  assert.equal(r.counts.failed, 0);
  assert.equal(r.replicas[1]!.cut, 0, 'a stop cuts nothing');
  assert.ok(r.latency.max >= 490, `what it held waited for the thaw: max ${r.latency.max}`);
  assert.equal(longer.replicas[1]!.served, r.replicas[1]!.served, 'nothing served after the drain');
  assert.ok(
    r.replicas[1]!.served < stopOnly.replicas[1]!.served + 10,
    `served ${r.replicas[1]!.served}, with the stop alone ${stopOnly.replicas[1]!.served}`,
  );
  // A bucket's count is taken at its start, before the stop at 1000 ms: 2 from the second bucket after it.
  assert.deepEqual(longer.series.replicas, [3, 3, 2, 2, 2, 2]);
});

test('freeze, then stop, then thaw: frozen until the thaw, then it answers what it held, drains and exits', () => {
  // Before: the stop made the frozen replica 'draining' without planning its requests, and the thaw
  // (of a replica no longer frozen) did nothing: its clients waited for ever.
  const events: TimelineEvent[] = [
    { atMs: 1000, action: 'freeze', replica: 1 },
    { atMs: 1100, action: 'stop', replica: 1 },
    { atMs: 1500, action: 'thaw', replica: 1 },
  ];
  const during = composed(events, 1400);
  const r = composed(events, 3000);
  const longer = composed(events, 6000);
  assert.equal(r.counts.failed, 0);
  assert.ok(r.latency.max >= 490, `what it held is answered after the thaw: max ${r.latency.max}`);
  assert.ok(
    r.replicas[1]!.served > during.replicas[1]!.served,
    `served ${r.replicas[1]!.served} by 3 s, ${during.replicas[1]!.served} while frozen`,
  );
  assert.equal(longer.replicas[1]!.served, r.replicas[1]!.served, 'nothing served after the drain');
  // Its clients are free again: the other two replicas serve 50 requests a second each.
  assertWithin(longer.counts.completed - r.counts.completed, 2 * 50 * 3, 0.02, 'answers in the last 3 s');
  assert.deepEqual(longer.series.replicas, [3, 3, 2, 2, 2, 2]);
});

test('a replica stopped and then frozen refuses new connections, as the stop alone does', () => {
  const events: TimelineEvent[] = [
    { atMs: 1000, action: 'stop', replica: 1 },
    { atMs: 1010, action: 'freeze', replica: 1 },
    { atMs: 1500, action: 'thaw', replica: 1 },
  ];
  // The requests in it at the stop are the only ones it answers, frozen or not.
  assert.equal(composed(events, 3000).replicas[1]!.served, composed([events[0]!], 3000).replicas[1]!.served);
});

test('retried and timeouts count only the measured window, like completed and failed', () => {
  // A freeze whose timeouts (200 ms) all fall in the first second; the same freeze 2 s later.
  const run = (warmupMs: number, shift: number) =>
    simulate({
      replicas: 3,
      policy: 'round-robin',
      clients: { kind: 'closed', count: 6 },
      service: fixed(5),
      durationMs: 6000,
      warmupMs,
      failover: { responseTimeoutMs: 200 },
      events: [
        { atMs: 100 + shift, action: 'freeze', replica: 1 },
        { atMs: 1000 + shift, action: 'thaw', replica: 1 },
      ],
    });
  const all = run(0, 0);
  assert.ok(
    all.counts.timeouts > 0 && all.counts.retried > 0,
    `timeouts ${all.counts.timeouts}, retried ${all.counts.retried}`,
  );
  const warmedUp = run(2000, 0);
  assert.ok(warmedUp.counts.completed > 1000);
  assert.equal(warmedUp.counts.timeouts, 0, 'timeouts during the warm-up');
  assert.equal(warmedUp.counts.retried, 0, 'retries during the warm-up');
  const later = run(2000, 2000);
  assert.equal(later.counts.timeouts, all.counts.timeouts, 'the same freeze after the warm-up');
  assert.equal(later.counts.retried, all.counts.retried);
});

test('series.replicas counts replicas taking new requests: not a draining one, a frozen one until it is stopped', () => {
  // 500 ms requests: a replica stopped at 1.1 s drains until about 1.5 s, through the next bucket's start.
  const series = (events: TimelineEvent[]) =>
    simulate({
      replicas: 3,
      policy: 'round-robin',
      clients: { kind: 'closed', count: 6 },
      service: fixed(500),
      durationMs: 4000,
      events,
    }).series.replicas;
  assert.deepEqual(series([{ atMs: 1100, action: 'stop', replica: 1 }]), [3, 3, 2, 2]);
  assert.deepEqual(series([{ atMs: 1100, action: 'kill', replica: 1 }]), [3, 3, 2, 2]);
  assert.deepEqual(series([{ atMs: 1100, action: 'freeze', replica: 1 }]), [3, 3, 3, 3], 'a frozen replica looks up');
  assert.deepEqual(
    series([
      { atMs: 1100, action: 'freeze', replica: 1 },
      { atMs: 1200, action: 'stop', replica: 1 },
    ]),
    [3, 3, 2, 2],
  );
});

test('utilization and the per-bucket series cover the run only: work planned past its end is not counted', () => {
  // One client of 1000 ms requests for 1.5 s: the second request runs 1000-2000, half of it in the run.
  const r = simulate({
    replicas: 1,
    policy: 'round-robin',
    clients: { kind: 'closed', count: 1 },
    service: fixed(1000),
    durationMs: 1500,
  });
  assert.equal(r.replicas[0]!.utilization, 1);
  assert.equal(r.replicas[0]!.meanQueue, 1);
  assert.deepEqual(r.series.utilization, [[1, 1]]);
  assert.deepEqual(r.series.queue, [[1, 1]]);
  // A busy random run whose end cuts a bucket and requests short: no bucket over 1.
  const busy = simulate({
    replicas: 2,
    policy: 'round-robin',
    clients: { kind: 'closed', count: 5 },
    service: exp(30),
    durationMs: 2500,
  });
  for (const [i, u] of busy.series.utilization.entries()) {
    assert.ok(
      u.every((x) => x <= 1 + 1e-9),
      `replica ${i}: ${u.join(', ')}`,
    );
    assert.ok(busy.replicas[i]!.utilization <= 1 + 1e-9);
  }
});

// --- stale load information -----------------------------------------------------------------

/** 100 replicas, exp(1 ms) service, Poisson arrivals at 90 % of their capacity, ≈110k answers. */
const farm = (policy: Policy, staleMs: number, durationMs = 1500): SimResult =>
  simulate({
    replicas: 100,
    policy,
    staleMs,
    clients: { kind: 'open', ratePerS: 90_000 },
    service: exp(1),
    durationMs,
    warmupMs: 300,
  });

test('stale load counts (20 ms, 20 service times): least connections herds, two choices barely suffers', () => {
  const lc = farm('least-connections', 20);
  const p2c = farm('power-of-two-choices', 20);
  assert.ok(
    lc.latency.p99 >= 3 * p2c.latency.p99,
    `p99: least connections ${lc.latency.p99}, two choices ${p2c.latency.p99}`,
  );
  // Live counts: least connections is at least as good as two choices.
  const lcLive = farm('least-connections', 0);
  const p2cLive = farm('power-of-two-choices', 0);
  assert.ok(
    lcLive.latency.p95 <= 1.5 * p2cLive.latency.p95,
    `p95: least connections ${lcLive.latency.p95}, two choices ${p2cLive.latency.p95}`,
  );
  assert.ok(lc.latency.p99 > 3 * lcLive.latency.p99, 'staleness is what hurt least connections');
});

test('stale load counts change nothing for a policy that does not read them (random)', () => {
  assert.deepEqual(farm('random', 20, 600).latency, farm('random', 0, 600).latency);
});

// --- autoscale ------------------------------------------------------------------------------

const autoscaled = (ratePerS: number) =>
  simulate({
    replicas: 1,
    policy: 'round-robin',
    clients: { kind: 'open', ratePerS },
    service: exp(1),
    durationMs: 30_000,
    autoscale: { hpa: { ...DEFAULT_HPA, min: 1, max: 8 }, syncMs: 1000, startupMs: 500 },
  });

test('autoscale: a load needing ~3 cores scales up to ≥ 4 replicas; a light load stays at 1', () => {
  const heavy = autoscaled(3000);
  const decisions = heavy.autoscale!;
  assert.ok(decisions.length >= 25, `a decision per sync: ${decisions.length}`);
  assert.ok(
    decisions.some((d) => d.reason === 'scale-up'),
    'it scaled up',
  );
  const most = Math.max(...decisions.map((d) => d.desired));
  assert.ok(most >= 4 && most <= 8, `desired at most ${most}`);
  const last = heavy.series.replicas.at(-1)!;
  assert.ok(last >= 4, `replicas at the end: ${last} (series ${heavy.series.replicas.join(',')})`);
  assert.ok(
    heavy.replicas.length >= 4 && heavy.replicas.slice(1).every((r) => r.served > 0),
    'the new replicas got requests',
  );

  const light = autoscaled(300);
  assert.ok(
    light.autoscale!.every((d) => d.desired === 1),
    'a light load is never scaled',
  );
  assert.ok(light.series.replicas.every((n) => n === 1));
  assert.equal(light.replicas.length, 1);
});

// --- memory ---------------------------------------------------------------------------------

/** A gc() function: the one --expose-gc gives, or the same switched on now (as jest's leak detector does). */
function findGc(): (() => void) | string {
  const g = (globalThis as { gc?: () => void }).gc;
  if (typeof g === 'function') return g;
  try {
    setFlagsFromString('--expose-gc');
    const f: unknown = runInNewContext('gc');
    if (typeof f === 'function') return f as () => void;
  } catch {
    /* fall through */
  }
  return 'no gc() (run node with --expose-gc)';
}
const gc = findGc();

test(
  'memory is flat in the number of requests: the live heap near the end of 1M requests ≈ that of 200k',
  { skip: typeof gc === 'string' ? gc : false },
  () => {
    const collect = gc as () => void;
    const original = PICKERS['round-robin'];
    /** Live heap growth, measured inside the run: a gc at the last request's pick, while the engine's state is reachable. */
    const growth = (n: number) => {
      let picks = 0;
      let during = 0;
      PICKERS['round-robin'] = (replicas, cursor, rng) => {
        if (++picks === n) {
          collect();
          during = process.memoryUsage().heapUsed;
        }
        return original(replicas, cursor, rng);
      };
      try {
        collect();
        const before = process.memoryUsage().heapUsed;
        const r = simulate({ ...singleServer(0.8, exp(1)), durationMs: (n / 0.8) * 1.1, warmupMs: 0, maxRequests: n });
        assert.equal(r.counts.sent, n);
        assert.equal(picks, n);
        return { before, during, growth: during - before };
      } finally {
        PICKERS['round-robin'] = original;
      }
    };
    growth(200_000); // warm the code paths first, so both measured runs see the same compiled code
    const small = growth(200_000);
    const large = growth(1_000_000);
    assert.ok(large.during <= 1.5 * small.during, `heap ${large.during} B at 1M vs ${small.during} B at 200k`);
    // Keeping even 5 bytes per request would show as 4 MB more for the 800k extra requests.
    assert.ok(large.growth - small.growth < 4_000_000, `growth ${large.growth} B at 1M vs ${small.growth} B at 200k`);
  },
);

// --- validate -------------------------------------------------------------------------------

test('validate: a config that makes no sense throws a RangeError naming the setting', () => {
  const ok: SimConfig = {
    replicas: 3,
    policy: 'round-robin',
    clients: { kind: 'closed', count: 1 },
    service: fixed(1),
    durationMs: 100,
  };
  assert.doesNotThrow(() => validate(ok));
  const bad: [Partial<SimConfig>, RegExp][] = [
    [{ replicas: 0 }, /replicas/],
    [{ replicas: 1.5 }, /replicas/],
    [{ policy: 'fastest' as Policy }, /policy/],
    [{ hogs: [{ replica: 3, ms: fixed(30), connections: 1 }] }, /hog/],
    [{ warmupMs: 100 }, /warmupMs/],
    [{ warmupMs: 200 }, /warmupMs/],
    [{ events: [{ atMs: 10, action: 'kill', replica: 5 }] }, /kill/],
  ];
  for (const [change, message] of bad) {
    const config = { ...ok, ...change };
    assert.throws(
      () => validate(config),
      (e: unknown) => e instanceof RangeError && message.test(e.message),
      JSON.stringify(change),
    );
    assert.throws(() => simulate(config), RangeError, `simulate checks too: ${JSON.stringify(change)}`);
  }
});

test('validate: a fractional event replica, a seed that is not a 32-bit whole number and a bad autoscaler are RangeErrors', () => {
  // Before: replica 0.5 was a TypeError inside the run, seed 1.5 ran as seed 1, min 0 ran.
  const ok: SimConfig = {
    replicas: 3,
    policy: 'round-robin',
    clients: { kind: 'closed', count: 1 },
    service: fixed(1),
    durationMs: 2000,
  };
  const autoscale = (hpa: Partial<typeof DEFAULT_HPA>): Partial<SimConfig> => ({
    autoscale: { hpa: { ...DEFAULT_HPA, ...hpa }, syncMs: 1000, startupMs: 0 },
  });
  for (const good of [
    { seed: -(2 ** 31) },
    { seed: 2 ** 31 - 1 },
    { events: [{ atMs: 10, action: 'kill', replica: 2 }] },
    autoscale({}),
  ] as Partial<SimConfig>[]) {
    assert.doesNotThrow(() => simulate({ ...ok, ...good }), JSON.stringify(good));
  }
  const bad: [Partial<SimConfig>, RegExp][] = [
    [{ events: [{ atMs: 10, action: 'kill', replica: 0.5 }] }, /kill/],
    [{ events: [{ atMs: 10, action: 'freeze', replica: 1.5 }] }, /freeze/],
    [{ seed: 1.5 }, /seed/],
    [{ seed: 2 ** 31 }, /seed/],
    [{ seed: Number.NaN }, /seed/],
    [autoscale({ min: 0 }), /autoscaler: min/],
    [autoscale({ min: 3, max: 2 }), /autoscaler: max/],
    [autoscale({ target: 0 }), /autoscaler: target/],
  ];
  for (const [change, message] of bad) {
    const config = { ...ok, ...change };
    assert.throws(
      () => validate(config),
      (e: unknown) => e instanceof RangeError && message.test(e.message),
      JSON.stringify(change),
    );
    assert.throws(() => simulate(config), RangeError, `simulate checks too: ${JSON.stringify(change)}`);
  }
});
