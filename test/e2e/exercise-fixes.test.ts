// Proves lesson 3's write-the-fix exercise on real processes: `blocking --mine` copies the password
// check to the student's folder and runs the loan service with it; the unedited copy (scryptSync)
// fails expected-output/fixed/blocking.txt, and the copy holding the reference fix
// (test/fixtures/verify-fixed.ts: crypto.scrypt on the thread pool) prints exactly it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseExpected } from '../../results/report/shape.ts';
import { failOnWarnings, ROOT, runScript } from '../helpers.ts';

failOnWarnings();
const FIXED = parseExpected(readFileSync(path.join(ROOT, 'expected-output', 'fixed', 'blocking.txt'), 'utf8'));

test('lesson 3: blocking --mine fails on the unedited copy and holds with the fix', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'nsl-exercises-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const env = { NSL_EXERCISES_DIR: dir };
  const copy = path.join(dir, 'lesson-3', 'verify.ts');
  const unedited = await runScript('measure/blocking.ts', ['--quick', '--shape', '--mine'], env);
  assert.ok(existsSync(copy), unedited.stderr);
  assert.match(unedited.stderr, /copied servers\/lib\/cpu\/verify-exercise\.ts to .*verify\.ts: edit it/);
  assert.equal(unedited.code, 1, unedited.stdout + unedited.stderr);
  assert.ok(unedited.stdout.includes('blocking  light-1  waited-for-heavy'), unedited.stdout);
  copyFileSync(path.join(ROOT, 'test', 'fixtures', 'verify-fixed.ts'), copy);
  const fixed = await runScript('measure/blocking.ts', ['--quick', '--shape', '--mine'], env);
  assert.deepEqual(fixed.stdout.trim().split('\n'), FIXED, fixed.stderr);
  assert.equal(fixed.code, 0, fixed.stderr);
});
