// Proves the simulator (sim/engine.ts): runs are reproducible from a seed; M/M/1, M/D/1, Little's law
// and the closed-loop response-time law come out as queueing theory says; it balances with the
// balancer's own pickers; kill, freeze and stop change what they should; stale load counts hurt
// least connections far more than two choices; the HPA scales up under load; memory stays flat.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { simulate, validate, type SimConfig, type SimResult } from '../sim/engine.ts';
import { exp, fixed } from '../sim/dist.ts';
import { DEFAULT_HPA } from '../servers/lib/hpa.ts';
import { PICKERS, type Policy } from '../servers/lib/policies.ts';
import { failOnWarnings } from './helpers.ts';

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
  assert.ok(!within(mm1At08().latency.mean, md1Mean(0.8), 0.03), `M/M/1 run (${mm1At08().latency.mean}) passes for M/D/1 (${md1Mean(0.8)})`);
  assert.ok(!within(md1At08().latency.mean, mm1Mean(0.8), 0.03), `M/D/1 run (${md1At08().latency.mean}) passes for M/M/1 (${mm1Mean(0.8)})`);
});

test('closed loop, no think time: throughput 1000/S req/s and every response takes N·S', () => {
  const N = 8;
  const S = 2;
  const r = simulate({ replicas: 1, policy: 'round-robin', clients: { kind: 'closed', count: N }, service: fixed(S), durationMs: 10_000, warmupMs: 1000 });
  assertWithin(r.throughput, 1000 / S, 0.005, 'throughput');
  // The histogram keeps 3 significant digits: 16 ms reads as 16.007 at worst.
  for (const k of ['p50', 'p99', 'max', 'mean'] as const) assertWithin(r.latency[k], N * S, 0.001, `latency ${k}`);
  assertWithin(r.replicas[0]!.utilization, 1, 0.001, 'utilization');
  assertWithin(r.replicas[0]!.meanQueue, N, 0.001, 'requests in the replica');
});

// --- policies -------------------------------------------------------------------------------

test('round robin over 3 equal replicas in a closed loop serves them evenly, in the order app1, app2, app3', () => {
  // Random service times, but every request answered before the end: served = sent to each.
  const r = simulate({ replicas: 3, policy: 'round-robin', clients: { kind: 'closed', count: 5 }, service: exp(1), durationMs: 60_000, maxRequests: 30_001 });
  const served = r.replicas.map((x) => x.served);
  assert.equal(r.counts.completed, 30_001);
  assert.ok(Math.max(...served) - Math.min(...served) <= 1, `served ${served.join(', ')}`);
  // One client, n requests: the first goes to app1, then app2, app3, app1 again.
  const order = [1, 2, 3, 4, 5].map((n) =>
    simulate({ replicas: 3, policy: 'round-robin', clients: { kind: 'closed', count: 1 }, service: fixed(1), durationMs: 1000, maxRequests: n }).replicas.map((x) => x.served),
  );
  assert.deepEqual(order, [
    [1, 0, 0],
    [1, 1, 0],
    [1, 1, 1],
    [2, 1, 1],
    [2, 2, 1],
  ]);
});

test("the engine picks with the balancer's own pickers (PICKERS of servers/lib/policies.ts)", () => {
  const original = PICKERS['random'];
  let calls = 0;
  try {
    // Counting: one pick per try.
    PICKERS['random'] = (replicas, cursor, rng) => {
      calls++;
      return original(replicas, cursor, rng);
    };
    const counted = simulate({ replicas: 3, policy: 'random', clients: { kind: 'closed', count: 2 }, service: fixed(1), durationMs: 1000, maxRequests: 50 });
    assert.equal(counted.counts.sent, 50);
    assert.equal(calls, 50);
    // Obeyed: a picker that always answers app3 gets app3 every request.
    PICKERS['random'] = (_replicas, cursor) => ({ index: 2, cursor });
    const forced = simulate({ replicas: 3, policy: 'random', clients: { kind: 'closed', count: 2 }, service: fixed(1), durationMs: 1000, maxRequests: 50 });
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
  const r = { rr: run('round-robin'), random: run('random'), lc: run('least-connections'), p2c: run('power-of-two-choices') };
  const hogged = (x: SimResult) => x.replicas[2]!.served / x.counts.completed;
  for (const [name, x] of Object.entries(r)) assert.ok(x.replicas[2]!.hogServed > 500, `${name}: the hog runs (${x.replicas[2]!.hogServed})`);
  // Blind policies give the hogged replica its third of the requests.
  assert.ok(hogged(r.rr) > 0.3 && hogged(r.random) > 0.3, `round robin ${hogged(r.rr)}, random ${hogged(r.random)}`);
  for (const name of ['lc', 'p2c'] as const) {
    assert.ok(hogged(r[name]) < 0.02, `${name} sends the hogged replica ${(100 * hogged(r[name])).toFixed(1)} % of requests`);
    for (const blind of ['rr', 'random'] as const) {
      assert.ok(r[name].latency.p95 * 10 <= r[blind].latency.p95, `${name} p95 ${r[name].latency.p95} vs ${blind} p95 ${r[blind].latency.p95}`);
    }
  }
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
  const r = simulate({ replicas: 1, policy: 'round-robin', clients: { kind: 'closed', count: 10 }, service: fixed(30), durationMs: 5000, failover: { responseTimeoutMs: 200 } });
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

// --- stale load information -----------------------------------------------------------------

/** 100 replicas, exp(1 ms) service, Poisson arrivals at 90 % of their capacity, ≈110k answers. */
const farm = (policy: Policy, staleMs: number, durationMs = 1500): SimResult =>
  simulate({ replicas: 100, policy, staleMs, clients: { kind: 'open', ratePerS: 90_000 }, service: exp(1), durationMs, warmupMs: 300 });

test('stale load counts (20 ms, 20 service times): least connections herds, two choices barely suffers', () => {
  const lc = farm('least-connections', 20);
  const p2c = farm('power-of-two-choices', 20);
  assert.ok(lc.latency.p99 >= 3 * p2c.latency.p99, `p99: least connections ${lc.latency.p99}, two choices ${p2c.latency.p99}`);
  // Live counts: least connections is at least as good as two choices.
  const lcLive = farm('least-connections', 0);
  const p2cLive = farm('power-of-two-choices', 0);
  assert.ok(lcLive.latency.p95 <= 1.5 * p2cLive.latency.p95, `p95: least connections ${lcLive.latency.p95}, two choices ${p2cLive.latency.p95}`);
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
  assert.ok(heavy.replicas.length >= 4 && heavy.replicas.slice(1).every((r) => r.served > 0), 'the new replicas got requests');

  const light = autoscaled(300);
  assert.ok(light.autoscale!.every((d) => d.desired === 1), 'a light load is never scaled');
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

test('memory is flat in the number of requests: the live heap near the end of 1M requests ≈ that of 200k', { skip: typeof gc === 'string' ? gc : false }, () => {
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
});

// --- validate -------------------------------------------------------------------------------

test('validate: a config that makes no sense throws a RangeError naming the setting', () => {
  const ok: SimConfig = { replicas: 3, policy: 'round-robin', clients: { kind: 'closed', count: 1 }, service: fixed(1), durationMs: 100 };
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
    assert.throws(() => validate(config), (e: unknown) => e instanceof RangeError && message.test(e.message), JSON.stringify(change));
    assert.throws(() => simulate(config), RangeError, `simulate checks too: ${JSON.stringify(change)}`);
  }
});
