// Proves on real processes that --cpu-quota holds a lesson 5 replica to its share of a core under a
// CPU-bound load, by its own cgroup (where one can be made) and by the in-process throttle, where the
// same load without a quota uses several times as much; the cgroup goes when the replica does. Each
// check measures for seconds, like an experiment, so it is in the end-to-end tier;
// test/integration/replica-quota.test.ts has the capped replica's other checks.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { Lab } from '../../measure/lib/process/lab.ts';
import type { ServerProcess } from '../../measure/lib/process/launch.ts';
import { runLoad } from '../../measure/lib/load/load.ts';
import { probeOk } from '../../measure/lib/load/probe.ts';
import { cgroupDir, noCgroup, QUOTA, startCapped } from '../fixtures/capped-replica.ts';
import { failOnWarnings } from '../helpers.ts';
import type { ReplicaStats } from '../../servers/contracts.ts';

failOnWarnings();
const lab = new Lab();
after(() => lab.close());

/** Cores' worth of CPU `replica` used under 4 connections of /work?ms=5 for 2 s, and its stats after. */
async function coresUnderLoad(
  replica: ServerProcess & { url: string },
): Promise<{ cores: number; stats: ReplicaStats }> {
  const before = (await probeOk<ReplicaStats>(`${replica.url}/__replica/stats`)).body;
  const started = performance.now();
  await runLoad({ url: `${replica.url}/work?ms=5`, connections: 4, durationS: 2 });
  const stats = (await probeOk<ReplicaStats>(`${replica.url}/__replica/stats`)).body;
  return { cores: (stats.cpuUs - before.cpuUs) / 1000 / (performance.now() - started), stats };
}

const start = (args: string[]) => startCapped(lab, args);

test('without a quota the CPU-bound load takes far more than 0.2 core (so the checks below can fail)', async () => {
  const { cores } = await coresUnderLoad(await start([]));
  assert.ok(cores > 2.5 * QUOTA, `uncapped: ${cores.toFixed(2)} cores`);
});

for (const mode of ['cgroup', 'throttle'] as const) {
  test(
    `--cpu-quota ${QUOTA} --quota-mode ${mode}: the replica uses its quota and no more, and says how`,
    { skip: mode === 'cgroup' ? noCgroup : false },
    async () => {
      const replica = await start(['--cpu-quota', String(QUOTA), '--quota-mode', mode]);
      assert.ok(
        replica.lines.some((l) =>
          l.startsWith(
            `cpu quota: ${QUOTA} core, period 20 ms, enforced by ${mode === 'cgroup' ? 'a cgroup' : 'the in-process throttle'}`,
          ),
        ),
        replica.lines.join(' | '),
      );
      const { cores, stats } = await coresUnderLoad(replica);
      assert.ok(cores >= 0.75 * QUOTA && cores <= 1.2 * QUOTA, `${cores.toFixed(3)} cores under a ${QUOTA} quota`);
      const quota = stats.quota!;
      assert.equal(quota.mode, mode);
      assert.equal(quota.cores, QUOTA);
      assert.ok(quota.throttle!.throttled! > 0 && quota.throttle!.throttledMs! > 0, JSON.stringify(quota));
      if (mode === 'cgroup') {
        assert.ok(existsSync(cgroupDir(replica.pid)));
        await lab.stop(replica);
        assert.equal(existsSync(cgroupDir(replica.pid)), false, 'its cgroup is removed when it exits');
      }
    },
  );
}
