// Live mode as a user meets it: the Traffic Lab server runs the real lab (replicas, the kit's
// balancer, autocannon) for the page. Its routes refuse what is not theirs (403, 415, 400 naming
// the field, 409); in headless Chromium a kill on a real replica shows it dead with retries above
// 0; and every process a run started is gone after stop and after Ctrl-C. Closing the tab, which
// ends a run after the page's heartbeat has been missing for 3 s, is checked in the end-to-end
// tier (test/e2e/traffic-lab-tab-close.test.ts). Browser tests skip, saying why, where no Chromium
// is installed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TOKEN_HEADER } from '../../web/lab-server.ts';
import { assertAllGone, failOnWarnings, screenshotPath } from '../helpers.ts';
import { noBrowser, openPage, trafficLabForFile, type TrafficLab } from '../traffic-lab-helpers.ts';

failOnWarnings();

let lab: TrafficLab;
trafficLabForFile((l) => (lab = l));

/** Light settings: the test's own load must not be what the machine spends its time on. */
const SETTINGS = { replicas: 3, policy: 'round-robin', connections: 6, rate: 600, serviceMs: 1, durationS: 30 };

const post = (route: string, body: unknown, headers: Record<string, string> = {}) =>
  lab.send(`/live/${route}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', [TOKEN_HEADER]: lab.token, ...headers },
    body: JSON.stringify(body),
  });

test('live routes: 403 without the token or from another origin, 415 unless JSON, 400 naming the field, 409 with no run', async () => {
  assert.equal((await post('start', SETTINGS, { [TOKEN_HEADER]: 'x' })).status, 403);
  assert.equal((await post('start', SETTINGS, { origin: 'http://evil.example' })).status, 403);
  assert.equal((await lab.send(`/live/stream`)).status, 403);
  const form = await lab.send('/live/start', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', [TOKEN_HEADER]: lab.token },
    body: 'replicas=3',
  });
  assert.equal(form.status, 415);
  const bad: [unknown, string, RegExp][] = [
    [{ ...SETTINGS, policy: 'fastest' }, 'policy', /one of round-robin, .*ip-hash/],
    [{ ...SETTINGS, connections: 65 }, 'connections', /1 to 64/],
    [{ ...SETTINGS, rate: 'NaN' }, 'rate', /0 to 5000/],
    [{ ...SETTINGS, durationS: undefined }, 'durationS', /got null/],
    [[1, 2], 'body', /JSON object/],
  ];
  for (const [body, field, message] of bad) {
    const r = await post('start', body);
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.equal(JSON.parse(r.body).field, field);
    assert.match(JSON.parse(r.body).error, message);
  }
  assert.equal((await post('act', { action: 'explode' })).status, 400);
  assert.equal(JSON.parse((await post('act', { action: 'kill', replica: '../etc' })).body).field, 'replica');
  assert.equal((await post('act', { action: 'kill', replica: 'app1' })).status, 409);
  assert.equal(lab.startedPids().length, 0, 'nothing started');
});

test(
  'live: the page runs the real lab and the model alongside; "kill" shows the replica dead and retries above 0; a second start gets 409; stop leaves nothing',
  { skip: noBrowser, timeout: 90_000 },
  async () => {
    const { browser, page, errors } = await openPage(lab.url);
    try {
      // A simulated run first: its boxes and totals must be gone as soon as the live run starts.
      await page.selectOption('select[name=speed]', 'fast');
      await page.fill('input[name=durationS]', '2');
      await page.click('#start');
      await page.waitForSelector('#status[data-state="finished"]', { timeout: 30_000 });
      assert.notEqual(await page.textContent('#run-answers'), '–');
      await page.selectOption('select[name=mode]', 'live');
      await page.fill('input[name=replicas]', String(SETTINGS.replicas));
      await page.fill('input[name=connections]', String(SETTINGS.connections));
      await page.selectOption('select[name=clients]', 'open');
      await page.fill('input[name=rate]', String(SETTINGS.rate));
      await page.fill('input[name=durationS]', String(SETTINGS.durationS));
      await page.click('#start');
      assert.equal(await page.textContent('#run-answers'), '–', "the simulated run's totals are cleared");
      assert.equal(
        await page.locator('.replica').count(),
        0,
        "the simulated run's replicas (and their buttons) are gone",
      );
      await page.waitForFunction(() => Number(document.getElementById('run-answers')!.textContent) > 0, undefined, {
        timeout: 30_000,
      });
      // The simulator runs alongside with the same settings: its row fills too.
      await page.waitForFunction(() => Number(document.getElementById('model-answers')!.textContent) > 0, undefined, {
        timeout: 10_000,
      });
      const again = await post('start', SETTINGS);
      assert.equal(again.status, 409);
      assert.match(JSON.parse(again.body).error, /a live run is already going/);
      await page.click('.replica[data-replica="1"] button[data-action="kill"]');
      await page.waitForSelector('.replica[data-replica="1"][data-state="dead"]', { timeout: 5000 });
      await page.waitForFunction(() => Number(document.getElementById('run-retried')!.textContent) > 0, undefined, {
        timeout: 5000,
      });
      await page.screenshot({ path: screenshotPath('traffic-lab-live.png'), fullPage: true });
      const pids = lab.startedPids();
      assert.equal(pids.length, SETTINGS.replicas + 1, lab.lines.join('\n'));
      await page.click('#stop');
      await page.waitForSelector('#status[data-state="finished"]', { timeout: 10_000 });
      await assertAllGone(pids);
      assert.deepEqual(errors, []);
    } finally {
      await browser.close();
    }
  },
);

test(
  'live actions run one at a time: adds at once keep the cap of 8 and distinct names; Stop while starting stops it',
  { timeout: 60_000 },
  async () => {
    const stream = await fetch(`http://127.0.0.1:${lab.port}/live/stream?token=${lab.token}`);
    try {
      assert.equal((await post('start', { ...SETTINGS, rate: 0.5 })).status, 400, 'a rate is whole req/s');
      assert.equal((await post('start', { ...SETTINGS, replicas: 6, rate: 200 })).status, 200);
      const adds = await Promise.all(Array.from({ length: 4 }, () => post('act', { action: 'add' })));
      assert.deepEqual(adds.map((r) => r.status).sort(), [200, 200, 409, 409]);
      assert.deepEqual(
        adds
          .filter((r) => r.status === 200)
          .map((r) => JSON.parse(r.body).replica)
          .sort(),
        ['app7', 'app8'],
      );
      const stopFrom = lab.lines.length;
      assert.deepEqual(JSON.parse((await post('stop', {})).body), { stopped: true });
      await lab.waitForLine(/^live run ended: stopped from the page/, 10_000, stopFrom);
      // Stop while the lab is still starting: the start answers that it was stopped, and nothing stays.
      const before = lab.startedPids().length;
      const from = lab.lines.length;
      const starting = post('start', { ...SETTINGS, replicas: 2 });
      await lab.waitForLine(/^started replica /, 10_000, from);
      assert.equal((await post('stop', {})).status, 200);
      const started = await starting;
      assert.equal(started.status, 409);
      assert.match(JSON.parse(started.body).error, /stopped before it began/);
      await assertAllGone(lab.startedPids().slice(before));
    } finally {
      await stream.body?.cancel().catch(() => undefined);
    }
  },
);

test(
  'Ctrl-C during a live run ends the server and every process the run started, and says so',
  { timeout: 60_000 },
  async () => {
    const before = lab.startedPids().length;
    const stream = await fetch(`http://127.0.0.1:${lab.port}/live/stream?token=${lab.token}`);
    const started = await post('start', { ...SETTINGS, replicas: 2 });
    assert.equal(started.status, 200, started.body);
    const pids = lab.startedPids().slice(before);
    assert.equal(pids.length, 3);
    const exited = new Promise<number | null>((resolve) => lab.child.once('exit', (c) => resolve(c)));
    const said = lab.waitForLine(/^stopped: /, 10_000);
    lab.child.kill('SIGINT');
    assert.equal(await exited, 0);
    assert.match(await said, /^stopped: the live run and its processes, then the Traffic Lab server on port \d+$/);
    await assertAllGone([lab.child.pid!, ...pids]);
    await stream.body?.cancel().catch(() => undefined);
  },
);
