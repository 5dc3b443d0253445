// The Traffic Lab page in Firefox and in WebKit (Safari's engine), as in Chromium: it loads and
// reaches its ready status with no errors; simulation mode with a degraded replica shows round
// robin's p95 at least 10x least connections' (read from the page); live mode runs the real lab,
// a kill shows the replica dead with retries above 0, and Stop leaves no process of the run.
// Each engine skips, saying why, where it is not installed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import os from 'node:os';
import path from 'node:path';
import { TOKEN_HEADER } from '../../web/lab-server.ts';
import { assertAllGone, failOnWarnings } from '../helpers.ts';
import { noFirefox, noWebKit, openFirefox, openWebKit, type PageCheck, type PageDriver } from '../other-browsers.ts';
import { trafficLabForFile, type TrafficLab } from '../traffic-lab-helpers.ts';

failOnWarnings();

let lab: TrafficLab;
trafficLabForFile((l) => (lab = l));

const present: PageCheck = (selector) => document.querySelector(selector) !== null;
const positive: PageCheck = (id) => Number(document.getElementById(id)!.textContent) > 0;
const ready: PageCheck = (id) => document.getElementById(id)!.textContent!.startsWith('ready');

async function simulatedP95(page: PageDriver, policy: string): Promise<number> {
  await page.select('select[name=policy]', policy);
  await page.check('input[name=degrade]');
  await page.select('select[name=speed]', 'fast');
  await page.fill('input[name=durationS]', '20');
  await page.click('#start');
  await page.waitFor(present, '#status[data-state="finished"]', 30_000);
  return Number(await page.text('[data-testid="run-p95"]'));
}

async function liveKill(page: PageDriver, shot: string): Promise<void> {
  const before = lab.startedPids().length;
  await page.select('select[name=mode]', 'live');
  await page.check('input[name=degrade]', false); // as the Chromium live test: no hog
  await page.fill('input[name=replicas]', '3');
  await page.fill('input[name=connections]', '6');
  await page.select('select[name=clients]', 'open');
  await page.fill('input[name=rate]', '600');
  await page.fill('input[name=durationS]', '30');
  await page.click('#start');
  await page.waitFor(positive, 'run-answers', 30_000);
  await page.click('.replica[data-replica="1"] button[data-action="kill"]');
  await page.waitFor(present, '.replica[data-replica="1"][data-state="dead"]', 5000);
  await page.waitFor(positive, 'run-retried', 5000);
  await page.screenshot(shot);
  const pids = lab.startedPids().slice(before);
  assert.equal(pids.length, 4, lab.lines.join('\n'));
  await page.click('#stop');
  await page.waitFor(present, '#status[data-state="finished"]', 10_000);
  await assertAllGone(pids);
}

async function theLab(open: (url: string) => Promise<PageDriver>, slug: string): Promise<void> {
  const page = await open(lab.url);
  try {
    await page.waitFor(ready, 'status', 10_000);
    const rr = await simulatedP95(page, 'round-robin');
    const lc = await simulatedP95(page, 'least-connections');
    assert.ok(rr >= 10 * lc, `${page.name}: round robin p95 ${rr} ms, least connections ${lc} ms`);
    await page.screenshot(path.join(os.tmpdir(), `traffic-lab-simulation-${slug}.png`));
    await liveKill(page, path.join(os.tmpdir(), `traffic-lab-live-${slug}.png`));
    assert.deepEqual(await page.errors(), [], page.name);
  } finally {
    // A run left going would answer the next engine's Start with 409.
    await lab
      .send('/live/stop', {
        method: 'POST',
        headers: { 'content-type': 'application/json', [TOKEN_HEADER]: lab.token },
        body: '{}',
      })
      .catch(() => undefined);
    await page.close();
  }
}

test(
  'Firefox: the page loads, simulation shows the degraded replica, live mode kills a real replica and leaves nothing',
  { skip: noFirefox, timeout: 120_000 },
  () => theLab(openFirefox, 'firefox'),
);

test(
  "WebKit (Safari's engine): the page loads, simulation shows the degraded replica, live mode kills a real replica and leaves nothing",
  { skip: noWebKit, timeout: 120_000 },
  () => theLab(openWebKit, 'webkit'),
);
