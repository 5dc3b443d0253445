// Proves the open-loop generator (measure/lib/load/open-loop.ts) on a real replica on loopback: a
// steady rate is achieved and sent on time; a generator made late on purpose (a busy loop in its
// own process) reports its lateness and says it, not the server, set the latency; the in-flight
// cap drops due requests while the server is frozen, and counts them; and the stall experiment's
// open-loop lines fail when latency is timed from the write instead of the intended send time.
// In the e2e tier: it times seconds of load (a stall, a late generator), about 14 s in all.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { Lab } from '../../measure/lib/process/lab.ts';
import { startReplicas, type Replica } from '../../measure/lib/process/topology.ts';
import { runOpenLoop } from '../../measure/lib/load/open-loop.ts';
import { openLoop, pass } from '../../measure/stall.ts';
import { shape } from '../../results/stall/report.ts';
import { examples } from '../../results/stall/examples.ts';
import { failOnWarnings } from '../helpers.ts';

failOnWarnings();
const lab = new Lab();
let replica: Replica;

before(async () => {
  replica = (await startReplicas(lab, 1))[0]!;
});
after(() => lab.close());

test('a steady open loop: every request sent and answered, the intended rate achieved, on time', async () => {
  const r = await runOpenLoop({ url: `${replica.url}/fast`, rate: 200, durationS: 2 });
  assert.deepEqual([r.sent, r.answered, r.errors, r.dropped], [400, 400, 0, 0]);
  assert.ok(r.achievedRate / r.intendedRate > 0.97, `achieved ${r.achievedRate} of ${r.intendedRate} req/s`);
  assert.equal(r.generatorLimited, false, `lateness p99 ${r.lateness.p99} ms, latency p99 ${r.latency.p99} ms`);
});

test('a generator made late on purpose reports its lateness, and says it set the latency', async () => {
  const BLOCK_MS = 60;
  // A busy loop in the generator's own process: 60 ms of every 100 its timers cannot run.
  const hog = setInterval(() => {
    const until = performance.now() + BLOCK_MS;
    while (performance.now() < until);
  }, 100);
  let r;
  try {
    r = await runOpenLoop({ url: `${replica.url}/fast`, rate: 200, durationS: 2 });
  } finally {
    clearInterval(hog);
  }
  assert.ok(r.lateness.p99 >= BLOCK_MS / 2, `lateness p99 ${r.lateness.p99} ms against ${BLOCK_MS} ms blocks`);
  assert.equal(r.generatorLimited, true, `lateness p99 ${r.lateness.p99} ms, latency p99 ${r.latency.p99} ms`);
  assert.equal(r.sent + r.dropped, 400, 'a late request is still sent');
});

test('the in-flight cap: while the server is frozen, due requests past it are dropped and counted', async (t) => {
  t.after(() => replica.proc.signal('SIGCONT'));
  const freeze = setTimeout(() => replica.proc.signal('SIGSTOP'), 300);
  const wake = setTimeout(() => replica.proc.signal('SIGCONT'), 900);
  const r = await runOpenLoop({ url: `${replica.url}/fast`, rate: 200, durationS: 1.2, maxInFlight: 10 });
  clearTimeout(freeze);
  clearTimeout(wake);
  assert.equal(r.sent + r.dropped, 240);
  assert.ok(r.dropped >= 60, `0.6 s frozen at 200 req/s, 10 in flight at most: ${r.dropped} dropped`);
  assert.equal(r.answered, r.sent);
});

test('a stop while the last answers are awaited ends the run at once, and abandoned requests are not failures', async (t) => {
  t.after(() => replica.proc.signal('SIGCONT'));
  replica.proc.signal('SIGSTOP');
  const abort = new AbortController();
  let failures = 0;
  let thawed = false;
  // 0.5 s of sending into a frozen replica, then the stop comes while every request still waits.
  const run = runOpenLoop({
    url: `${replica.url}/fast`,
    rate: 100,
    durationS: 0.5,
    connections: 4,
    signal: abort.signal,
    onFailure: () => void failures++,
  });
  const stop = setTimeout(() => abort.abort(), 1000);
  const thaw = setTimeout(() => {
    thawed = true;
    replica.proc.signal('SIGCONT');
  }, 5000);
  const r = await run;
  clearTimeout(stop);
  clearTimeout(thaw);
  replica.proc.signal('SIGCONT');
  assert.equal(thawed, false, 'the run ended before the replica was thawed');
  assert.equal(r.sent, 50);
  assert.equal(r.answered, 0);
  assert.equal(failures, 0, 'a stop abandons requests; it does not fail them');
});

test("the stall's open-loop lines hold when timed from the intended send, and fail when timed from the write", async () => {
  const url = `${replica.url}/fast`;
  const lines = async (timeFrom: 'intended' | 'written') => {
    const { pass: p, stallMs } = await pass(replica.proc, 3, openLoop(url, 3, timeFrom));
    return shape({ ...examples.healthy(), stallMs, passes: [p] }).filter((l) => !l.includes('  sent  '));
  };
  assert.deepEqual(await lines('intended'), [
    'stall  open-loop  p99  large-part-of-stall',
    'stall  open-loop  samples-during-stall  many',
  ]);
  assert.deepEqual(await lines('written'), [
    'stall  open-loop  p99  far-below-stall',
    'stall  open-loop  samples-during-stall  about-one-per-connection',
  ]);
});

test('only loopback targets, and a rate and a duration in range', async () => {
  await assert.rejects(runOpenLoop({ url: 'http://10.0.0.1/', rate: 10, durationS: 1 }), /only loopback/);
  await assert.rejects(runOpenLoop({ url: `${replica.url}/fast`, rate: 0, durationS: 1 }), /rate is 1 to/);
  await assert.rejects(runOpenLoop({ url: `${replica.url}/fast`, rate: 10, durationS: 601 }), /0 to 600 s/);
});
