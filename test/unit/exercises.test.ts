// The write-the-fix exercises' starting points (the files `--mine` copies) and their reference
// fixes (test/fixtures/), without a server: each fix changes the mechanism the lesson is about and
// nothing else. test/e2e/exercise-fixes.test.ts runs them behind the lessons' servers. And the
// loader every server uses for a student's file answers each likely mistake in one line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { verifyPassword as start } from '../../servers/exercises/lesson-3/verify.ts';
import { hit as startHit } from '../../servers/exercises/lesson-7/limiter.ts';
import { writeExport as startExport } from '../../servers/exercises/lesson-9/export.ts';
import { importFromStudentFile } from '../../servers/lib/serve/student-file.ts';
import { verifyPassword as fixed } from '../../servers/exercises/lesson-3/fixed/verify.ts';
import { hit as fixedHit } from '../../servers/exercises/lesson-7/fixed/limiter.ts';
import { writeExport as fixedExport } from '../../servers/exercises/lesson-9/fixed/export.ts';

test('lesson 3: the starting point answers at once, the fix later, with the same key', async () => {
  const salt = Buffer.from('0123456789abcdef');
  const options = { N: 2 ** 10, r: 8, p: 1 };
  const now = start('correct horse battery staple', salt, 32, options);
  assert.ok(Buffer.isBuffer(now), 'scryptSync returns the key itself');
  const later = fixed('correct horse battery staple', salt, 32, options);
  assert.ok(later instanceof Promise, 'the fix returns a promise of the key');
  assert.deepEqual(await later, now);
});

test("lesson 7: the starting point counts in this process's memory, never asking Redis", async () => {
  const noRedis = new Proxy({} as never, {
    get: () => assert.fail('the starting point should not touch Redis'),
  });
  const key = `unit-${process.pid}-${Date.now()}`;
  const answers = [];
  for (let i = 0; i < 4; i++) answers.push(await startHit(noRedis, key, 3, 60_000));
  assert.deepEqual(
    answers.map((a) => [a.allowed, a.count]),
    [
      [true, 1],
      [true, 2],
      [true, 3],
      [false, 4],
    ],
  );
  assert.deepEqual(await startHit(noRedis, `${key}-other`, 3, 60_000), { allowed: true, count: 1 });
});

/**
 * The few Redis commands the fix sends, over one Map, as a transaction: SET key value PX ms NX
 * (only when the key is absent) and INCR. Enough to show the count is one per key, not per caller.
 */
function fakeRedis() {
  const data = new Map<string, number>();
  const multi = () => {
    const replies: [null, unknown][] = [];
    const tx = {
      set(key: string, value: number, _px: 'PX', _ms: number, nx: 'NX') {
        assert.equal(nx, 'NX', 'the window opens only when none is open');
        replies.push([null, data.has(key) ? null : (data.set(key, value), 'OK')]);
        return tx;
      },
      incr(key: string) {
        data.set(key, (data.get(key) ?? 0) + 1);
        replies.push([null, data.get(key)]);
        return tx;
      },
      exec: async () => replies,
    };
    return tx;
  };
  return { multi } as never;
}

test('lesson 7: the fix counts in Redis, so two workers sharing it share one limit', async () => {
  const redis = fakeRedis();
  const allowed = [];
  for (let i = 0; i < 8; i++) allowed.push((await fixedHit(redis, 'nsl:mine:loans:ann', 3, 60_000)).allowed);
  assert.deepEqual(allowed, [true, true, true, false, false, false, false, false]);
  assert.deepEqual(await fixedHit(redis, 'nsl:mine:loans:bob', 3, 60_000), { allowed: true, count: 1 });
});

/** A response whose write() says false from the second chunk on, until 'drain' is emitted. */
function fullSocket() {
  const res = new EventEmitter() as EventEmitter & { destroyed: boolean; written: number };
  res.destroyed = false;
  res.written = 0;
  Object.assign(res, { write: () => ++res.written < 2 });
  return res;
}

test("lesson 9: the starting point writes on whatever write() says; the fix waits for 'drain'", async () => {
  const ignoring = fullSocket();
  await startExport(ignoring as unknown as http.ServerResponse, 8, () => Buffer.alloc(1));
  assert.equal(ignoring.written, 8, 'every chunk written though write() said false');

  const honouring = fullSocket();
  const done = fixedExport(honouring as unknown as http.ServerResponse, 8, () => Buffer.alloc(1));
  for (let i = 0; i < 5; i++) await yieldToLoop();
  assert.equal(honouring.written, 2, 'the fix stops after the write that said false');
  honouring.emit('drain');
  for (let i = 0; i < 5; i++) await yieldToLoop();
  assert.equal(honouring.written, 3, "one more chunk per 'drain'");
  honouring.emit('close'); // the reader went away: no 'drain' will come, and the loop must not hang
  honouring.destroyed = true;
  await done;
});

test("a student's file: missing, not loading, or without the export is one line naming the file", async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'nsl-student-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, text: string) => {
    writeFileSync(path.join(dir, name), text);
    return path.join(dir, name);
  };
  const load = (f: string) => importFromStudentFile<() => number>(f, 'hit', 'function');
  await assert.rejects(load(path.join(dir, 'none.mjs')), /^KitError: no file at .*none\.mjs$/);
  await assert.rejects(load(file('broken.mjs', 'export function hit( {\n')), /broken\.mjs does not load: /);
  await assert.rejects(load(file('other.mjs', 'export const hit = 3;\n')), /other\.mjs exports no hit function/);
  assert.equal((await load(file('good.mjs', 'export function hit() { return 7; }\n')))(), 7);
});
