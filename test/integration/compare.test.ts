// Proves the instructors' comparison (measure/compare.ts): a --shape file from a healthy run holds
// (exit 0) also when some lines could not be shown, and names those lines and the reason the run
// wrote into the file; a file with a line that did not hold exits 1 and names it; a whole lesson's
// file is split by experiment; files that are not shape files exit 2.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after } from 'node:test';
import { COMMON_FLAGS, runExperiment } from '../../measure/lib/harness/experiment.ts';
import { compareText, loadExpected } from '../../measure/lib/class/compare.ts';
import { NOT_SHOWN_PREFIX } from '../../results/report/shape.ts';
import { defineCommand } from '../../lib/cli.ts';
import { hints, notShown, render, shape, type RateLimitResult } from '../../results/rate-limit/report.ts';
import { rateLimitResult } from '../fixtures/results.ts';
import { expectedShape, failOnWarnings, runMainInProcess, runScript } from '../helpers.ts';
import { main as compareMain } from '../../measure/compare.ts';

failOnWarnings();
// The script runs once as a process (the first comparison below); the rest run its main here.
const compare = (args: string[]) => runMainInProcess(compareMain, args);
const dir = mkdtempSync(path.join(os.tmpdir(), 'nsl-compare-test-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string) => {
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return p;
};

/** A rate-limit run on a machine without redis-server, as the experiment reports it. */
const noRedis = (): RateLimitResult => {
  const r = rateLimitResult();
  return {
    ...r,
    runs: r.runs.filter((x) => x.store !== 'redis'),
    notRun: { redis: 'redis-server was not found (looked on PATH and in /usr/bin)' },
  };
};

/**
 * What `npx tsx measure/rate-limit.ts --shape` prints for that run: the experiment's own output
 * code, with the run stubbed (`busyAtStart`: other programs' load as the run began, in cores; 0
 * unless given).
 */
async function shapeOutput(result: RateLimitResult, busyAtStart?: number): Promise<{ code: number; stdout: string }> {
  let stdout = '';
  const sink = { write: (s: string) => ((stdout += s), true) };
  const run = async (ctx: { machine: RateLimitResult['machine'] }) => {
    // Fixed, not measured: a busy machine (make test beside another job) would turn ✗ into ~.
    ctx.machine.busyCoresAtStart = busyAtStart ?? 0;
    return { ...result, machine: ctx.machine };
  };
  const code = await runExperiment(
    {
      name: 'rate-limit',
      command: defineCommand({ usage: 'x', summary: 'x', flags: { ...COMMON_FLAGS } }),
      options: () => ({}),
      run,
      report: { render, shape, hints, notShown },
    },
    ['--shape'],
    { stdout: sink, stderr: { write: () => true } },
  );
  return { code, stdout };
}

test('--shape carries the reason a line was not shown, as a comment the expected files skip', async () => {
  const { code, stdout } = await shapeOutput(noRedis());
  assert.equal(code, 0);
  assert.match(stdout, /^redis {2}allowed-vs-limit {2}cannot-show-on-this-machine$/m);
  assert.ok(stdout.includes(`${NOT_SHOWN_PREFIX}redis-server was not found`), stdout);
});

test('a healthy file with a line not shown holds, and names the line and why', async () => {
  const f = file('alice.txt', (await shapeOutput(noRedis())).stdout);
  const r = await runScript('measure/compare.ts', [f]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /alice\.txt: the shape holds/);
  assert.match(r.stdout, /rate-limit: 2 held, 1 not shown on that machine/);
  assert.match(r.stdout, /- redis {2}allowed-vs-limit {2}exactly-the-limit/);
  assert.match(r.stdout, /not shown, because: redis-server was not found/);
});

test('a line that did not hold: exit 1, and the line named with what the file has', async () => {
  const broken = noRedis();
  broken.runs[0] = { ...broken.runs[0]!, allowed: 60, refused: 0, allowedByWorker: { 1: 15, 2: 15, 3: 15, 4: 15 } };
  const f = file('bob.txt', (await shapeOutput(broken)).stdout);
  const r = await compare([f]);
  assert.equal(r.code, 1, r.stdout + r.stderr);
  assert.match(r.stdout, /bob\.txt: the shape does not hold/);
  assert.match(
    r.stdout,
    /✗ memory {2}allowed-vs-limit {2}one-limit-per-worker {3}\(the file has: memory {2}allowed-vs-limit {2}no-limit\)/,
  );
});

test('a run on a busy machine says so in its --shape file, and the comparison passes it on', async () => {
  const f = file('dave.txt', (await shapeOutput(noRedis(), 1.2)).stdout);
  const r = await compare([f]);
  assert.equal(r.code, 0);
  assert.match(r.stdout, /note from the run: other programs kept about 1\.2 of the \d+ cores busy when the run began/);
});

test('a whole lesson in one file is split by experiment; a missing line does not hold', () => {
  const expected = loadExpected();
  const lesson = [...expectedShape('blocking'), ...expectedShape('cluster').slice(1)].join('\n') + '\n';
  const v = compareText('carol.txt', lesson, expected);
  assert.deepEqual([...v.experiments.keys()], ['blocking', 'cluster']);
  assert.equal(v.experiments.get('blocking')!.holds, true);
  assert.equal(v.experiments.get('cluster')!.holds, false, 'the fresh-connections line is missing');
  assert.equal(v.holds, false);
});

test('several files: exit 1 if any did not hold; not a shape file, or no file: exit 2', async () => {
  const good = file('good.txt', expectedShape('cluster').join('\n') + '\n');
  const bad = file(
    'bad.txt',
    expectedShape('cluster')
      .map((l) => l.replace('all-answered', 'some-failed'))
      .join('\n') + '\n',
  );
  const both = await compare([good, bad]);
  assert.equal(both.code, 1);
  assert.match(both.stdout, /good\.txt: the shape holds[\s\S]*bad\.txt: the shape does not hold/);
  const foreign = await compare([file('notes.txt', 'remember to bring snacks\n')]);
  assert.equal(foreign.code, 2);
  assert.match(foreign.stderr, /holds no shape line of the kit/);
  const mixed = await compare([
    file('mixed.txt', `${expectedShape('cluster').join('\n')}\nsomething  else  entirely\n`),
  ]);
  assert.equal(mixed.code, 1);
  assert.match(mixed.stdout, /not a line of any experiment: something {2}else {2}entirely/);
  assert.equal((await compare([])).code, 2);
  assert.equal((await compare([path.join(dir, 'nope.txt')])).code, 2);
  assert.equal((await compare(['--experiment', 'bogus', good])).code, 2);
  const help = await compare(['--help']);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /Usage: npx tsx measure\/compare\.ts/);
});
