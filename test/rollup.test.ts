// Proves the class roll-up (measure/rollup.ts) on real --json files: three real runs of lesson 3's
// blocking experiment by two students, one of them edited to fail a line, are tabled by line and
// student with the failing line's likely cause; a truncated file, a foreign JSON file and an
// unknown experiment are named and skipped without stopping the roll-up; usage errors exit 2; the
// --html page opens in headless Chromium with a chart per measure, and a hostile name stays text.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { main } from '../measure/rollup.ts';
import { LESSONS } from '../measure/lib/lessons.ts';
import { toolVersions } from '../measure/lib/machine.ts';
import { pathToFileURL } from 'node:url';
import { failOnWarnings, runMainInProcess, runScript } from './helpers.ts';
import { noBrowser, openPage } from './traffic-lab-helpers.ts';
import { noWebKit, openWebKit } from './other-browsers.ts';

failOnWarnings();
const made: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(path.join(os.tmpdir(), 'nsl-rollup-test-'));
  made.push(d);
  return d;
};
const dir = tempDir();
after(() => made.forEach((d) => rmSync(d, { recursive: true, force: true })));

before(async () => {
  for (const [student, file] of [['alice', 'blocking-1'], ['alice', 'blocking-2'], ['bob', 'blocking-1']] as const) {
    const r = await runScript('measure/blocking.ts', ['--quick', '--json'], {}, 120_000);
    assert.equal(r.code, 0, r.stderr);
    mkdirSync(path.join(dir, student), { recursive: true });
    writeFileSync(path.join(dir, student, `${file}.json`), r.stdout);
  }
  // bob's second run, as if its light requests had not waited: one line fails.
  const run = JSON.parse(readFileSync(path.join(dir, 'bob', 'blocking-1.json'), 'utf8'));
  run.shape = run.shape.map((l: string) => (l.startsWith('blocking  light-2') ? 'blocking  light-2  did-not-wait' : l));
  writeFileSync(path.join(dir, 'bob', 'blocking-2.json'), JSON.stringify(run));
  writeFileSync(path.join(dir, 'bob', 'cut.json'), readFileSync(path.join(dir, 'bob', 'blocking-1.json'), 'utf8').slice(0, 300));
  writeFileSync(path.join(dir, 'carol.pool.json'), '{"name": "not a kit result"}');
  writeFileSync(path.join(dir, 'dave.json'), JSON.stringify({ ...run, experiment: 'teleport' }));
});

test('a class folder: every line by student, the failing run with its likely cause, broken files skipped with reasons', async () => {
  const r = await runMainInProcess(main, [dir]);
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stdout, /2 student\(s\), 4 run\(s\), 3 file\(s\) skipped/);
  const row = (key: string) => r.stdout.split('\n').find((l) => l.includes(`│ ${key} `))!;
  assert.match(row('blocking  light-1'), /│\s+✓\s+│\s+✓\s+│/);
  assert.match(row('blocking  light-2'), /│\s+✓\s+│\s+✗ 1\/2\s+│/);
  assert.match(r.stdout, /bob · blocking: blocking {2}light-2 {2}waited-for-heavy \(this run: blocking {2}light-2 {2}did-not-wait\)\n\s+likely cause: with scryptSync/);
  assert.match(r.stdout, /cut\.json: not JSON/);
  assert.match(r.stdout, /carol\.pool\.json: not a kit result/);
  assert.match(r.stdout, /dave\.json: no experiment 'teleport'/);
  assert.match(r.stdout, /│ alice\s+│\s+\d+ │/);
});

test('the roll-up exits 0 when every run held, and 2 for a missing folder or one with no JSON', async () => {
  const good = tempDir();
  writeFileSync(path.join(good, 'alice.blocking.json'), readFileSync(path.join(dir, 'alice', 'blocking-1.json')));
  assert.equal((await runMainInProcess(main, [good])).code, 0);
  const empty = tempDir();
  for (const [args, message] of [
    [[], /name one folder/],
    [[path.join(dir, 'nope')], /no folder/],
    [[empty], /no \.json files/],
  ] as const) {
    const r = await runMainInProcess(main, [...args]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, message);
  }
});

/** A class folder of blocking runs (one student's name is HTML, one file cut short) and its --html page. */
async function classPage(): Promise<{ out: string; hostile: string; measured: { id: string }[] }> {
  const cls = tempDir();
  // A student name that is HTML: it must show as text, never run.
  const hostile = '<img src=x onerror="window.pwned=1">';
  for (const [student, from] of [['alice', 'alice/blocking-1.json'], ['alice', 'alice/blocking-2.json'], [hostile, 'bob/blocking-1.json']] as const) {
    mkdirSync(path.join(cls, student), { recursive: true });
    writeFileSync(path.join(cls, student, path.basename(from)), readFileSync(path.join(dir, from)));
  }
  writeFileSync(path.join(cls, 'cut.json'), '{"experiment": "blocking", "resu');
  const out = path.join(cls, 'class.html');
  const r = await runMainInProcess(main, [cls, '--html', out]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /Wrote .*class\.html/);
  const measured = JSON.parse(readFileSync(path.join(dir, 'alice', 'blocking-1.json'), 'utf8')).measures as { id: string }[];
  return { out, hostile, measured };
}

test('--html: one self-contained page that opens in Chromium with a chart per measure, every run a point, and no console error', { skip: noBrowser }, async () => {
  const { out, hostile, measured } = await classPage();
  const html = readFileSync(out, 'utf8');
  assert.doesNotMatch(html, /<script[^>]+src=|<link[^>]+href=/, 'nothing loaded from elsewhere');
  assert.ok(measured.length >= 5, 'blocking --json lists its measures');
  const { browser, page, errors } = await openPage(pathToFileURL(out).href);
  try {
    await page.waitForFunction((n) => document.querySelectorAll('canvas').length >= n, measured.length, { timeout: 10_000 });
    const seen = await page.evaluate(() => ({
      charts: document.querySelectorAll('figure').length,
      text: document.body.innerText,
      pwned: (window as unknown as { pwned?: number }).pwned,
      images: document.querySelectorAll('img').length,
    }));
    assert.equal(seen.charts, measured.length, 'a chart per measure');
    assert.equal(seen.pwned, undefined);
    assert.equal(seen.images, 0);
    assert.ok(seen.text.includes(hostile), 'the name shows as text');
    assert.match(seen.text, /cut\.json: not JSON/);
    assert.match(seen.text, /2 student\(s\), 3 run\(s\), 1 file\(s\) skipped/);
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
  }
});

test('--html in WebKit (Safari\'s engine), with LANG=C.UTF-8 (navigator.language "C"): a chart per measure and no error', { skip: noWebKit, timeout: 60_000 }, async () => {
  const { out, measured } = await classPage();
  const page = await openWebKit(pathToFileURL(out).href);
  try {
    await page.waitFor((n) => document.querySelectorAll('canvas').length >= Number(n), String(measured.length), 10_000);
    assert.deepEqual(await page.errors(), []);
  } finally {
    await page.close();
  }
});

// The class folder that `make test` fills: every end-to-end run of every lesson saved with --save
// (test/helpers.ts classSave), by the balancer it went through, and lesson 4's capacity run with a
// 0 ms commit, whose three database lines fail by design. This file runs after the e2e files.
const classDir = process.env.NSL_CLASS_DIR;
const classFiles = () => (classDir && existsSync(classDir) ? readdirSync(classDir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.json')) : []);
const noClass = classFiles().length === 0 ? 'no class folder: make test sets NSL_CLASS_DIR and its end-to-end runs fill it' : false;

test('the class folder of this make test\'s real runs: every lesson, no file skipped, and the one designed ✗ with its cause', { skip: noClass, timeout: 60_000 }, async () => {
  const files = classFiles();
  const r = await runMainInProcess(main, [classDir!, '--html', path.join(tempDir(), 'class.html')]);
  assert.match(r.stdout, new RegExp(`\\d+ student\\(s\\), ${files.length} run\\(s\\), 0 file\\(s\\) skipped`), r.stdout);
  const experiments = new Set(files.map((f) => path.basename(f, '.json')));
  for (const lesson of LESSONS) assert.ok(lesson.experiments.some((e) => experiments.has(e)), `lesson ${lesson.id} has a run in the class folder`);
  for (const e of experiments) assert.match(r.stdout, new RegExp(`^${e}$`, 'm'), `a table for ${e}`);
  // Every student's machine row names nginx's and Redis's versions as this machine has them.
  const tools = await toolVersions();
  for (const row of r.stdout.split('\n').filter((l) => /^│ (lb-|commit-)/.test(l))) {
    for (const v of [tools.nginx ?? 'missing', tools.redis ?? 'missing']) assert.ok(row.includes(v), `${row} names ${v}`);
  }
  const failed = [...r.stdout.matchAll(/^ {2}(\S+) · (\S+): (.+?) \(this run:/gm)].map((m) => `${m[1]} · ${m[2]}: ${m[3]}`);
  const designed = files.some((f) => f.startsWith('commit-ms-0')) ? ['user-scenario  5-replicas-vs-3  flat', 'user-scenario  database-at-5-replicas  full', 'user-scenario  replicas-cpu-at-5  below-cap'].map((l) => `commit-ms-0 · capped-scale-out: ${l}`) : [];
  assert.deepEqual(failed.sort(), designed.sort(), 'only the 0 ms commit run fails, and exactly its three lines');
  assert.equal(r.code, designed.length ? 1 : 0);
  if (designed.length) assert.equal((r.stdout.match(/likely cause: /g) ?? []).length, 3, 'each ✗ with its likely cause');
});
