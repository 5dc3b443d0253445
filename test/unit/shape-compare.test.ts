// Proves the shape comparison: held, failed (with its hint), missing, unexpected and not-shown
// lines, the diff, and that every expected-output file is well formed; and measure/compare.ts's
// routing of a lesson's file (a key two experiments share) and of a run's busy note.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { CANNOT_SHOW, compareShape, line, parseExpected, withoutProfileLines } from '../../results/report/shape.ts';
import { readExpected } from '../../measure/lib/harness/expected.ts';
import { failedMeasures, renderComparison } from '../../measure/lib/harness/outcome.ts';
import { ROOT } from '../../measure/lib/harness/paths.ts';
import { compareText, loadExpected, renderVerdict } from '../../measure/lib/class/compare.ts';
import { failOnWarnings } from '../helpers.ts';

failOnWarnings();
const expected = ['a  x  yes', 'b  y  even', 'c  z  flat'];

test('equal lines hold, with an empty diff', () => {
  const cmp = compareShape(expected, [...expected]);
  assert.equal(cmp.holds, true);
  assert.equal(cmp.diff, '');
  assert.ok(cmp.lines.every((l) => l.status === 'held'));
});

test('a different verdict fails, with the hint for its key or first token', () => {
  const cmp = compareShape(expected, ['a  x  no', 'b  y  even', 'c  z  flat'], { a: 'because of a' });
  assert.equal(cmp.holds, false);
  assert.deepEqual(cmp.lines[0], { status: 'failed', expected: 'a  x  yes', actual: 'a  x  no', hint: 'because of a' });
  assert.match(cmp.diff, /-a {2}x {2}yes/);
  assert.match(cmp.diff, /\+a {2}x {2}no/);
});

test('a missing line and an unexpected line both fail', () => {
  const cmp = compareShape(expected, ['a  x  yes', 'c  z  flat', 'd  w  new']);
  assert.equal(cmp.holds, false);
  assert.deepEqual(
    cmp.lines.map((l) => l.status),
    ['held', 'missing', 'held', 'unexpected'],
  );
});

test('a line this machine cannot show does not fail the shape', () => {
  const cmp = compareShape(expected, ['a  x  yes', line('b', 'y', CANNOT_SHOW), 'c  z  flat']);
  assert.equal(cmp.holds, true);
  assert.equal(cmp.lines[1]!.status, 'not-shown');
});

test('renderComparison prints a verdict per line and the diff on mismatch', () => {
  const cmp = compareShape(expected, ['a  x  no', 'b  y  even', 'c  z  flat'], { a: 'because of a' });
  const text = renderComparison(cmp, 'expected-output/x.txt', false);
  assert.match(text, /✗ a {2}x {2}yes {3}\(this run: a {2}x {2}no\)/);
  assert.match(text, /likely cause: because of a/);
  assert.match(text, /The shape does not hold/);
  assert.match(text, /@@/);
  assert.match(renderComparison(compareShape(expected, expected), 'f', false), /✓ c {2}z {2}flat\nThe shape holds\./);
});

test('parseExpected skips blank lines and comments', () => {
  assert.deepEqual(parseExpected('# comment\n\na  x  yes\n'), ['a  x  yes']);
});

test('readExpected: a missing file is KIT_ERR_EXPECTED_MISSING', async () => {
  await assert.rejects(readExpected('/nonexistent/x.txt'), { code: 'KIT_ERR_EXPECTED_MISSING' });
});

test('every expected-output file has lines of at least two tokens, unique keys, no colour codes', () => {
  const dir = path.join(ROOT, 'expected-output');
  // Subfolders: profile/ (what --profile adds), incident/ (each planted incident), fixed/ (a student's fix).
  const folders = ['profile', 'incident', 'fixed'];
  const files = [
    ...readdirSync(dir).filter((f) => !folders.includes(f)),
    ...folders.flatMap((d) => readdirSync(path.join(dir, d)).map((f) => `${d}/${f}`)),
  ];
  assert.ok(files.includes('profile/blocking.txt') && files.includes('incident/redos.txt'));
  for (const f of files) {
    const lines = parseExpected(readFileSync(path.join(dir, f), 'utf8'));
    assert.ok(lines.length > 0, `${f} is empty`);
    const keys = lines.map((l) =>
      l
        .split(/\s{2,}/)
        .slice(0, -1)
        .join('  '),
    );
    for (const l of lines) {
      assert.ok(l.split(/\s{2,}/).length >= 2, `${f}: '${l}' has no verdict token`);
      assert.doesNotMatch(l, /\x1b/, `${f}: colour codes`);
    }
    assert.equal(new Set(keys).size, keys.length, `${f}: duplicate keys`);
  }
});

test('compare: a key two experiments share goes to the one whose lines came just before', () => {
  const all = loadExpected();
  // Lesson 5's file: scale-out's lines, then capped-scale-out's; both have `cpu-bound  failed-checks`.
  const text = [...all.get('scale-out')!, ...all.get('capped-scale-out')!].join('\n') + '\n';
  const v = compareText('lesson-5.txt', text, all);
  assert.deepEqual([...v.experiments.keys()], ['scale-out', 'capped-scale-out']);
  assert.equal(v.holds, true, renderVerdict(v, false));
  // The other order, too.
  assert.equal(
    compareText('f', [...all.get('capped-scale-out')!, ...all.get('scale-out')!].join('\n'), all).holds,
    true,
  );
});

test('compare: a run that noted a busy machine has its lines that did not hold marked ~, not judged', () => {
  const all = loadExpected();
  const pool = all
    .get('pool')!
    .map((l) => (l.startsWith('throughput  up-to-core-count') ? 'throughput  up-to-core-count  does-not-grow' : l));
  const busy = compareText(
    'ann.txt',
    [
      ...all.get('blocking')!,
      ...pool,
      '# note: other programs (the busiest, in cores: node 0.97) kept about 1.0 of the 2 cores busy',
    ].join('\n'),
    all,
  );
  assert.deepEqual([...busy.busy], ['pool']);
  const text = renderVerdict(busy, false);
  assert.match(text, /~ pool: 5 held, 1 not judged: the machine was busy/);
  assert.match(
    text,
    /~ throughput {2}up-to-core-count {2}grows {3}\(the file has: throughput {2}up-to-core-count {2}does-not-grow\)/,
  );
  assert.doesNotMatch(text, /✗/);
  // Without the note the same line is a ✗; a note after another experiment's lines does not excuse it.
  const quiet = compareText(
    'bob.txt',
    [...pool, ...all.get('blocking')!, '# note: other programs kept about 1.0 of the 2 cores busy'].join('\n'),
    all,
  );
  assert.deepEqual([...quiet.busy], ['blocking']);
  assert.match(renderVerdict(quiet, false), /✗ pool: 5 held, 1 did not hold/);
});

test('under --shape, a line that did not hold is printed with the number behind it', () => {
  const measures = [
    {
      id: 'growth',
      label: 'growth',
      unit: '×' as const,
      value: 1.2149,
      line: 'throughput  up-to-core-count',
      threshold: 1.4,
    },
    { id: 'other', label: 'other', unit: 'ms' as const, value: 3, line: 'pooled  light-1' },
  ];
  const expected = ['throughput  up-to-core-count  grows', 'pooled  light-1  answered-at-once'];
  const failed = compareShape(expected, [
    'throughput  up-to-core-count  does-not-grow',
    'pooled  light-1  answered-at-once',
  ]);
  assert.deepEqual(failedMeasures(failed, measures), ['throughput  up-to-core-count: 1.21 × (threshold 1.4)']);
  assert.deepEqual(failedMeasures(compareShape(expected, expected), measures), []);
});

test("compare: a --profile run's extra lines are left out, so it is held to its experiment's file", () => {
  const all = loadExpected();
  const profiled = [
    ...all.get('blocking')!,
    'profile  blocking  heaviest-self-frame  scrypt',
    'profile  pooled  scrypt-on-main-thread  none',
  ];
  assert.equal(compareText('blocking.txt', profiled.join('\n') + '\n', all).holds, true);
  assert.deepEqual(withoutProfileLines(profiled), all.get('blocking'));
  // Without the filter the profile lines would be foreign: the check can fail.
  assert.equal(compareShape(all.get('blocking')!, profiled).holds, false);
});
