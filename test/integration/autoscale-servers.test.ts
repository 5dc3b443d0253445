// Proves lesson 8's cluster features on real processes: the autoscaler retires workers gracefully
// while load runs (no failed request), the sign-up routes need a token, and the autoscaling flags
// are checked. How closely a worker keeps to its CPU quota is measured over seconds, so it is in the
// end-to-end tier: test/e2e/quota-precision.test.ts.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { Lab } from '../../measure/lib/process/lab.ts';
import type { ServerProcess } from '../../measure/lib/process/launch.ts';
import { startLoad } from '../../measure/lib/load/load.ts';
import { probe } from '../../measure/lib/load/probe.ts';
import { failOnWarnings, runScript } from '../helpers.ts';
import { isEvent, type AutoscaleEvent } from '../../servers/lib/cluster/messages.ts';
import type { SearchAnswer, TokenAnswer } from '../../servers/contracts.ts';

failOnWarnings();
const lab = new Lab();
after(() => lab.close());

type Sync = AutoscaleEvent;
const isSync = isEvent('autoscale');

test('scale-down retires workers gracefully while load runs: no failed request', async () => {
  const s: ServerProcess = await lab.start({
    server: 'managed-cluster',
    args: [
      '--port',
      '0',
      '--workers',
      '3',
      '--autoscale',
      '--min',
      '1',
      '--max',
      '3',
      '--window-s',
      '1',
      '--quota-mode',
      'throttle',
    ],
    ipc: true,
  });
  const from = s.messageCount;
  const load = startLoad({ url: `${s.url}/status`, connections: 8, durationS: 30, rate: 200 });
  try {
    // Light load on 3 workers: utilization far under target, so after the start-up period and the
    // 1 s window the controller goes down to 1.
    await s.waitForMessage((m): m is Sync => isSync(m) && m.current === 1 && m.retiring.length === 0, 20_000, from);
    await new Promise((r) => setTimeout(r, 500)); // keep loading the one left for a moment
  } finally {
    load.stop();
  }
  const result = await load.result;
  assert.equal(result.counts.errors, 0, 'no connection errors');
  assert.equal(result.counts.non2xx, 0, 'no error statuses');
  assert.ok(result.counts.completed > 500, `load ran: ${result.counts.completed}`);
  assert.equal(s.lines.filter((l) => /^worker \d+ retired \(exit code 0\)$/.test(l)).length, 2, s.lines.join('\n'));
  // 3 -> 1 at once, or 3 -> 2 -> 1, depending on the load's utilization.
  assert.ok(
    s.lines.some((l) => /^autoscale: [23] -> 1 workers .*: scale-down$/.test(l)),
    s.lines.join('\n'),
  );
  assert.equal((await probe(`${s.url}/status`)).status, 200);
  await lab.stop(s);
});

test('lesson 8 routes: sign-up gives a token, refresh and search need one', async () => {
  const s = await lab.start({
    server: 'managed-cluster',
    args: ['--port', '0', '--workers', '2', '--signup-cost', 'N=2^10,r=8,p=1'],
    ipc: true,
  });
  const signup = await probe<TokenAnswer>(`${s.url}/signup`, { method: 'POST', json: { name: 'ada' } });
  assert.equal(signup.status, 201);
  const token = signup.body.token as string;
  const auth = { authorization: `Bearer ${token}` };
  assert.equal((await probe(`${s.url}/token/refresh`, { method: 'POST', headers: auth })).status, 200);
  const books = await probe<SearchAnswer>(`${s.url}/books?q=river`, { headers: auth });
  assert.equal(books.status, 200);
  assert.ok((books.body.matches as number) > 0);
  assert.equal((await probe(`${s.url}/books?q=river`)).status, 401);
  assert.equal(
    (await probe(`${s.url}/token/refresh`, { method: 'POST', headers: { authorization: 'Bearer forged.token' } }))
      .status,
    401,
  );
  assert.equal((await probe(`${s.url}/signup`, { method: 'POST', json: {} })).status, 400);
  assert.equal((await probe(`${s.url}/work?ms=abc`)).status, 400);
  await lab.stop(s);
});

test('autoscaling flags are checked: usage errors exit 2 and say what is wrong', async () => {
  const cases: [string[], RegExp][] = [
    [['--min', '2'], /--min only means something with --autoscale/],
    [['--autoscale', '--min', '3', '--max', '2'], /--max \(2\) must be at least --min \(3\)/],
    [['--cpu-quota', '9'], /--cpu-quota must be a number of cores from 0.05 to 4/],
    [['--autoscale', '--quota-mode', 'fast'], /--quota-mode must be auto, cgroup or throttle/],
    [['--autoscale', '--target', '0'], /--target/],
    [['--quota-mode', 'throttle'], /--quota-mode only means something with a --cpu-quota/],
    [['--autoscale', '--sync-ms', '200'], /--sync-ms/],
    [['--quota-period-ms', '100'], /--quota-period-ms only means something with a --cpu-quota/],
    [['--cpu-quota', '0.25', '--quota-period-ms', '0'], /--quota-period-ms must be from 1 to 1000/],
    [['--cpu-quota', '0.25', '--quota-period-ms', '1001'], /--quota-period-ms must be from 1 to 1000/],
  ];
  // Usage errors start nothing, so the scripts are started side by side.
  const runs = await Promise.all(
    cases.map(([args]) => runScript('servers/managed-cluster.ts', ['--port', '0', ...args])),
  );
  for (const [i, [args, message]] of cases.entries()) {
    const r = runs[i]!;
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message);
  }
});
