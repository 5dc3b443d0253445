// The write-the-fix exercises' starting points (the files `--mine` copies) and their reference
// fixes (servers/exercises/), without a server: each fix changes the mechanism the lesson is about
// and nothing else; every exercise names its start, fix and expected file; the answers the
// batteries compare are right where they should be. test/e2e/exercise-fixes.test.ts runs them
// behind the lessons' servers. And the loader every server uses for a student's file answers each
// likely mistake in one line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { scryptSync } from 'node:crypto';
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
import { expectedShape, ROOT } from '../helpers.ts';

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

test('every exercise: its start, its reference fix and its expected file, the answers line first', async () => {
  const { EXERCISE_SPECS } = await import('../../measure/lib/exercise/specs.ts');
  const { EXPERIMENTS } = await import('../../measure/lib/harness/experiments.ts');
  assert.deepEqual(
    EXERCISE_SPECS.map((s) => s.student),
    [
      'lesson-3/verify.ts',
      'lesson-7/limiter.ts',
      'lesson-9/export.ts',
      ...['redos', 'pool', 'keepalive', 'shutdown', 'cache', 'sync-read'].map((n) => `incidents/${n}.ts`),
      'lesson-11/shed.ts',
    ],
  );
  for (const spec of EXERCISE_SPECS) {
    assert.ok(EXPERIMENTS.includes(spec.experiment), spec.id);
    for (const file of [spec.start, spec.reference]) {
      const mod = (await import(path.join(ROOT, file))) as Record<string, unknown>;
      assert.equal(typeof mod[spec.export.name], spec.export.kind, `${file} exports ${spec.export.name}`);
    }
    assert.notEqual(
      readFileSync(path.join(ROOT, spec.start), 'utf8'),
      readFileSync(path.join(ROOT, spec.reference), 'utf8'),
    );
    assert.equal(expectedShape(spec.expected)[0], `${spec.group}  answers  same-as-healthy`, spec.id);
  }
  // A fix is held to the lesson's own lines where they apply: the fixed files add the answers line to them.
  assert.deepEqual(expectedShape('fixed/incident').slice(1), expectedShape('incident'));
  assert.deepEqual(
    expectedShape('fixed/stages').slice(1),
    expectedShape('stages').filter((l) => /^(ignoring-)?backpressure /.test(l)),
  );
});

test("lesson 3: a check is right when the key is the member's stored one, at the member's own parameters", async () => {
  const { keyMatches, MEMBERS, storedPasswords } = await import('../../servers/lib/cpu/members.ts');
  const { VERIFY_CASES } = await import('../../measure/lib/exercise/verify-answers.ts');
  const stored = await storedPasswords({ N: 2 ** 10, r: 8, p: 1 }); // ann at a light cost: derived, not shipped
  for (const m of MEMBERS) {
    const s = stored.get(m.name)!;
    assert.ok(keyMatches(s, scryptSync(m.password, s.salt, s.keyLength, s.cost)), m.name);
    assert.equal(keyMatches(s, scryptSync(`${m.password}!`, s.salt, s.keyLength, s.cost)), false, m.name);
  }
  const cam = stored.get('cam')!;
  assert.equal(keyMatches(cam, cam.key.subarray(0, 32)), false, 'a key of another length');
  assert.equal(keyMatches(cam, cam.key.toString('hex')), false, 'not a Buffer');
  // A key kept by password alone is wrong for fay, who shares cam's password with another salt.
  assert.equal(keyMatches(stored.get('fay')!, cam.key), false);
  assert.ok(VERIFY_CASES.some((c) => c.member === 'fay') && VERIFY_CASES.some((c) => c.password !== undefined));
  for (const c of VERIFY_CASES)
    assert.ok(
      MEMBERS.some((m) => m.name === c.member),
      c.member,
    );
});

test('lesson 10: the planted redos answers every search the battery sends as the healthy one does', async () => {
  const { handlers: planted } = await import('../../servers/exercises/lesson-10/redos.ts');
  const { handlers: healthy } = await import('../../servers/incidents/healthy.ts');
  const { SEARCHES } = await import('../../measure/lib/exercise/incident-answers.ts');
  const titles = [
    "Où sont les neiges d'antan?",
    'Señora Ñúñez & the Lighthouse',
    'Why Do Rivers Run North?',
    'The winter of garden 2',
  ];
  const books = titles.map((title, id) => ({ id, title, author: 'a', year: 1900, summary: '' }));
  const lib = { books, lowerTitles: titles.map((t) => t.toLowerCase()) } as never;
  for (const title of SEARCHES) assert.deepEqual(planted.search!(lib, title), healthy.search(lib, title), title);
  assert.deepEqual(healthy.search(lib, "neiges d'antan?"), [books[0]]);
  assert.deepEqual(healthy.search(lib, '50% off'), { error: 'not a title' });
});

test('the batteries say each answer in a few words', async () => {
  const { tallyText } = await import('../../measure/lib/exercise/limiter-answers.ts');
  const { readText } = await import('../../measure/lib/exercise/export-answers.ts');
  const { bodyText } = await import('../../measure/lib/exercise/incident-answers.ts');
  const byWorker = new Map([
    [1, 10],
    [2, 10],
    [3, 9],
    [4, 10],
  ]);
  assert.equal(tallyText({ allowed: 39, refused: 11, byWorker, other: [] }), '39 allowed: 10 + 10 + 9 + 10 by worker');
  assert.equal(
    tallyText({ allowed: 0, refused: 0, byWorker: new Map(), other: ['500 boom', '500 boom'] }),
    '2 answered 500 boom',
  );
  const MiB = 1024 * 1024;
  assert.equal(readText({ status: 200, bytes: 8 * MiB, firstWrong: undefined }, 8 * MiB), 'all 8 MiB as meant');
  assert.equal(readText({ status: 200, bytes: MiB / 16, firstWrong: undefined }, 2 * MiB), 'cut after 0.06 of 2 MiB');
  assert.equal(
    readText({ status: 200, bytes: 2 * MiB, firstWrong: 65_536 }, 2 * MiB),
    'wrong bytes from 65,536 (chunk 1)',
  );
  assert.equal(bodyText([{ id: 3 }, { id: 4 }, { id: 9 }]), '[3 books: #3 … #9]');
  assert.equal(bodyText([]), '[]');
  assert.equal(bodyText({ error: 'not a title' }), '{"error":"not a title"}');
});
