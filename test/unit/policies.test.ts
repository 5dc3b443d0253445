// Proves the balancing policies as pure functions: round robin's order and skipping, least
// connections' choice and fair ties, random's spread, and power of two choices avoiding the
// busiest replica by sampling two distinct replicas (unlike the with-replacement variant).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  isPolicy,
  leastConnections,
  PICKERS,
  POLICIES,
  powerOfTwoChoices,
  powerOfTwoChoicesWithReplacement,
  random,
  roundRobin,
  type Picker,
  type ReplicaLoad,
} from '../../core/policies.ts';
import { failOnWarnings } from '../helpers.ts';

failOnWarnings();

/** A seedable generator for repeatable tests (mulberry32). */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const loads = (...inFlight: number[]): ReplicaLoad[] => inFlight.map((n) => ({ inFlight: n, available: true }));

function pickMany(picker: Picker, replicas: ReplicaLoad[], n: number, seed = 1): number[] {
  const rng = seeded(seed);
  const counts = replicas.map(() => 0);
  let cursor = 0;
  for (let i = 0; i < n; i++) {
    const c = picker(replicas, cursor, rng);
    cursor = c.cursor;
    counts[c.index!]!++;
  }
  return counts;
}

test('round robin: each replica in turn, skipping unavailable ones', () => {
  const r = loads(0, 0, 0);
  const order: number[] = [];
  let cursor = 0;
  for (let i = 0; i < 6; i++) {
    const c = roundRobin(r, cursor, Math.random);
    order.push(c.index!);
    cursor = c.cursor;
  }
  assert.deepEqual(order, [0, 1, 2, 0, 1, 2]);
  r[1]!.available = false;
  assert.deepEqual(pickMany(roundRobin, r, 10), [5, 0, 5]);
});

test('least connections: the fewest in flight; ties spread fairly, not always the first', () => {
  assert.equal(leastConnections(loads(3, 1, 2), 0, Math.random).index, 1);
  const counts = pickMany(leastConnections, loads(0, 0, 0), 3000);
  for (const c of counts) assert.ok(c > 850 && c < 1150, `tie-breaking is uneven: ${counts}`);
  assert.deepEqual(pickMany(leastConnections, loads(0, 0, 5), 300).slice(2), [0], 'never the busiest');
});

test('random: spread over every available replica, whatever the load', () => {
  const counts = pickMany(random, loads(0, 0, 100), 3000);
  for (const c of counts) assert.ok(c > 850 && c < 1150, `random is uneven: ${counts}`);
});

test('power of two choices: never the busiest of three; two distinct samples', () => {
  // The busiest replica loses every comparison, and with distinct samples it is never compared with itself.
  assert.deepEqual(pickMany(powerOfTwoChoices, loads(1, 1, 9), 3000).slice(2), [0]);
  // With replacement, both samples are the busy one 1/n² of the time... and then it is chosen.
  const flawed = pickMany(powerOfTwoChoicesWithReplacement, loads(1, 1, 9), 9000)[2]!;
  assert.ok(flawed > 700 && flawed < 1300, `expected about 1/9 of 9000 (1000), got ${flawed}`);
  // Ties among the less busy spread fairly.
  const counts = pickMany(powerOfTwoChoices, loads(0, 0, 0), 3000);
  for (const c of counts) assert.ok(c > 850 && c < 1150, `uneven: ${counts}`);
});

test('every policy: no replica available → undefined (the balancer answers 503); one left → that one', () => {
  for (const policy of POLICIES) {
    const none = [
      { inFlight: 0, available: false },
      { inFlight: 0, available: false },
    ];
    assert.equal(PICKERS[policy](none, 0, Math.random).index, undefined, policy);
    const one = [
      { inFlight: 5, available: false },
      { inFlight: 50, available: true },
    ];
    assert.equal(PICKERS[policy](one, 0, Math.random).index, 1, policy);
  }
  assert.equal(isPolicy('least-connections'), true);
  assert.equal(isPolicy('fastest'), false);
});
