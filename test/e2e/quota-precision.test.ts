// Proves that a lesson 8 cluster worker under CPU-bound load uses its CPU quota ± 20 % (in-process
// throttle and, where this machine allows, a cgroup), measured by the worker with process.cpuUsage()
// and, independently, from /proc; a worker without the tight quota uses far more (so the check can
// fail); the cgroups it makes are removed when it stops. Each check measures for seconds, like an
// experiment, so this file is in the end-to-end tier; test/integration/autoscale-servers.test.ts
// has the cluster's other checks.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { Lab } from '../../measure/lib/process/lab.ts';
import { startLoad } from '../../measure/lib/load/load.ts';
import { probeCgroup, releaseCgroup } from '../../servers/lib/cpu/quota.ts';
import type { WorkerThrottle } from '../../servers/lib/cluster/messages.ts';
import { cpuTicks, failOnWarnings } from '../helpers.ts';
import { isEvent, type AutoscaleEvent } from '../../servers/lib/cluster/messages.ts';

failOnWarnings();
const lab = new Lab();
after(() => lab.close());

type Sync = AutoscaleEvent;
const isSync = isEvent('autoscale');
const cgroupSupport = probeCgroup(`nsl-test-${process.pid}`);
releaseCgroup(cgroupSupport);
const cgroupSkip = cgroupSupport.ok ? false : `no cgroup here: ${cgroupSupport.reason}`;
const TICK_MS = 10; // USER_HZ is 100 on Linux: /proc/<pid>/stat counts 10 ms ticks

/**
 * Starts a 1-worker cluster with `quota` cores (held at one worker), puts CPU-bound load on it for
 * 4 s, and returns the cores its worker used over the last 2.5 s: as the worker measured it
 * (process.cpuUsage(), reported to the primary) and as /proc counted it.
 */
async function coresUsed(
  quota: number,
  mode: 'throttle' | 'cgroup',
  extra: string[] = [],
): Promise<{ reported: number; proc: number; line: string; throttle?: WorkerThrottle }> {
  const s = await lab.start({
    server: 'managed-cluster',
    args: [
      '--port',
      '0',
      '--workers',
      '1',
      '--autoscale',
      '--min',
      '1',
      '--max',
      '1',
      '--cpu-quota',
      String(quota),
      '--quota-mode',
      mode,
      ...extra,
    ],
    ipc: true,
  });
  // The worker's pid as the primary reports it (the primary may have other children: tsx can
  // start an esbuild service process).
  const first = await s.waitForMessage((m): m is Sync => isSync(m) && m.workers.length === 1, 5000);
  const worker = first.workers[0]!.pid;
  const load = startLoad({ url: `${s.url}/work?ms=10`, connections: 4, durationS: 4 });
  await new Promise((r) => setTimeout(r, 1500)); // the load's first 1.5 s are its warm-up, not a readiness wait
  const from = s.messageCount;
  const ticks0 = cpuTicks(worker);
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, 2500));
  const proc = ((cpuTicks(worker) - ticks0) * TICK_MS) / (performance.now() - t0);
  const syncs = s.messagesFrom(from).filter(isSync);
  await load.result;
  const utils = syncs.map((m) => m.workers[0]?.utilization).filter((u): u is number => u !== undefined);
  assert.ok(utils.length >= 2, `at least two syncs with a utilization: ${JSON.stringify(syncs)}`);
  const line = s.lines.find((l) => l.startsWith('cpu quota:')) ?? '';
  const throttle = syncs.at(-1)?.workers[0]?.throttle;
  await lab.stop(s);
  return {
    reported: (utils.reduce((a, b) => a + b, 0) / utils.length) * quota,
    proc,
    line,
    ...(throttle ? { throttle } : {}),
  };
}

const within = (x: number, target: number, share = 0.2) => x >= target * (1 - share) && x <= target * (1 + share);

test('the in-process throttle holds a worker to its quota ± 20 % (0.25 and 0.5 core)', async () => {
  for (const quota of [0.25, 0.5]) {
    const r = await coresUsed(quota, 'throttle');
    assert.match(r.line, /in-process throttle/);
    assert.ok(within(r.reported, quota), `quota ${quota}: the worker measured ${r.reported.toFixed(3)} cores`);
    assert.ok(within(r.proc, quota), `quota ${quota}: /proc counted ${r.proc.toFixed(3)} cores`);
  }
});

test('a cgroup holds a worker to its quota ± 20 %', { skip: cgroupSkip }, async () => {
  const r = await coresUsed(0.25, 'cgroup');
  assert.match(r.line, /cgroup v[12]/);
  assert.ok(within(r.reported, 0.25), `the worker measured ${r.reported.toFixed(3)} cores`);
  assert.ok(within(r.proc, 0.25), `/proc counted ${r.proc.toFixed(3)} cores`);
  const left = readdirSync(cgroupSupport.ok ? cgroupSupport.base.replace(/\/[^/]+$/, '') : '/').filter((d) =>
    d.startsWith('nsl-'),
  );
  assert.deepEqual(left, [], "the run's cgroups are removed when it stops");
});

test('with a 100 ms period the throttle keeps periods: still the quota ± 20 %, and each sync counts its pauses', async () => {
  const r = await coresUsed(0.25, 'throttle', ['--quota-period-ms', '100']);
  assert.match(r.line, /period 100 ms, enforced by the in-process throttle/);
  assert.ok(within(r.proc, 0.25), `/proc counted ${r.proc.toFixed(3)} cores`);
  // About 5.5 s of listening by the last sync: some 55 periods, the worker stopped in most of them.
  assert.ok(r.throttle && r.throttle.periods! >= 40 && r.throttle.periods! <= 70, JSON.stringify(r.throttle));
  assert.ok(r.throttle.throttled >= 10 && r.throttle.throttled <= r.throttle.periods!, JSON.stringify(r.throttle));
});

test('a cgroup with a 100 ms period: its cpu.stat counts reach every sync', { skip: cgroupSkip }, async () => {
  const r = await coresUsed(0.25, 'cgroup', ['--quota-period-ms', '100']);
  assert.match(r.line, /period 100 ms, enforced by a cgroup v[12]/);
  assert.ok(within(r.proc, 0.25), `/proc counted ${r.proc.toFixed(3)} cores`);
  assert.ok(
    r.throttle && r.throttle.periods! >= 20 && r.throttle.throttled >= 10 && r.throttle.throttledMs > 500,
    JSON.stringify(r.throttle),
  );
});

test('the check can fail: a worker with a whole core uses far more than 0.25 × 1.2', async () => {
  const r = await coresUsed(1, 'throttle');
  assert.ok(!within(r.proc, 0.25), `an unthrottled worker used only ${r.proc.toFixed(3)} cores`);
  assert.ok(r.proc > 0.6, `${r.proc.toFixed(3)} cores`);
});
