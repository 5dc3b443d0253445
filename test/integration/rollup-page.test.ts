// Proves the class roll-up fit for a projector, on a class of six built from fixture results (no
// experiment runs, so it stays in the fast tier): a class summary first, the value each shape line
// should read beside every student's cell (and what a failing run read instead), the graded
// exercises that check-exercise --grade --save wrote, and on the page at 1,400 × 900 in Chromium
// charts as wide as the page, y axes from zero and no empty legend rows. The page's screenshot is
// written to $NSL_SCREENSHOTS (make screenshots: docs/), else to the temporary folder.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { main as rollupMain } from '../../measure/rollup.ts';
import { main as checkMain } from '../../measure/check-exercise.ts';
import { shape as blockingShape } from '../../results/blocking/report.ts';
import { blockingResult, clusterResult, MACHINE, poolResult } from '../fixtures/results.ts';
import { loadExperiment } from '../../measure/lib/harness/experiments.ts';
import { failOnWarnings, runMainInProcess, screenshotPath } from '../helpers.ts';
import { noBrowser } from '../traffic-lab-helpers.ts';
import { launchChromium } from '../../web/browser.ts';

failOnWarnings();

const STUDENTS = ['ana', 'ben', 'chloe', 'dev', 'emma', 'farid'];

/** A --json document as an experiment writes it, from a result (its shape from its own report). */
async function doc(experiment: string, result: unknown): Promise<string> {
  const report = (await loadExperiment(experiment)).report;
  return JSON.stringify({
    experiment,
    result,
    shape: report.shape(result),
    holds: true,
    caveats: [],
    notShown: [],
    measures: report.measures?.(result) ?? [],
  });
}

/**
 * The class: every student ran blocking, pool and cluster (numbers varied a little per student);
 * ben's pooled light requests waited, so his blocking run fails its pooled lines; every student
 * graded exercise 1.2 through check-exercise itself (dev twice: too low, then right).
 */
async function makeClass(t: { after(fn: () => void): void }): Promise<string> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'nsl-rollup-page-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  for (const [i, student] of STUDENTS.entries()) {
    const folder = path.join(dir, student);
    mkdirSync(folder);
    const machine = {
      ...MACHINE,
      cores: i % 3 === 2 ? 4 : 2,
      busyCoresAtStart: 0.02 * i,
      nginx: '1.22.1',
      redis: student === 'emma' ? null : '7.0.15',
    };
    const blocking = blockingResult();
    blocking.machine = machine;
    blocking.blocks[0]!.heavyMs += 30 * i;
    blocking.blocks[0]!.lightMs = blocking.blocks[0]!.lightMs.map((v) => v + 28 * i);
    if (student === 'ben') blocking.blocks[1]!.lightMs = blocking.blocks[1]!.lightMs.map((v) => v + 1100);
    writeFileSync(path.join(folder, 'blocking.json'), await doc('blocking', blocking));
    writeFileSync(path.join(folder, 'pool.json'), await doc('pool', { ...poolResult(), machine }));
    writeFileSync(path.join(folder, 'cluster.json'), await doc('cluster', { ...clusterResult(), machine }));
    const answers = student === 'dev' ? ['100', '330'] : student === 'emma' ? ['900'] : ['330'];
    for (const [k, answer] of answers.entries()) {
      const r = await runMainInProcess(checkMain, [
        '--lesson',
        '1',
        '--exercise',
        '2',
        '--answer',
        answer,
        '--grade',
        '--save',
        folder,
      ]);
      assert.ok(r.code === 0 || r.code === 1, r.stderr);
      assert.match(
        r.stderr,
        new RegExp(`saved: .*exercise-1\\.2${k ? `-${k + 1}` : ''}\\.json`),
        'a second attempt goes beside the first',
      );
    }
  }
  assert.ok(blockingShape(blockingResult()).length > 0);
  return dir;
}

test('the terminal roll-up: a class summary, the expected value beside each line, the graded exercises', async (t) => {
  const dir = await makeClass(t);
  const r = await runMainInProcess(rollupMain, [dir]);
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stdout, /6 student\(s\), 18 run\(s\), 0 file\(s\) skipped, 7 graded attempt\(s\)/);
  assert.match(
    r.stdout,
    /Class summary:\n(.*\n)*? {2}blocking: 5 of 6 student\(s\) held every line; pooled {2}light-1 held by 5 of 6/,
  );
  assert.match(r.stdout, / {2}cluster: 6 of 6 student\(s\) held every line\n/);
  assert.match(r.stdout, /│ blocking {2}light-1\s+│ waited-for-heavy\s+│/);
  const graded = r.stdout.split('\n').find((l) => l.includes('│ 1.2 '))!;
  assert.match(graded, /│\s+5 of 6\s+│\s+✓\s+│\s+✓\s+│\s+✓\s+│\s+✗ too low, ✓\s+│\s+✗ too high\s+│\s+✓\s+│/);
  assert.doesNotMatch(r.stdout, /300|350|335/, 'no range or worked answer of exercise 1.2');
});

test("one student's folder given for the class is a usage error, naming the file that gives it away", async (t) => {
  const dir = await makeClass(t);
  const r = await runMainInProcess(rollupMain, [path.join(dir, 'ana')]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /looks like one student's folder: it holds (blocking|cluster|pool|exercise-1\.2)\.json/);
});

test('a graded file with a bad field is skipped, naming the field', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'nsl-rollup-graded-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(
    path.join(dir, 'gus.exercise.json'),
    JSON.stringify({
      kind: 'graded-exercise',
      lesson: 1,
      exercise: 2,
      title: 'x',
      verdict: 'maybe',
      at: new Date().toISOString(),
    }),
  );
  const r = await runMainInProcess(rollupMain, [dir]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /gus\.exercise\.json: a graded exercise whose 'verdict' is missing/);
});

test(
  'the page at 1,400 × 900: summary first, page-wide charts from zero, no empty legend, expected beside each cell',
  { skip: noBrowser },
  async (t) => {
    const dir = await makeClass(t);
    const out = path.join(dir, 'class.html');
    assert.equal((await runMainInProcess(rollupMain, [dir, '--html', out])).code, 1);
    assert.doesNotMatch(readFileSync(out, 'utf8'), /300–350|≈ 335/);
    const browser = await launchChromium();
    t.after(() => browser.close());
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    await page.goto(pathToFileURL(out).href);
    // Each chart's first draw sets its data-ymin.
    await page.waitForFunction(
      () =>
        document.querySelectorAll('.chart').length > 0 &&
        [...document.querySelectorAll<HTMLElement>('.chart')].every((c) => c.dataset.ymin !== undefined),
    );
    const seen = await page.evaluate(() => ({
      headings: [...document.querySelectorAll('h2')].map((h) => h.textContent),
      chartWidths: [...document.querySelectorAll('.chart canvas')].map((c) => c.getBoundingClientRect().width),
      yMins: [...document.querySelectorAll<HTMLElement>('.chart')].map((c) => Number(c.dataset.ymin)),
      legends: document.querySelectorAll('.u-legend').length,
      keys: [...document.querySelectorAll('.key')].map((k) => k.textContent ?? ''),
      scrollWidth: document.documentElement.scrollWidth,
      lightRow:
        [...document.querySelectorAll('tr')].find((tr) => tr.cells[0]?.textContent === 'pooled  light-1')?.innerText ??
        '',
      summary: (document.querySelector('table.summary') as HTMLElement | null)?.innerText ?? '',
    }));
    // What a projector shows: the first screen, and the first experiment's table and charts.
    await page.screenshot({ path: screenshotPath('rollup.png') });
    await page.evaluate(() => document.querySelectorAll('h2')[3]!.scrollIntoView());
    await page.screenshot({ path: screenshotPath('rollup-experiment.png') });
    assert.deepEqual(errors, []);
    assert.equal(seen.headings[0], 'Class summary', 'the summary comes first');
    assert.equal(seen.headings[1], 'Graded exercises');
    assert.ok(seen.chartWidths.length >= 5);
    for (const w of seen.chartWidths) assert.ok(w >= 1300, `a chart is ${w} px wide on a 1,400 px page`);
    for (const y of seen.yMins) assert.equal(y, 0, 'the y axis starts at zero');
    assert.equal(seen.legends, 0, 'no uPlot legend');
    for (const k of seen.keys.slice(1)) assert.match(k, /each student|the shape's threshold/);
    assert.ok(seen.scrollWidth <= 1400, `nothing wider than the page (${seen.scrollWidth} px)`);
    assert.match(seen.lightRow, /answered-at-once/, 'the expected value beside the cells');
    assert.match(seen.lightRow, /✗ 1\/1\s+read: waited-for-heavy/, "ben's cell says what his run read");
    assert.match(seen.summary, /blocking\s+5 of 6\s+pooled {2}light-1: held by 5 of 6/);
  },
);
