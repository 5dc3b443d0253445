// Proves the class roll-up (measure/rollup.ts) on real --json files: three real runs of lesson 3's
// blocking experiment by two students, one of them edited to fail a line, are tabled by line and
// student with the failing line's likely cause; a truncated file, a foreign JSON file and an
// unknown experiment are named and skipped without stopping the roll-up; usage errors exit 2; the
// --html page opens in headless Chromium with a chart per measure, and a hostile name stays text.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { main } from '../../measure/rollup.ts';
import { pathToFileURL } from 'node:url';
import { failOnWarnings, runMainInProcess, runScript } from '../helpers.ts';
import { noBrowser, openPage } from '../traffic-lab-helpers.ts';
import { noWebKit, openWebKit } from '../other-browsers.ts';

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
  for (const [student, file] of [
    ['alice', 'blocking-1'],
    ['alice', 'blocking-2'],
    ['bob', 'blocking-1'],
  ] as const) {
    const r = await runScript('measure/blocking.ts', ['--quick', '--json'], {}, 120_000);
    assert.equal(r.code, 0, r.stderr);
    mkdirSync(path.join(dir, student), { recursive: true });
    writeFileSync(path.join(dir, student, `${file}.json`), r.stdout);
  }
  // bob's second run, as if its light requests had not waited: one line fails.
  const run = JSON.parse(readFileSync(path.join(dir, 'bob', 'blocking-1.json'), 'utf8'));
  run.shape = run.shape.map((l: string) => (l.startsWith('blocking  light-2') ? 'blocking  light-2  did-not-wait' : l));
  writeFileSync(path.join(dir, 'bob', 'blocking-2.json'), JSON.stringify(run));
  writeFileSync(
    path.join(dir, 'bob', 'cut.json'),
    readFileSync(path.join(dir, 'bob', 'blocking-1.json'), 'utf8').slice(0, 300),
  );
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
  assert.match(
    r.stdout,
    /bob · blocking: blocking {2}light-2 {2}waited-for-heavy \(this run: blocking {2}light-2 {2}did-not-wait\)\n\s+likely cause: with scryptSync/,
  );
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
  for (const [student, from] of [
    ['alice', 'alice/blocking-1.json'],
    ['alice', 'alice/blocking-2.json'],
    [hostile, 'bob/blocking-1.json'],
  ] as const) {
    mkdirSync(path.join(cls, student), { recursive: true });
    writeFileSync(path.join(cls, student, path.basename(from)), readFileSync(path.join(dir, from)));
  }
  writeFileSync(path.join(cls, 'cut.json'), '{"experiment": "blocking", "resu');
  const out = path.join(cls, 'class.html');
  const r = await runMainInProcess(main, [cls, '--html', out]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /Wrote .*class\.html/);
  const measured = JSON.parse(readFileSync(path.join(dir, 'alice', 'blocking-1.json'), 'utf8')).measures as {
    id: string;
  }[];
  return { out, hostile, measured };
}

test(
  '--html: one self-contained page that opens in Chromium with a chart per measure, every run a point, and no console error',
  { skip: noBrowser },
  async () => {
    const { out, hostile, measured } = await classPage();
    const html = readFileSync(out, 'utf8');
    assert.doesNotMatch(html, /<script[^>]+src=|<link[^>]+href=/, 'nothing loaded from elsewhere');
    assert.ok(measured.length >= 5, 'blocking --json lists its measures');
    const { browser, page, errors } = await openPage(pathToFileURL(out).href);
    try {
      await page.waitForFunction((n) => document.querySelectorAll('canvas').length >= n, measured.length, {
        timeout: 10_000,
      });
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
  },
);

test(
  '--html in WebKit (Safari\'s engine), with LANG=C.UTF-8 (navigator.language "C"): a chart per measure and no error',
  { skip: noWebKit, timeout: 60_000 },
  async () => {
    const { out, measured } = await classPage();
    const page = await openWebKit(pathToFileURL(out).href);
    try {
      await page.waitFor(
        (n) => document.querySelectorAll('canvas').length >= Number(n),
        String(measured.length),
        10_000,
      );
      assert.deepEqual(await page.errors(), []);
    } finally {
      await page.close();
    }
  },
);
