// Proves the write-the-fix exercises of lessons 3, 7 and 9 on real processes: `--mine` copies the
// kit's starting point to the student's folder and runs the lesson's server with it; the unedited
// copy fails the lesson's own shape lines, and the copy holding the reference fix (test/fixtures/)
// prints exactly them:
//   lesson 3  blocking --mine     scryptSync → crypto.scrypt on the thread pool (lesson-3/fixed/verify.ts)
//   lesson 7  rate-limit --mine   a Map per worker → one count in Redis (lesson-7/fixed/limiter.ts)
//   lesson 9  stages --mine       writes ignoring write() → waits for 'drain' (lesson-9/fixed/export.ts)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expectedShape, failOnWarnings, ROOT, runScript, skipUnless } from '../helpers.ts';

failOnWarnings();
const FIXED = expectedShape('fixed/blocking');

/** A temporary exercises folder for one test, removed after it; the env that points --mine at it. */
function exercisesDir(t: { after(fn: () => void): void }): { dir: string; env: Record<string, string> } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'nsl-exercises-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return { dir, env: { NSL_EXERCISES_DIR: dir } };
}

test('lesson 3: blocking --mine fails on the unedited copy and holds with the fix', async (t) => {
  const { dir, env } = exercisesDir(t);
  const copy = path.join(dir, 'lesson-3', 'verify.ts');
  const unedited = await runScript('measure/blocking.ts', ['--quick', '--shape', '--mine'], env);
  assert.ok(existsSync(copy), unedited.stderr);
  assert.match(unedited.stderr, /copied servers\/exercises\/lesson-3\/verify\.ts to .*verify\.ts: edit it/);
  assert.equal(unedited.code, 1, unedited.stdout + unedited.stderr);
  assert.ok(unedited.stdout.includes('blocking  light-1  waited-for-heavy'), unedited.stdout);
  copyFileSync(path.join(ROOT, 'servers/exercises/lesson-3/fixed/verify.ts'), copy);
  const fixed = await runScript('measure/blocking.ts', ['--quick', '--shape', '--mine'], env);
  assert.deepEqual(fixed.stdout.trim().split('\n'), FIXED, fixed.stderr);
  assert.equal(fixed.code, 0, fixed.stderr);
});

test(
  'lesson 7: rate-limit --mine fails on the unedited copy and holds with the fix',
  { skip: skipUnless('redis-server') },
  async (t) => {
    const { dir, env } = exercisesDir(t);
    const copy = path.join(dir, 'lesson-7', 'limiter.ts');
    const unedited = await runScript('measure/rate-limit.ts', ['--quick', '--shape', '--mine'], env);
    assert.ok(existsSync(copy), unedited.stderr);
    assert.match(unedited.stderr, /copied servers\/exercises\/lesson-7\/limiter\.ts to .*limiter\.ts: edit it/);
    assert.equal(unedited.code, 1, unedited.stdout + unedited.stderr);
    assert.deepEqual(unedited.stdout.trim().split('\n'), ['redis  allowed-vs-limit  one-limit-per-worker']);
    // A likely mistake: the error names the student's file, not the store.
    writeFileSync(copy, 'export async function hit(redis: any) {\n  return redis.incrr();\n}\n');
    const thrown = await runScript('measure/rate-limit.ts', ['--quick', '--shape', '--mine'], env);
    assert.equal(thrown.code, 3, thrown.stderr);
    assert.match(thrown.stderr, /hit\(\) in .*limiter\.ts threw: redis\.incrr is not a function/);
    copyFileSync(path.join(ROOT, 'servers/exercises/lesson-7/fixed/limiter.ts'), copy);
    const fixed = await runScript('measure/rate-limit.ts', ['--quick', '--shape', '--mine'], env);
    assert.deepEqual(fixed.stdout.trim().split('\n'), expectedShape('fixed/rate-limit'), fixed.stderr);
    assert.equal(fixed.code, 0, fixed.stderr);
  },
);

test('lesson 9: stages --mine fails on the unedited copy and holds with the fix', async (t) => {
  const { dir, env } = exercisesDir(t);
  const copy = path.join(dir, 'lesson-9', 'export.ts');
  const slowReader = (out: string) => out.split('\n').filter((l) => /^(ignoring-)?backpressure /.test(l));
  const lesson = slowReader(expectedShape('stages').join('\n'));
  const unedited = await runScript('measure/stages.ts', ['--quick', '--shape', '--mine'], env);
  assert.ok(existsSync(copy), unedited.stderr);
  assert.match(unedited.stderr, /copied servers\/exercises\/lesson-9\/export\.ts to .*export\.ts: edit it/);
  assert.equal(unedited.code, 1, unedited.stdout + unedited.stderr);
  // The unedited export queues the body as the kit's ignoring one does.
  assert.deepEqual(slowReader(unedited.stdout), [
    'backpressure  waited-for-drain  briefly',
    'backpressure  handler-ends  long-before-finish',
    'backpressure  queued  most-of-the-body',
    ...lesson.slice(3),
  ]);
  copyFileSync(path.join(ROOT, 'servers/exercises/lesson-9/fixed/export.ts'), copy);
  const fixed = await runScript('measure/stages.ts', ['--quick', '--shape', '--mine'], env);
  assert.deepEqual(slowReader(fixed.stdout), lesson, fixed.stderr);
  assert.equal(fixed.code, 0, fixed.stderr);
});
