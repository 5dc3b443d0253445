// The Traffic Lab's pure parts: the form's settings (every bad field named with its range) and
// the stepped simulation the page runs (the same result as simulate(), actions at the current time).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULTS, parseSettings, simConfig, type Settings } from '../../web/page/settings.ts';
import { simulate, SimSession } from '../../sim/engine.ts';
import type { SimConfig } from '../../sim/types.ts';
import { modelConfig, parseLiveAction, parseLiveSettings } from '../../web/page/live-settings.ts';
import { failOnWarnings } from '../helpers.ts';

failOnWarnings();

/** The defaults as a form sends them: every value a string. */
const asForm = (s: Settings = DEFAULTS) => Object.fromEntries(Object.entries(s).map(([k, v]) => [k, String(v)]));

test('the defaults, as strings from the form, parse back to themselves', () => {
  assert.deepEqual(parseSettings(asForm()), { ok: true, settings: DEFAULTS });
  const large = parseSettings({ ...asForm(), topology: 'large', replicas: '3' });
  assert.equal(large.ok && large.settings.replicas, 100);
  const single = parseSettings({ ...asForm(), topology: 'single', replicas: '7' });
  assert.equal(single.ok && single.settings.replicas, 1);
});

test('each bad field is named, with what it may be', () => {
  const cases: [Record<string, unknown>, string, RegExp][] = [
    [
      { policy: 'fastest' },
      'policy',
      /one of round-robin, least-connections, random, power-of-two-choices, ip-hash; got "fastest"/,
    ],
    [{ rate: '0' }, 'rate', /1 to 50000 req\/s; got "0"/],
    [{ rate: 'NaN' }, 'rate', /got "NaN"/],
    [{ connections: '2.5' }, 'connections', /a whole number; got "2.5"/],
    [{ replicas: '11' }, 'replicas', /1 to 10/],
    [{ serviceMs: '' }, 'serviceMs', /got ""/],
    [{ durationS: undefined }, 'durationS', /got null/],
    [{ topology: 'mesh' }, 'topology', /one of single, balanced, large/],
    [{ topology: 'single', degrade: 'true' }, 'degrade', /at least 2 replicas/],
  ];
  for (const [change, field, message] of cases) {
    const r = parseSettings({ ...asForm(), ...change });
    assert.equal(r.ok, false, JSON.stringify(change));
    if (!r.ok) {
      assert.equal(r.field, field);
      assert.match(r.message, message);
    }
  }
});

test('a session stepped in uneven stretches ends with exactly what simulate() gives', () => {
  const config = {
    ...simConfig({ ...DEFAULTS, degrade: true, durationS: 5 }),
    events: [{ atMs: 2000, action: 'kill' as const, replica: 0 }],
  };
  const whole = simulate(config);
  const session = new SimSession(config);
  for (let t = 0; !session.done; t += 137) session.advance(t, 500);
  assert.deepEqual(session.result(), whole);
});

test('an action acts at the current time: a kill mid-run resets tries, which are retried', () => {
  const config = simConfig({ ...DEFAULTS, durationS: 4 });
  const session = new SimSession(config);
  session.advance(2000);
  assert.equal(session.totals().retried, 0);
  session.act('kill', 1);
  session.advance(Infinity);
  assert.equal(session.replicas()[1]!.state, 'dead');
  assert.ok(session.totals().retried > 0, 'the tries the kill reset were retried');
  assert.equal(session.totals().failed, 0, 'and none failed: two replicas were left');
  assert.throws(() => session.act('kill', 3), /a kill needs a replica in 0\.\.2; got 3/);
  assert.throws(() => session.act('explode' as never, 0), /unknown action 'explode'/);
});

test('a second, once read, is dropped: a long run keeps only the seconds not yet read', () => {
  const session = new SimSession(simConfig({ ...DEFAULTS, durationS: 3 }));
  session.advance(2000);
  const first = session.takeSecond(0);
  assert.ok(first.completed > 0 && first.latency !== undefined);
  assert.equal(session.takeSecond(0).completed, 0);
  assert.equal(session.world.metrics.seconds[0], undefined);
});

test('live settings: form strings parse; each bad field is named with its range', () => {
  const good = { replicas: '3', policy: 'ip-hash', connections: '8', rate: '0', serviceMs: '0.5', durationS: '30' };
  assert.deepEqual(parseLiveSettings(good), {
    ok: true,
    settings: { replicas: 3, policy: 'ip-hash', connections: 8, rate: 0, serviceMs: 0.5, durationS: 30 },
  });
  const bad: [Record<string, unknown>, string, RegExp][] = [
    [{ ...good, replicas: '7' }, 'replicas', /1 to 6, a whole number/],
    [{ ...good, connections: '2.5' }, 'connections', /a whole number/],
    [{ ...good, rate: '5001' }, 'rate', /0 to 5000/],
    [{ ...good, rate: '0.5' }, 'rate', /a whole number/],
    [{ ...good, serviceMs: '' }, 'serviceMs', /0\.1 to 50 ms/],
    [{ ...good, durationS: '601' }, 'durationS', /5 to 600 s/],
    [{ ...good, policy: 'sticky-cookie' }, 'policy', /one of/],
  ];
  for (const [raw, field, message] of bad) {
    const r = parseLiveSettings(raw);
    assert.ok(!r.ok && r.field === field && message.test(r.message), `${field}: ${JSON.stringify(r)}`);
  }
  assert.equal((parseLiveSettings(null) as { field: string }).field, 'body');
});

test('ip-hash in the simulator: client networks are 1 to 1000; the model of a live run puts every client on one network, as on 127.0.0.1', () => {
  const sim = parseSettings({ ...asForm(), policy: 'ip-hash', networks: '6' });
  assert.ok(sim.ok && sim.settings.policy === 'ip-hash');
  assert.equal(sim.ok && simConfig(sim.settings).clientNetworks, 6);
  for (const networks of ['0', '1001', '2.5', '']) {
    const r = parseSettings({ ...asForm(), policy: 'ip-hash', networks });
    assert.ok(!r.ok && r.field === 'networks' && /1 to 1000, a whole number/.test(r.message), JSON.stringify(r));
  }
  const sticky = parseSettings({ ...asForm(), policy: 'sticky-cookie' });
  assert.ok(!sticky.ok && sticky.field === 'policy', JSON.stringify(sticky));
  const model = modelConfig({ replicas: 3, policy: 'ip-hash', connections: 6, rate: 0, serviceMs: 0.5, durationS: 5 });
  assert.equal(model.clientNetworks, 1);
  const served = simulate(model).replicas.map((r) => r.served);
  assert.equal(served.filter((n) => n > 0).length, 1, `one replica serves every loopback client: ${served.join(', ')}`);
});

test('the model beside a live run with "degrade" hogs the same replica as the lab: round robin\'s p95 far above an undegraded model\'s', () => {
  const live = { replicas: 3, policy: 'round-robin' as const, connections: 6, rate: 0, serviceMs: 1, durationS: 10 };
  assert.equal(modelConfig(live).hogs, undefined);
  const hogged = modelConfig(live, 1, 2);
  assert.deepEqual(
    hogged.hogs?.map((h) => h.replica),
    [2],
  );
  const p95 = (c: SimConfig) => simulate(c).latency.p95;
  assert.ok(p95(hogged) >= 10 * p95(modelConfig(live)), `hogged ${p95(hogged)} ms, not ${p95(modelConfig(live))} ms`);
});

test('live actions: a replica is app1 to app99, a policy one of the live ones', () => {
  assert.deepEqual(parseLiveAction({ action: 'kill', replica: 'app2' }), {
    ok: true,
    action: { action: 'kill', replica: 'app2' },
  });
  assert.deepEqual(parseLiveAction({ action: 'add', replica: 'ignored' }), { ok: true, action: { action: 'add' } });
  assert.deepEqual(parseLiveAction({ action: 'policy', policy: 'random' }), {
    ok: true,
    action: { action: 'policy', policy: 'random' },
  });
  for (const [raw, field] of [
    [{ action: 'kill' }, 'replica'],
    [{ action: 'hog', replica: 'app100' }, 'replica'],
    [{ action: 'policy', policy: 'fifo' }, 'policy'],
    [{ action: 'reboot' }, 'action'],
    ['kill', 'body'],
  ] as const) {
    const r = parseLiveAction(raw);
    assert.ok(!r.ok && r.field === field, JSON.stringify(r));
  }
});
