// Proves the Traffic Lab on native Windows, with the platform injected (NSL_PLATFORM=win32 in its
// server's environment): a live run is refused before anything starts, with a 501 that says to
// use WSL2, while the page for the simulation mode is served as anywhere else. The scripts'
// refusal is checked in test/unit/native-windows.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TOKEN_HEADER } from '../../web/lab-server.ts';
import { failOnWarnings } from '../helpers.ts';
import { trafficLabForFile, type TrafficLab } from '../traffic-lab-helpers.ts';

failOnWarnings();

let lab: TrafficLab;
trafficLabForFile((l) => (lab = l), { NSL_PLATFORM: 'win32' });

const SETTINGS = { replicas: 2, policy: 'round-robin', connections: 2, rate: 100, serviceMs: 1, durationS: 5 };

test('native Windows: a live run is refused (501, use WSL2) and nothing starts', async () => {
  const r = await lab.send('/live/start', {
    method: 'POST',
    headers: { 'content-type': 'application/json', [TOKEN_HEADER]: lab.token },
    body: JSON.stringify(SETTINGS),
  });
  assert.equal(r.status, 501, r.body);
  assert.match(JSON.parse(r.body).error, /native Windows.*WSL2/);
  assert.equal(lab.startedPids().length, 0);
});

test('native Windows: the page for the simulation mode is served', async () => {
  const r = await lab.send(`/?token=${lab.token}`);
  assert.equal(r.status, 200);
  assert.match(r.body, /Traffic Lab/);
  assert.equal((await lab.send('/app.js', { headers: { [TOKEN_HEADER]: lab.token } })).status, 200);
});
