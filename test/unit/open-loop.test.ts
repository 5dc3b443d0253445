// The open-loop generator's schedule (measure/lib/load/open-loop.ts), without a server: a fixed
// rate is exactly its interval apart, Poisson arrivals have the rate's mean gap and an exponential
// spread, and repeat with their seed. And the stall report says in words which side set the open
// loop's latency. test/e2e/open-loop.test.ts sends real requests.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { schedule } from '../../measure/lib/load/open-loop.ts';
import { render, shape } from '../../results/stall/report.ts';
import { examples } from '../../results/stall/examples.ts';

test('a fixed schedule: rate × duration requests, 1/rate apart, the first at once', () => {
  const t = schedule(400, 3, 'fixed');
  assert.equal(t.length, 1200);
  assert.equal(t[0], 0);
  for (let i = 1; i < t.length; i++) assert.ok(Math.abs(t[i]! - t[i - 1]! - 2.5) < 1e-9);
});

test('a Poisson schedule: the mean gap is 1/rate, the gaps spread as an exponential does, and a seed repeats it', () => {
  const t = schedule(1000, 30, 'poisson', 7);
  const gaps = t.map((x, i) => x - (i ? t[i - 1]! : 0));
  const mean = gaps.reduce((a, b) => a + b, 0) / gaps.length;
  const sd = Math.sqrt(gaps.reduce((a, g) => a + (g - mean) ** 2, 0) / gaps.length);
  assert.ok(Math.abs(mean - 1) < 0.03, `mean gap ${mean} ms`);
  assert.ok(Math.abs(sd / mean - 1) < 0.05, `an exponential's spread equals its mean: ${sd / mean}`);
  assert.ok(t.every((x) => x < 30_000));
  assert.deepEqual(
    schedule(1000, 1, 'poisson', 7),
    t.filter((x) => x < 1000),
  );
  assert.notDeepEqual(schedule(1000, 1, 'poisson', 8), schedule(1000, 1, 'poisson', 7));
});

test("the stall report says which side set the open loop's latency", () => {
  const r = examples.healthy();
  assert.match(render(r, false), /the server, not the generator, set its latency/);
  r.passes.find((p) => p.loop === 'open-loop')!.generatorLimited = true;
  assert.match(render(r, false), /late enough that the generator, not the server, set its latency/);
});

test("the open loop 'sent late' when its own lateness reached 5 % of the stall, even if the stall set its p99", () => {
  const r = examples.healthy();
  const open = r.passes.find((p) => p.loop === 'open-loop')!;
  const sent = () => shape(r).find((l) => l.startsWith('stall  open-loop  sent'));
  assert.equal(sent(), 'stall  open-loop  sent  on-time');
  open.latenessP99Ms = 60; // a busy generator, 60 ms late at p99, against a 1,002 ms stall
  assert.equal(open.generatorLimited, false, 'its p99 latency is still the stall');
  assert.equal(sent(), 'stall  open-loop  sent  late');
});
