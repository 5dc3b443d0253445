// Proves the CPU profile arithmetic --profile relies on (results/report/cpuprofile.ts) on invented
// profiles: samples outside the windows are dropped and the rest keep their functions; self time is
// summed per function over every place it has in the call tree; a frame's place is 1-based.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cutToWindows, frameWhere, selfTimes, type CpuProfile } from '../../results/report/cpuprofile.ts';
import { failOnWarnings } from '../helpers.ts';

failOnWarnings();

const frame = (functionName: string, line = 0) => ({
  functionName,
  scriptId: '1',
  url: functionName.startsWith('(') ? '' : 'file:///app/a.ts',
  lineNumber: line,
  columnNumber: 0,
});

/**
 * A profile from 1,000 µs on, one sample a millisecond: (root) → main → [hash, parse]; `hash` also
 * under parse (a second place in the tree). `seq` lists each sample's node id in order.
 */
function profile(seq: number[]): CpuProfile {
  return {
    nodes: [
      { id: 1, callFrame: frame('(root)'), children: [2, 5] },
      { id: 2, callFrame: frame('main', 9), children: [3, 4] },
      { id: 3, callFrame: frame('hash', 19) },
      { id: 4, callFrame: frame('parse', 29), children: [6] },
      { id: 5, callFrame: frame('(idle)') },
      { id: 6, callFrame: frame('hash', 19) },
    ],
    startTime: 1000,
    endTime: 1000 + seq.length * 1000,
    samples: seq,
    timeDeltas: seq.map(() => 1000),
  };
}

test('cutToWindows keeps only the samples inside the windows, and recounts the hits', () => {
  // Samples at 2,000 .. 11,000 µs: 5 idle, then 3 hash, then 2 parse.
  const p = profile([5, 5, 5, 5, 5, 3, 3, 3, 4, 4]);
  const cut = cutToWindows(p, [{ fromUs: 7000, toUs: 10_000 }])!;
  assert.deepEqual(cut.samples, [3, 3, 3]);
  assert.equal(cut.nodes.find((n) => n.id === 3)!.hitCount, 3);
  assert.equal(cut.nodes.find((n) => n.id === 5)!.hitCount, 0);
  assert.equal(cut.endTime - cut.startTime, 3000);
  // Two windows: their samples one after another.
  assert.deepEqual(
    cutToWindows(p, [
      { fromUs: 2000, toUs: 3000 },
      { fromUs: 10_000, toUs: 12_000 },
    ])!.samples,
    [5, 4, 4],
  );
  assert.equal(cutToWindows(p, [{ fromUs: 50_000, toUs: 60_000 }]), undefined, 'no sample inside');
});

test('selfTimes sums a function over its places in the tree, heaviest first, with its share', () => {
  const t = selfTimes(profile([3, 3, 6, 4, 5]));
  assert.deepEqual(
    t.map((s) => [s.functionName, s.where, s.selfMs, Math.round(s.share * 100)]),
    [
      ['hash', '/app/a.ts:20', 3, 60],
      ['(idle)', '(idle)', 1, 20],
      ['parse', '/app/a.ts:30', 1, 20],
    ],
  );
  // A different `locate` names the place; (root) is never a sample's own function.
  assert.equal(selfTimes(profile([3]), () => 'src/a.ts:1')[0]!.where, 'src/a.ts:1');
  assert.deepEqual(
    selfTimes(profile([1, 3])).map((s) => s.functionName),
    ['hash'],
  );
});

test('frameWhere: a file path and a 1-based line; node: modules as they are', () => {
  assert.equal(frameWhere(frame('hash', 19)), '/app/a.ts:20');
  assert.equal(
    frameWhere({ ...frame('x'), url: 'node:internal/crypto/scrypt', lineNumber: 4 }),
    'node:internal/crypto/scrypt:5',
  );
  assert.equal(frameWhere({ ...frame('x'), url: 'file:///a%20b/c.ts' }), '/a b/c.ts:1');
});
