// Live mode when the tab closes: the Traffic Lab server ends the run once no page has listened to
// its stream for HEARTBEAT_MS (3 s), within a few seconds, and every process the run started is
// gone. It waits out the heartbeat by design, so it is in the end-to-end tier; the other live-mode
// checks are in test/integration/traffic-lab-live.test.ts. Skips, saying why, without Chromium.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { assertAllGone, failOnWarnings } from '../helpers.ts';
import { noBrowser, openPage, trafficLabForFile, type TrafficLab } from '../traffic-lab-helpers.ts';

failOnWarnings();

let lab: TrafficLab;
trafficLabForFile((l) => (lab = l));

test(
  'live: closing the tab ends the run within a few seconds, and its processes',
  { skip: noBrowser, timeout: 60_000 },
  async () => {
    const before = lab.startedPids().length;
    const { browser, page } = await openPage(lab.url);
    await page.selectOption('select[name=mode]', 'live');
    await page.click('#start');
    await page.waitForFunction(() => Number(document.getElementById('run-answers')!.textContent) > 0, undefined, {
      timeout: 30_000,
    });
    const closedAt = Date.now();
    await browser.close();
    await lab.waitForLine(/^live run ending: no page is watching/, 10_000);
    // The run is over (and a new one may start) once the server says so, after its processes.
    await lab.waitForLine(/^live run ended: no page is watching/, 10_000);
    await assertAllGone(lab.startedPids().slice(before));
    assert.ok(Date.now() - closedAt < 10_000);
  },
);
