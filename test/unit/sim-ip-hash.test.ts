// Proves ip-hash in the simulator: it keys on the client's network with the balancer's own
// ipHashKey and pickByKey, so every loopback client (one network, the default) lands on one
// replica, as in the lab; many networks spread in proportion to how their keys hash; a kill moves
// only the dead replica's keys, to the next replica; bad settings are RangeErrors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SimSession, simulate, validate, type SimConfig } from '../../sim/engine.ts';
import { fixed } from '../../sim/dist.ts';
import { hashKey, ipHashKey } from '../../core/policies.ts';
import { failOnWarnings } from '../helpers.ts';

failOnWarnings();

/** The replica nginx-style ip_hash gives network `n` of the simulator's clients (10.x.y.0/24) among `replicas`. */
const home = (n: number, replicas: number) => hashKey(ipHashKey(`10.${n >> 8}.${n & 255}.1`)) % replicas;

const base: SimConfig = {
  replicas: 3,
  policy: 'ip-hash',
  clients: { kind: 'closed', count: 6 },
  service: fixed(0.5),
  durationMs: 5000,
};

test('ip-hash with one client network (loopback): every request goes to the one replica its key hashes to', () => {
  const r = simulate(base);
  const served = r.replicas.map((x) => x.served);
  const expected = [0, 0, 0];
  expected[home(0, 3)] = r.counts.completed;
  assert.deepEqual(served, expected);
  assert.ok(r.counts.completed > 1000, `${r.counts.completed} answers`);
  // Round robin with the same clients spreads them: the test would see it if ip-hash fell back to it.
  const rr = simulate({ ...base, policy: 'round-robin' }).replicas.map((x) => x.served);
  assert.ok(
    rr.every((n) => n > 0),
    `round robin served ${rr.join(', ')}`,
  );
});

test("ip-hash with many networks spreads requests as the networks' keys hash: open loop within 10 %, closed loop exactly per client", () => {
  // Six networks hash 3, 2 and 1 to the three replicas: a spread that round robin (a third each) would miss.
  const networks = 6;
  const share = [0, 0, 0];
  for (let n = 0; n < networks; n++) share[home(n, 3)]! += 1 / networks;
  const open = simulate({
    ...base,
    clients: { kind: 'open', ratePerS: 2000 },
    clientNetworks: networks,
    durationMs: 20_000,
  });
  for (const [i, x] of open.replicas.entries()) {
    const got = x.served / open.counts.completed;
    assert.ok(
      Math.abs(got / share[i]! - 1) <= 0.1,
      `replica ${i}: ${(100 * got).toFixed(1)} % of requests, its networks ${(100 * share[i]!).toFixed(1)} %`,
    );
  }
  // Closed loop, one client per network, long think time: each client sends about equally often.
  const clients = 6;
  const closed = simulate({
    ...base,
    clients: { kind: 'closed', count: clients, think: fixed(20) },
    clientNetworks: clients,
    durationMs: 10_000,
  });
  const perReplica = [0, 0, 0];
  for (let n = 0; n < clients; n++) perReplica[home(n, 3)]!++;
  assert.deepEqual([...perReplica].sort(), [1, 2, 3], 'the networks hash unevenly');
  for (const [i, x] of closed.replicas.entries()) {
    const want = (perReplica[i]! / clients) * closed.counts.completed;
    assert.ok(
      Math.abs(x.served - want) <= clients,
      `replica ${i}: served ${x.served}, ${perReplica[i]} of ${clients} clients: about ${want.toFixed(0)}`,
    );
  }
});

test("a killed replica's keys move to the next replica; the other replica's keys stay where they were", () => {
  const first = home(0, 3);
  const next = (first + 1) % 3;
  const other = (first + 2) % 3;
  const r = simulate({ ...base, events: [{ atMs: 2000, action: 'kill', replica: first }] });
  assert.ok(
    r.replicas[first]!.served > 0 && r.replicas[next]!.served > 0,
    `served ${r.replicas.map((x) => x.served).join(', ')}`,
  );
  assert.equal(r.replicas[other]!.served, 0, 'the third replica never gets the loopback key');
  assert.equal(r.counts.failed, 0, 'the cut GETs were retried');
});

test('validate: an unknown policy, sticky-cookie (no sessions in the model) and a bad clientNetworks are RangeErrors', () => {
  assert.throws(
    () => validate({ ...base, policy: 'sticky-cookie' as SimConfig['policy'] }),
    /unknown policy 'sticky-cookie'/,
  );
  for (const clientNetworks of [0, 1.5, 70_000, Number.NaN])
    assert.throws(() => validate({ ...base, clientNetworks }), /clientNetworks must be a whole number/);
  assert.doesNotThrow(() => validate({ ...base, clientNetworks: 65_536 }));
});

test('setPolicy mid-run: round robin spreads, then ip-hash sends every later request to one replica; an unknown policy is a RangeError', () => {
  const session = new SimSession({ ...base, policy: 'round-robin', durationMs: 4000 });
  session.advance(2000);
  const before = session.replicas().map((r) => r.served);
  assert.ok(
    before.every((n) => n > 0),
    `round robin served ${before.join(', ')}`,
  );
  session.setPolicy('ip-hash');
  session.advance(4000);
  const after = session.replicas().map((r, i) => r.served - before[i]!);
  // Requests already queued when the switch came finish where they were: at most the 6 clients' worth.
  for (const [i, n] of after.entries())
    if (i !== home(0, 3)) assert.ok(n <= 6, `after the switch replica ${i} served ${n}`);
  assert.ok(after[home(0, 3)]! > 1000, `the loopback key's replica served ${after[home(0, 3)]}`);
  assert.throws(() => session.setPolicy('fastest' as SimConfig['policy']), /unknown policy 'fastest'/);
});
