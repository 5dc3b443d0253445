// Proves the simulator's users and lesson 11's spike in it (sim/users.ts, sim/clients.ts,
// sim/scenarios/overload.ts): an open loop's rate follows its phases; users who give up leave the
// replica working for nobody; the breaker moves as cockatiel's does; and the spike's three kinds of
// users read as the lab's lines say over 20 seeds and the service times this machine has shown,
// while each line flips when its mechanism is taken out of the model.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { simulate, validate, type SimConfig } from '../../sim/engine.ts';
import { fixed } from '../../sim/dist.ts';
import { Users } from '../../sim/users.ts';
import { simulateSpikes } from '../../sim/scenarios/overload.ts';
import { SPIKE_PLANS } from '../../results/overload/spike.ts';
import { shape } from '../../results/overload/report.ts';
import { examples } from '../../results/overload/examples.ts';
import { splitLine } from '../../results/report/shape.ts';

const base: SimConfig = {
  replicas: 1,
  policy: 'round-robin',
  loop: 'fifo',
  service: fixed(10),
  clients: { kind: 'open', ratePerS: 50 },
  failover: { retries: 0, responseTimeoutMs: 3_600_000 },
  durationMs: 4000,
};

test('an open loop follows its phases: 50/s, then 200/s from 1 s, then 50/s from 2 s', () => {
  const r = simulate({
    ...base,
    service: fixed(1),
    clients: {
      kind: 'open',
      ratePerS: 50,
      phases: [
        { atMs: 1000, ratePerS: 200 },
        { atMs: 2000, ratePerS: 50 },
      ],
    },
    users: { timeoutMs: 10_000, retries: 0, bucketMs: 1000 },
    loadMs: 3000,
  });
  const perSecond = r.users!.buckets.slice(0, 3).map((b) => b.users);
  assert.ok(Math.abs(perSecond[0]! - 50) <= 15 && Math.abs(perSecond[2]! - 50) <= 15, String(perSecond));
  assert.ok(Math.abs(perSecond[1]! - 200) <= 40, String(perSecond));
});

test('users who give up above capacity: the replica finishes their attempts for nobody; without a timeout none is wasted', () => {
  const over = simulate({
    ...base,
    clients: { kind: 'open', ratePerS: 200 },
    users: { timeoutMs: 500, retries: 0, bucketMs: 250 },
  });
  const u = over.users!;
  assert.equal(u.attempts, u.users);
  assert.ok(u.timedOut > u.users / 3, `${u.timedOut} of ${u.users} timed out`);
  assert.ok(u.wasted > 0.2 * u.finished, `${u.wasted} of ${u.finished} wasted`);
  const patient = simulate({
    ...base,
    clients: { kind: 'open', ratePerS: 200 },
    users: { timeoutMs: 60_000, retries: 2, bucketMs: 250 },
  });
  assert.equal(patient.users!.wasted, 0);
  assert.equal(patient.users!.attempts, patient.users!.users);
});

test("the breaker, as cockatiel's: 5 timeouts open it, it refuses for 500 ms, one trial goes and the rest wait for it", () => {
  const u = new Users(
    { timeoutMs: 500, retries: 2, bucketMs: 250, breaker: { consecutive: 5, halfOpenAfterMs: 500 } },
    1000,
  );
  const user = { dueAt: 0, attempts: 0 };
  for (let i = 0; i < 4; i++) assert.deepEqual(u.settle('closed', false, 100), []);
  assert.equal(u.pass(user, 100), 'closed');
  u.settle('closed', true, 100); // an answer sets the count back to 0
  for (let i = 0; i < 5; i++) u.settle('closed', false, 200);
  assert.equal(u.pass(user, 699), 'refused');
  assert.equal(u.pass(user, 700), 'trial');
  const held = { dueAt: 700, attempts: 0 };
  assert.equal(u.pass(held, 710), 'wait');
  assert.deepEqual(u.settle('trial', false, 1200), [held]); // the trial timed out: open again
  assert.equal(u.pass(held, 1200), 'refused');
  assert.equal(u.pass(user, 1700), 'trial');
  assert.deepEqual(u.settle('trial', true, 1750), []);
  assert.equal(u.pass(user, 1750), 'closed');
});

test('the spike in the model, 20 seeds × 8 to 17 ms a request: retries stay overloaded, no retries and the breaker recover', () => {
  for (const serviceMs of [8, 12, 17])
    for (let seed = 1; seed <= 20; seed++)
      for (const plan of [SPIKE_PLANS.quick, SPIKE_PLANS.full]) {
        const [none, retries, breaker] = simulateSpikes({ serviceMs, timeoutMs: 500, retries: 2, plan, seed }).runs;
        const at = `seed ${seed}, ${serviceMs} ms, afterS ${plan.afterS}`;
        assert.notEqual(none!.recoveredAfterMs, null, at);
        assert.equal(retries!.recoveredAfterMs, null, at);
        assert.ok(retries!.attemptsPerUserAfter >= 1.5, at);
        assert.notEqual(breaker!.recoveredAfterMs, null, at);
        assert.ok(breaker!.refusedByBreaker > 0, at);
      }
});

/** The model's verdicts as the lab's shape prints them, for the model's rows of `runs`. */
function modelVerdicts(runs: ReturnType<typeof simulateSpikes>['runs']): string[] {
  const r = examples.healthy();
  r.model = runs;
  return shape(r)
    .filter((l) => l.startsWith('overload  model'))
    .map((l) => splitLine(l).verdict);
}

test('each model line flips with its mechanism taken out: retries that never come, a line that never drains, a breaker that never opens', () => {
  const m = { serviceMs: 12, timeoutMs: 500, retries: 2, plan: SPIKE_PLANS.quick, seed: 1 };
  assert.deepEqual(modelVerdicts(simulateSpikes(m).runs), ['stays-overloaded', 'recovers', 'recovers']);
  // Retries: 0 for every kind of user.
  assert.equal(modelVerdicts(simulateSpikes({ ...m, retries: 0 }).runs)[0], 'recovers');
  // A spike so long the line outlasts the run, even without retries.
  const long = { ...m, plan: { ...SPIKE_PLANS.quick, spikeS: 3 } };
  assert.equal(modelVerdicts(simulateSpikes(long).runs)[1], 'stays-overloaded');
  // A breaker that never opens is the retries run again.
  const never = simulateSpikes({ ...m, breaker: { consecutive: 1_000_000, halfOpenAfterMs: 500 } }).runs;
  assert.equal(never[2]!.refusedByBreaker, 0);
  assert.equal(modelVerdicts(never)[2], 'stays-overloaded');
});

test('validate: users need an open loop, sensible settings, and phases in rising order', () => {
  const users = { timeoutMs: 500, retries: 2, bucketMs: 250 };
  assert.throws(() => validate({ ...base, clients: { kind: 'closed', count: 4 }, users }), /users need an open loop/);
  assert.throws(() => validate({ ...base, users: { ...users, retries: 11 } }), /users\.retries/);
  assert.throws(() => validate({ ...base, users: { ...users, timeoutMs: 0 } }), /users\.timeoutMs/);
  assert.throws(
    () => validate({ ...base, users: { ...users, breaker: { consecutive: 0, halfOpenAfterMs: 500 } } }),
    /users\.breaker\.consecutive/,
  );
  assert.throws(
    () =>
      validate({
        ...base,
        clients: {
          kind: 'open',
          ratePerS: 5,
          phases: [
            { atMs: 900, ratePerS: 5 },
            { atMs: 100, ratePerS: 5 },
          ],
        },
      }),
    /rising order/,
  );
  assert.throws(
    () => validate({ ...base, clients: { kind: 'open', ratePerS: 5, phases: [{ atMs: 9, ratePerS: 0 }] } }),
    /ratePerS > 0/,
  );
});
