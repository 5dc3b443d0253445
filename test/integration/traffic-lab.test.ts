// The Traffic Lab as a user meets it: the real server process (its checks on Host, Origin and the
// token, its Ctrl-C), and the page in a real headless Chromium (no console errors; a degraded
// replica shows round robin's p95 far above least connections'; a kill shows the replica dead
// and retries above 0). Browser tests skip, saying why, where no Chromium is installed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TOKEN_HEADER } from '../../web/lab-server.ts';
import { assertAllGone, failOnWarnings, screenshotPath } from '../helpers.ts';
import { noBrowser, openPage as open, trafficLabForFile, type TrafficLab } from '../traffic-lab-helpers.ts';

failOnWarnings();

let lab: TrafficLab;
trafficLabForFile((l) => (lab = l));

const get = (pathAndQuery: string, headers: Record<string, string> = {}, method: 'GET' | 'POST' = 'GET') =>
  lab.send(pathAndQuery, { headers, method });
const openPage = () => open(lab.url);

test('the page and its assets need the token; a foreign Host or Origin gets 403', async () => {
  const page = await get(`/?token=${lab.token}`);
  assert.equal(page.status, 200);
  assert.match(page.body, /Traffic Lab/);
  assert.match(String(page.headers['content-security-policy']), /frame-ancestors 'none'/);
  assert.equal((await get('/app.js', { [TOKEN_HEADER]: lab.token })).status, 200);
  const refused: [string, Record<string, string>][] = [
    ['/', {}],
    [`/?token=${'0'.repeat(32)}`, {}],
    [`/?token=${lab.token}x`, {}],
    [`/?token=${lab.token}`, { host: `evil.example:${lab.port}` }],
    [`/?token=${lab.token}`, { host: '127.0.0.1:1' }],
    [`/?token=${lab.token}`, { origin: 'http://evil.example' }],
    [`/?token=${lab.token}`, { origin: `http://127.0.0.1:${lab.port + 1}` }],
  ];
  for (const [p, h] of refused) {
    const r = await get(p, h);
    assert.equal(r.status, 403, `${p} ${JSON.stringify(h)}`);
    assert.equal(JSON.parse(r.body).error, 'forbidden');
  }
  assert.equal(
    (await get(`/?token=${lab.token}`, { origin: `http://localhost:${lab.port}`, host: `localhost:${lab.port}` }))
      .status,
    200,
  );
  assert.equal((await get(`/nope?token=${lab.token}`)).status, 404);
  assert.equal((await get(`/?token=${lab.token}`, {}, 'POST')).status, 405);
});

test(
  'first sight: the topology drawn from the settings before Start, and the buttons that do not apply disabled',
  { skip: noBrowser, timeout: 60_000 },
  async () => {
    const { browser, page, errors } = await openPage();
    try {
      const seen = () =>
        page.evaluate(() => ({
          boxes: [...document.querySelectorAll<HTMLElement>('.replica')].map((b) => b.dataset.state),
          boxButtonsEnabled: [...document.querySelectorAll<HTMLButtonElement>('.replica button')].filter(
            (b) => !b.disabled,
          ).length,
          balancer: document.getElementById('balancer')!.hidden
            ? null
            : document.getElementById('balancer')!.textContent,
          disabled: [...document.querySelectorAll<HTMLButtonElement | HTMLInputElement>('button, input, select')]
            .filter((b) => b.disabled && !b.closest('.replica'))
            .map((b) => b.id || b.name)
            .sort(),
          kill: document.getElementById('kill-one')!.textContent,
          note: !document.getElementById('charts-empty')!.hidden && document.getElementById('charts')!.hidden,
        }));
      const first = await seen();
      await page.screenshot({ path: screenshotPath('traffic-lab-start.png'), fullPage: true });
      assert.deepEqual(
        first.boxes,
        ['not started', 'not started', 'not started'],
        'the default 3 replicas, before Start',
      );
      assert.equal(first.boxButtonsEnabled, 0);
      assert.equal(first.balancer, 'balancer · round robin');
      assert.deepEqual(
        first.disabled,
        ['add', 'kill-one', 'model', 'networks', 'rate', 'remove', 'stop'],
        'nothing to stop or act on; fields of other settings',
      );
      assert.equal(first.kill, 'Kill 1 replica');
      assert.ok(first.note, 'no empty charts: a note says what will appear');
      await page.fill('input[name=replicas]', '5');
      await page.check('input[name=degrade]');
      await page.selectOption('select[name=policy]', 'ip-hash');
      const five = await seen();
      assert.deepEqual(five.boxes, [
        'not started',
        'not started',
        'not started',
        'not started',
        'not started, degraded',
      ]);
      assert.equal(five.balancer, 'balancer · ip-hash');
      assert.ok(!five.disabled.includes('networks'), 'ip-hash: the client networks apply');
      await page.selectOption('select[name=topology]', 'single');
      const single = await seen();
      assert.deepEqual(single.boxes, ['not started'], 'one app server');
      assert.equal(single.balancer, null, 'and no balancer');
      assert.equal(single.kill, 'Kill the app server');
      assert.ok(single.disabled.includes('replicas') && single.disabled.includes('degrade'));
      await page.selectOption('select[name=topology]', 'balanced');
      await page.uncheck('input[name=degrade]');
      await page.selectOption('select[name=clients]', 'open');
      await page.selectOption('select[name=mode]', 'live');
      const live = await seen();
      assert.ok(
        !live.disabled.includes('rate') && !live.disabled.includes('model'),
        'an open loop has a rate; live mode a model',
      );
      assert.ok(
        live.disabled.includes('speed') && live.disabled.includes('thinkMs'),
        'live runs in real time, without think time',
      );
      await page.selectOption('select[name=mode]', 'sim');
      await page.selectOption('select[name=clients]', 'closed');
      await page.click('#start');
      await page.waitForSelector('#status[data-state="running"]');
      await page.waitForFunction(() => Number(document.getElementById('run-answers')!.textContent) > 0);
      const running = await seen();
      for (const id of ['stop', 'kill-one', 'add', 'remove'])
        assert.ok(!running.disabled.includes(id), `${id} applies to a running simulation`);
      assert.ok(running.boxButtonsEnabled > 0 && !running.note);
      await page.click('#stop');
      assert.ok((await seen()).disabled.includes('stop'));
      assert.deepEqual(errors, []);
    } finally {
      await browser.close();
    }
  },
);

test(
  "simulation: one degraded replica gives round robin a p95 at least 10x least connections'",
  { skip: noBrowser, timeout: 60_000 },
  async () => {
    const { browser, page, errors } = await openPage();
    try {
      const p95 = async (policy: string) => {
        await page.selectOption('select[name=policy]', policy);
        await page.check('input[name=degrade]');
        await page.selectOption('select[name=speed]', 'fast');
        await page.fill('input[name=durationS]', '20');
        await page.click('#start');
        await page.waitForSelector('#status[data-state="finished"]', { timeout: 30_000 });
        return Number(await page.textContent('[data-testid="run-p95"]'));
      };
      const rr = await p95('round-robin');
      const lc = await p95('least-connections');
      assert.ok(rr >= 10 * lc, `round robin p95 ${rr} ms, least connections ${lc} ms`);
      await page.screenshot({ path: screenshotPath('traffic-lab.png'), fullPage: true });
      assert.deepEqual(errors, []);
    } finally {
      await browser.close();
    }
  },
);

test(
  'simulation: "kill" on a replica shows it dead, and the requests it held are retried',
  { skip: noBrowser, timeout: 60_000 },
  async () => {
    const { browser, page, errors } = await openPage();
    try {
      await page.click('#start');
      await page.waitForSelector('#status[data-state="running"]');
      await page.waitForFunction(() => Number(document.getElementById('run-answers')!.textContent) > 0);
      await page.click('.replica[data-replica="0"] button[data-action="kill"]');
      await page.waitForSelector('.replica[data-replica="0"][data-state="dead"]', { timeout: 5000 });
      await page.waitForFunction(() => Number(document.getElementById('run-retried')!.textContent) > 0, undefined, {
        timeout: 5000,
      });
      await page.click('#stop');
      assert.deepEqual(errors, []);
    } finally {
      await browser.close();
    }
  },
);

test(
  'simulation: ip-hash with one client network (loopback) gives one replica every answer; six networks spread them',
  { skip: noBrowser, timeout: 60_000 },
  async () => {
    const { browser, page, errors } = await openPage();
    try {
      const shares = async (networks: string) => {
        await page.selectOption('select[name=policy]', 'ip-hash');
        await page.fill('input[name=networks]', networks);
        await page.selectOption('select[name=speed]', 'fast');
        await page.fill('input[name=durationS]', '5');
        await page.click('#start');
        await page.waitForSelector('#status[data-state="finished"]', { timeout: 30_000 });
        return page.$$eval('.replica [data-field="share"]', (cells) =>
          cells.map((c) => parseFloat(c.textContent ?? '')),
        );
      };
      assert.deepEqual(
        (await shares('1')).sort((a, b) => a - b),
        [0, 0, 100],
      );
      const six = await shares('6');
      assert.ok(six.length === 3 && six.every((x) => x > 5 && x < 95), `six networks: ${six.join(', ')} %`);
      assert.deepEqual(errors, []);
    } finally {
      await browser.close();
    }
  },
);

test('a bad setting is named on the page and nothing starts', { skip: noBrowser, timeout: 60_000 }, async () => {
  const { browser, page, errors } = await openPage();
  try {
    await page.fill('input[name=connections]', '0');
    await page.click('#start');
    await page.waitForSelector('#status[data-state="error"]');
    assert.match((await page.textContent('#status'))!, /connections must be 1 to 1000, a whole number; got "0"/);
    assert.equal(await page.textContent('[data-testid="run-answers"]'), '–');
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
  }
});

test('Ctrl-C ends the server, says what it stopped, and leaves nothing running', async () => {
  const pid = lab.child.pid!;
  const exited = new Promise<number | null>((resolve) => lab.child.once('exit', (c) => resolve(c)));
  const said = lab.waitForLine(/^stopped: /, 10_000);
  lab.child.kill('SIGINT');
  assert.equal(await exited, 0);
  assert.match(await said, new RegExp(`^stopped: the Traffic Lab server on port ${lab.port}$`));
  await assertAllGone([pid]);
});
