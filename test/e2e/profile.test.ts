// blocking --profile for real: the loan service runs under V8's CPU profiler, the shape adds the
// profile lines of expected-output/profile/blocking.txt, the terminal names scryptSync with its
// share and what profiling cost, and the flame graph page opens from disk in Chromium and shows the
// profile (speedscope's title names it), fetching nothing and logging no error. Its screenshots,
// with the terminal's table beside, are docs/profile-flame.png and docs/profile-terminal.png.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { launchChromium } from '../../web/browser.ts';
import { noBrowser } from '../traffic-lab-helpers.ts';
import { expectedShape, failOnWarnings, ROOT, runScript, screenshotPath } from '../helpers.ts';

failOnWarnings();

test('blocking --quick --profile: the profile lines hold, the top functions and the cost are printed, the files are written', async (t) => {
  const r = await runScript('measure/blocking.ts', ['--quick', '--profile', '--shape']);
  const dir = /written to (profiles\/blocking-[\d-]+)\//.exec(r.stderr)?.[1];
  assert.ok(dir, r.stderr);
  t.after(() => rmSync(path.join(ROOT, dir), { recursive: true, force: true }));
  const profiled = readFileSync(path.join(ROOT, 'expected-output', 'profile', 'blocking.txt'), 'utf8')
    .trim()
    .split('\n');
  assert.deepEqual(r.stdout.trim().split('\n'), [...expectedShape('blocking'), ...profiled], r.stderr);
  assert.equal(r.code, 0);
  assert.match(r.stderr, /loan \(pid \d+\), blocking: \d+ ms of samples, \d+ % of them idle/);
  assert.match(r.stderr, /│ scryptSync +│ node:internal\/crypto\/scrypt:\d+ +│ +\d+ │ +(9\d|100) % │/);
  assert.match(r.stderr, /what profiling cost here: a replica under the profiler served \d+ % of the \/fast requests/);
  const files = readdirSync(path.join(ROOT, dir));
  const cpuprofile = files.find((f) => /^loan-\d+\.cpuprofile$/.test(f));
  assert.ok(cpuprofile && files.includes(cpuprofile.replace('.cpuprofile', '.html')), files.join(', '));
  const cut = JSON.parse(readFileSync(path.join(ROOT, dir, cpuprofile), 'utf8')) as {
    samples: number[];
    nodes: { callFrame: { url: string } }[];
  };
  assert.ok(cut.samples.length > 100, `${cut.samples.length} samples`);
  assert.ok(
    cut.nodes.some((n) => n.callFrame.url.endsWith('/servers/loan.ts')),
    'frames mapped back to the TypeScript source',
  );
});

test('a flame graph page opens from disk and shows its profile', { skip: noBrowser }, async (t) => {
  const r = await runScript('measure/blocking.ts', ['--quick', '--profile', '--shape']);
  const dir = /written to (profiles\/blocking-[\d-]+)\//.exec(r.stderr)?.[1];
  assert.ok(dir, r.stderr);
  t.after(() => rmSync(path.join(ROOT, dir), { recursive: true, force: true }));
  const html = readdirSync(path.join(ROOT, dir)).find((f) => /^loan-\d+\.html$/.test(f))!;
  const browser = await launchChromium();
  t.after(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1400, height: 800 } });
  const failed: string[] = [];
  page.on('pageerror', (e) => failed.push(e.message));
  page.on('requestfailed', (req) => failed.push(req.url()));
  page.on('console', (m) => m.type() === 'error' && failed.push(m.text()));
  await page.goto(pathToFileURL(path.join(ROOT, dir, html)).href);
  // speedscope names the tab after the profile once it has loaded it.
  await page.waitForFunction((name) => document.title.startsWith(name), html.replace('.html', '.cpuprofile'));
  assert.ok(await page.locator('canvas').count(), 'the flame graph is drawn on a canvas');
  await page.screenshot({ path: screenshotPath('profile-flame.png') });
  // Nothing fails and nothing is fetched: the page hands speedscope its profile itself.
  assert.deepEqual(failed, []);
  // The terminal's side of the same run, as a picture for docs/: the heaviest functions per half.
  const printed = r.stderr.slice(r.stderr.indexOf('Profiles (--profile)'));
  const escaped = printed.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  const terminal = await browser.newPage({ viewport: { width: 1000, height: 200 } });
  await terminal.setContent(
    `<pre style="margin:0;padding:16px;background:#1e1e1e;color:#ddd;font:13px/1.35 monospace;width:max-content">${escaped}</pre>`,
  );
  await terminal.screenshot({ path: screenshotPath('profile-terminal.png'), fullPage: true });
});
