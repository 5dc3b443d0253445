// Proves lesson 11 on real processes: `measure/overload.ts --quick --shape` prints exactly its
// expected shape; a flag out of range exits 2 naming it and starts nothing; and its write-the-fix
// exercise (`--mine`, the shedder) fails the unedited copy on its answers, passes the reference fix
// with exactly the fixed expected file, and fails shedders a student might write that are quick but
// wrong on the answers line, naming the first wrong answer, with no timing line at all.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { assertShapeOutput, classSave, expectedShape, failOnWarnings, ROOT, runScript } from '../helpers.ts';

failOnWarnings();

const SCRIPT = 'measure/overload.ts';

test('overload --quick: the queue, the timeouts, the shedder, the retries and the breaker, as expected', async () => {
  const r = await runScript(SCRIPT, ['--quick', '--shape', ...classSave('lb-builtin')]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assertShapeOutput(r.stdout, 'overload', r.stderr);
});

test('overload: a rate, timeout, retries or bound out of range exits 2, names the flag and its range', async () => {
  for (const [flag, value, says] of [
    ['--rates', '0.5,9', /--rates is 2 to 6 multiples of capacity, each 0\.1 to 3/],
    ['--timeout', '50', /--timeout is a whole number from 100 to 5000/],
    ['--retries', '0', /--retries is a whole number from 1 to 5/],
    ['--bound', '1', /--bound is a whole number from 10 to 5000/],
  ] as const) {
    const r = await runScript(SCRIPT, [flag, value]);
    assert.equal(r.code, 2, `${flag} ${value}: ${r.stdout}${r.stderr}`);
    assert.match(r.stderr, says, flag);
    assert.doesNotMatch(r.stderr, /started overload/, `${flag} ${value} started nothing`);
  }
});

/** A temporary exercises folder, removed after the test; the env that points --mine at it. */
function exercisesDir(t: TestContext): { copy: string; env: Record<string, string> } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'nsl-exercises-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return { copy: path.join(dir, 'lesson-11', 'shed.ts'), env: { NSL_EXERCISES_DIR: dir } };
}

const HEAD = "import type http from 'node:http';\n";
/** A shedder whose body is `body`, with `load` and `res` in scope. */
const shedder = (body: string, head = '') =>
  `${HEAD}${head}export function shed(load: { waitMs: number; boundMs: number }, res: http.ServerResponse): boolean {\n${body}\n}\n`;
const REFUSE = (headers: string, status = 503) =>
  `  if (load.waitMs <= load.boundMs) return false;\n  res.writeHead(${status}, { ${headers} });\n  res.end('busy');\n  return true;`;

const CHEATS: { why: string; source: string; wrong: RegExp }[] = [
  {
    why: 'refuses every request, busy or not',
    source: shedder("  res.writeHead(503, { 'retry-after': '1' });\n  res.end();\n  return true;"),
    wrong:
      /GET \/hash\?id=0: the service without a shedder 200 \{"id":0,"key":"[0-9a-f]+.*, yours 503, Retry-After "1"/,
  },
  {
    why: 'a 503 with no Retry-After',
    source: shedder(REFUSE("'content-type': 'text/plain'")),
    wrong: /120 × GET \/hash at once: .*yours id=\d+: 503, no Retry-After/,
  },
  {
    why: '429 instead of 503',
    source: shedder(REFUSE("'retry-after': '1'", 429)),
    wrong: /120 × GET \/hash at once: .*yours id=\d+: 429 busy/,
  },
  {
    why: 'a 200 that says busy, so the client reads it as an answer',
    source: shedder(REFUSE("'content-type': 'text/plain'", 200)),
    wrong: /120 × GET \/hash at once: .*yours id=\d+: 200 busy/,
  },
  {
    why: "sheds on the event loop's delay, which this overload never moves",
    source: shedder(
      "  if (delay.percentile(99) / 1e6 < 50) return false;\n  res.writeHead(503, { 'retry-after': '1' });\n  res.end();\n  return true;",
      "import { monitorEventLoopDelay } from 'node:perf_hooks';\nconst delay = monitorEventLoopDelay({ resolution: 10 });\ndelay.enable();\n",
    ),
    wrong: /those 120: refused, let in: the service without a shedder some of each, yours none refused/,
  },
  {
    why: 'says refused without answering',
    source: shedder('  return load.waitMs > load.boundMs;'),
    wrong: /120 × GET \/hash at once: .*yours id=\d+: 500 \{"error"/,
  },
];

test('lesson 11: overload --mine — the unedited copy refuses nothing, the fix holds, quick wrong shedders fail', async (t) => {
  const { copy, env } = exercisesDir(t);
  const unedited = await runScript(SCRIPT, ['--quick', '--shape', '--mine'], env);
  assert.ok(existsSync(copy), unedited.stderr);
  assert.equal(unedited.code, 1, unedited.stdout + unedited.stderr);
  assert.deepEqual(unedited.stdout.trim().split('\n'), ['overload  answers  wrong'], unedited.stderr);
  assert.match(unedited.stderr, /First wrong answer: those 120: refused, let in: .*yours none refused/);

  copyFileSync(path.join(ROOT, 'servers/exercises/lesson-11/fixed/shed.ts'), copy);
  const fixed = await runScript(SCRIPT, ['--quick', '--shape', '--mine'], env);
  assert.equal(fixed.code, 0, fixed.stdout + fixed.stderr);
  assert.deepEqual(fixed.stdout.trim().split('\n'), expectedShape('fixed/overload'), fixed.stderr);

  for (const cheat of CHEATS) {
    writeFileSync(copy, cheat.source);
    const r = await runScript(SCRIPT, ['--quick', '--shape', '--mine'], env);
    assert.equal(r.code, 1, `${cheat.why}: ${r.stdout}${r.stderr}`);
    assert.deepEqual(r.stdout.trim().split('\n'), ['overload  answers  wrong'], `${cheat.why}: ${r.stderr}`);
    const first = r.stderr.split('\n').find((l) => l.includes('First wrong answer: '));
    assert.match(first ?? r.stderr, cheat.wrong, cheat.why);
  }
});
