// Proves the shape comparison: held, failed (with its hint), missing, unexpected and not-shown
// lines, the diff, and that every expected-output file is well formed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { CANNOT_SHOW, compareShape, line, parseExpected } from '../../results/shape.ts';
import { readExpected } from '../../measure/lib/expected.ts';
import { renderComparison } from '../../measure/lib/experiment.ts';
import { ROOT } from '../../measure/lib/paths.ts';
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
  assert.deepEqual(cmp.lines.map((l) => l.status), ['held', 'missing', 'held', 'unexpected']);
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
  for (const f of readdirSync(dir)) {
    const lines = parseExpected(readFileSync(path.join(dir, f), 'utf8'));
    assert.ok(lines.length > 0, `${f} is empty`);
    const keys = lines.map((l) => l.split(/\s{2,}/).slice(0, -1).join('  '));
    for (const l of lines) {
      assert.ok(l.split(/\s{2,}/).length >= 2, `${f}: '${l}' has no verdict token`);
      assert.doesNotMatch(l, /\x1b/, `${f}: colour codes`);
    }
    assert.equal(new Set(keys).size, keys.length, `${f}: duplicate keys`);
  }
});
