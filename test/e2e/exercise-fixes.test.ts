// Proves the write-the-fix exercises of lessons 3, 7 and 9 on real processes: `--mine` copies the
// kit's starting point to the student's folder, checks the copy's answers against the healthy
// code's, and only then runs the lesson's measurement. For each exercise the unedited copy fails on
// its symptom, the reference fix (servers/exercises/lesson-<n>/fixed/) prints exactly the fixed
// expected file, and fixes a student might write that are fast but wrong fail on the answers line,
// with one line naming the first wrong answer and no timing line at all:
//   lesson 3  blocking --mine     scryptSync → crypto.scrypt on the thread pool
//   lesson 7  rate-limit --mine   a Map per worker → one count in Redis, under loans at once
//   lesson 9  stages --mine       writes ignoring write() → waits for 'drain'
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expectedShape, failOnWarnings, ROOT, runScript, skipUnless } from '../helpers.ts';

failOnWarnings();

/** A temporary exercises folder for one test, removed after it; the env that points --mine at it. */
function exercisesDir(t: TestContext): { dir: string; env: Record<string, string> } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'nsl-exercises-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return { dir, env: { NSL_EXERCISES_DIR: dir } };
}

/**
 * Runs `script --quick --shape --mine` with `source` as the student's file, and checks that it
 * fails on the answers line alone, naming the first wrong answer as `wrong` says.
 */
async function assertWrong(
  script: string,
  file: string,
  env: Record<string, string>,
  source: string,
  group: string,
  wrong: RegExp,
) {
  writeFileSync(file, source);
  const r = await runScript(script, ['--quick', '--shape', '--mine'], env);
  assert.equal(r.code, 1, r.stdout + r.stderr);
  // The answers line, and no line that a timing would print: nothing was timed.
  assert.deepEqual(r.stdout.trim().split('\n'), [`${group}  answers  wrong`], r.stderr);
  assert.match(r.stderr, /^ {2}First wrong answer: .+$/m);
  assert.match(r.stderr.split('\n').find((l) => l.includes('First wrong answer:'))!, wrong);
}

const VERIFY_HEAD = "import { scrypt, type ScryptOptions } from 'node:crypto';\n";

test('lesson 3: blocking --mine — the unedited copy fails its symptom, the fix holds, fast wrong fixes fail', async (t) => {
  const { dir, env } = exercisesDir(t);
  const copy = path.join(dir, 'lesson-3', 'verify.ts');
  const unedited = await runScript('measure/blocking.ts', ['--quick', '--shape', '--mine'], env);
  assert.ok(existsSync(copy), unedited.stderr);
  assert.match(unedited.stderr, /copied servers\/exercises\/lesson-3\/verify\.ts to .*verify\.ts: edit it/);
  assert.equal(unedited.code, 1, unedited.stdout + unedited.stderr);
  const lines = unedited.stdout.trim().split('\n');
  assert.equal(lines[0], 'blocking  answers  same-as-healthy', 'scryptSync answers right: only its time is wrong');
  assert.ok(lines.includes('blocking  light-1  waited-for-heavy'), unedited.stdout);
  copyFileSync(path.join(ROOT, 'servers/exercises/lesson-3/fixed/verify.ts'), copy);
  const fixed = await runScript('measure/blocking.ts', ['--quick', '--shape', '--mine'], env);
  assert.deepEqual(fixed.stdout.trim().split('\n'), expectedShape('fixed/blocking'), fixed.stderr);
  assert.equal(fixed.code, 0, fixed.stderr);

  const pooled = (call: string) =>
    `${VERIFY_HEAD}export function verifyPassword(password: string, salt: Buffer, keyLength: number, options: ScryptOptions): Promise<Buffer> {\n` +
    `  return new Promise((resolve, reject) => ${call});\n}\n`;
  const cheat = (source: string, wrong: RegExp) =>
    assertWrong('measure/blocking.ts', copy, env, source, 'blocking', wrong);
  // On the thread pool, and fast, but the key of the wrong password: every right password refused.
  await cheat(
    pooled("scrypt('password', salt, keyLength, options, (e, k) => (e ? reject(e) : resolve(k)))"),
    /member=cam \(own password\): the kit's check 200 verified, yours 401 refused/,
  );
  // scrypt's own default parameters instead of the member's (maxmem gave an error with them, say).
  await cheat(
    pooled('scrypt(password, salt, keyLength, (e, k) => (e ? reject(e) : resolve(k)))'),
    /member=cam \(own password\): the kit's check 200 verified, yours 401 refused/,
  );
  // A key kept by password, to hash each password once: fay shares cam's password, not her salt.
  await cheat(
    `${VERIFY_HEAD}const keys = new Map<string, Buffer>();\n` +
      'export async function verifyPassword(password: string, salt: Buffer, keyLength: number, options: ScryptOptions) {\n' +
      '  if (!keys.has(password)) keys.set(password, await new Promise<Buffer>((resolve, reject) =>\n' +
      '    scrypt(password, salt, keyLength, options, (e, k) => (e ? reject(e) : resolve(k)))));\n' +
      '  return keys.get(password)!;\n}\n',
    /member=fay \(own password, cam's too\): the kit's check 200 verified, yours 401 refused/,
  );
});

const LIMITER_HEAD = "import type { Redis } from 'ioredis';\n";
const hitOf = (body: string) =>
  `${LIMITER_HEAD}export async function hit(redis: Redis, key: string, limit: number, windowMs: number) {\n${body}\n}\n`;

test(
  'lesson 7: rate-limit --mine — the unedited copy counts per worker, the fix holds, fast wrong limiters fail',
  { skip: skipUnless('redis-server') },
  async (t) => {
    const { dir, env } = exercisesDir(t);
    const copy = path.join(dir, 'lesson-7', 'limiter.ts');
    const unedited = await runScript('measure/rate-limit.ts', ['--quick', '--shape', '--mine'], env);
    assert.ok(existsSync(copy), unedited.stderr);
    assert.match(unedited.stderr, /copied servers\/exercises\/lesson-7\/limiter\.ts to .*limiter\.ts: edit it/);
    assert.equal(unedited.code, 1, unedited.stdout + unedited.stderr);
    // Its symptom is a wrong count: each worker lets the member through on its own.
    assert.deepEqual(unedited.stdout.trim().split('\n'), ['rate-limit  answers  wrong']);
    assert.match(
      unedited.stderr,
      /First wrong answer: 50 loans by reader-1 among 200 at once: a healthy limiter 10 allowed, yours \d+ allowed: \d+ \+ \d+ \+ \d+ \+ \d+ by worker/,
    );
    // A likely mistake: the error names the student's file, not the store.
    writeFileSync(copy, 'export async function hit(redis: any) {\n  return redis.incrr();\n}\n');
    const thrown = await runScript('measure/rate-limit.ts', ['--quick', '--shape', '--mine'], env);
    assert.equal(thrown.code, 1, thrown.stderr);
    assert.match(thrown.stderr, /^ {2}Yours in full: 50 answered 500 hit\(\) threw: redis\.incrr is not a function$/m);
    copyFileSync(path.join(ROOT, 'servers/exercises/lesson-7/fixed/limiter.ts'), copy);
    const fixed = await runScript('measure/rate-limit.ts', ['--quick', '--shape', '--mine'], env);
    assert.deepEqual(fixed.stdout.trim().split('\n'), expectedShape('fixed/rate-limit'), fixed.stderr);
    assert.equal(fixed.code, 0, fixed.stderr);

    const cheat = (body: string, wrong: RegExp) =>
      assertWrong('measure/rate-limit.ts', copy, env, hitOf(body), 'rate-limit', wrong);
    // GET, then SET: loans that arrive together read the same count, and more get through.
    await cheat(
      "  const count = Number((await redis.get(key)) ?? 0) + 1;\n  await redis.set(key, count, 'PX', windowMs);\n  return { allowed: count <= limit, count };",
      /among 200 at once: a healthy limiter 10 allowed, yours (1[1-9]|[2-9]\d) allowed/,
    );
    // EXPIRE takes seconds: a 1.5 s window lasts 25 minutes, and no new window opens.
    await cheat(
      '  const count = await redis.incr(key);\n  if (count === 1) await redis.expire(key, windowMs);\n  return { allowed: count <= limit, count };',
      /among 40 at once, the window past: a healthy limiter 10 allowed, yours 0 allowed/,
    );
    // One count per worker in Redis (the key with the process id): Redis, but the limit per worker.
    await cheat(
      '  const k = `${key}:${process.pid}`;\n  const [[, count]] = (await redis.multi().incr(k).pexpire(k, windowMs).exec()) as [[null, number]];\n  return { allowed: count <= limit, count };',
      /yours \d+ allowed: \d+ \+ \d+ \+ \d+ \+ \d+ by worker/,
    );
  },
);

const EXPORT_HEAD = "import type http from 'node:http';\n";
const loopOf = (body: string) =>
  `${EXPORT_HEAD}export async function writeExport(res: http.ServerResponse, chunks: number, nextChunk: () => Buffer): Promise<void> {\n${body}\n}\n`;

test('lesson 9: stages --mine — the unedited copy queues the body, the fix holds, fast wrong loops fail', async (t) => {
  const { dir, env } = exercisesDir(t);
  const copy = path.join(dir, 'lesson-9', 'export.ts');
  const slowReader = (out: string) => out.split('\n').filter((l) => /^(ignoring-)?backpressure /.test(l));
  const lesson = slowReader(expectedShape('stages').join('\n'));
  const unedited = await runScript('measure/stages.ts', ['--quick', '--shape', '--mine'], env);
  assert.ok(existsSync(copy), unedited.stderr);
  assert.match(unedited.stderr, /copied servers\/exercises\/lesson-9\/export\.ts to .*export\.ts: edit it/);
  assert.equal(unedited.code, 1, unedited.stdout + unedited.stderr);
  assert.match(unedited.stdout, /^stages {2}answers {2}same-as-healthy$/m);
  // The unedited export queues the body as the kit's ignoring one does.
  assert.deepEqual(slowReader(unedited.stdout), [
    'backpressure  waited-for-drain  briefly',
    'backpressure  handler-ends  long-before-finish',
    'backpressure  queued  most-of-the-body',
    ...lesson.slice(3),
  ]);
  copyFileSync(path.join(ROOT, 'servers/exercises/lesson-9/fixed/export.ts'), copy);
  const fixed = await runScript('measure/stages.ts', ['--quick', '--shape', '--mine'], env);
  assert.deepEqual(
    fixed.stdout.split('\n').filter((l) => l && !l.startsWith('#')),
    expectedShape('fixed/stages'),
    fixed.stderr,
  );
  assert.equal(fixed.code, 0, fixed.stderr);

  const cheat = (body: string, wrong: RegExp) =>
    assertWrong('measure/stages.ts', copy, env, loopOf(body), 'stages', wrong);
  const drained = "await new Promise((r) => { res.once('drain', r); res.once('close', r); })";
  // One chunk made and written again and again: fast, and the bytes are not the export's.
  await cheat(
    `  const chunk = nextChunk();\n  for (let i = 0; i < chunks && !res.destroyed; i++) if (!res.write(chunk)) ${drained};`,
    /mb=2, read at once: the kit's export all 2 MiB as meant, yours wrong bytes from 65,5\d\d \(chunk 1\)/,
  );
  // Stops at the first full buffer: never waits, and the reader gets part of the body.
  await cheat(
    '  for (let i = 0; i < chunks && !res.destroyed; i++) if (!res.write(nextChunk())) return;',
    /yours cut after [\d.]+ of \d MiB/,
  );
  // Waits for 'drain' alone: right bytes, but a reader that leaves leaves the loop waiting forever.
  await cheat(
    "  for (let i = 0; i < chunks && !res.destroyed; i++) if (!res.write(nextChunk())) await new Promise((r) => res.once('drain', r));",
    /reader gone after 1 MiB: the kit's export the loop ends, yours the loop still runs 2 s later/,
  );
});
