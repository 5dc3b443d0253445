// Proves on real processes that "how busy other programs kept the cores during a run" counts other
// programs and not the kit: a busy process outside this one's tree shows up as about one core, the
// same busy loop inside the tree (a child) does not, and a burst shows as the peak. It measures the
// whole machine for seconds, so it runs in the end-to-end tier, alone; the accounting itself is
// checked in test/unit/contention-accounting.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { setTimeout as delay } from 'node:timers/promises';
import { ContentionMonitor, MIN_INTERVAL_MS, otherCpu, takeSnapshot } from '../../measure/lib/machine/contention.ts';
import { readStat } from '../../lib/proc.ts';
import { pidAlive, waitUntilGone } from '../../lib/terminate.ts';
import { pollUntil } from '../../lib/wait.ts';
import { machineWasBusy } from '../../results/report/format.ts';
import { MACHINE } from '../fixtures/results.ts';
import { failOnWarnings, spawnOwned } from '../helpers.ts';

failOnWarnings();
const linux = process.platform === 'linux' ? false : 'needs /proc (Linux)';

const BUSY = 'const until = Date.now() + Number(process.argv[1]); while (Date.now() < until) {}';

/**
 * Resolves once `pid` keeps a core busy: 6 or more of its 10 ms CPU ticks in one 100 ms poll (Linux
 * /proc). A readiness check, where a fixed sleep would assume how long a process takes to start.
 */
async function spinning(pid: number): Promise<void> {
  let last = readStat(pid)?.ownTicks ?? 0;
  await pollUntil(
    `process ${pid} to keep a core busy`,
    () => {
      const now = readStat(pid)?.ownTicks ?? 0;
      const busy = now - last >= 6;
      last = now;
      return busy || undefined;
    },
    10_000,
    100,
  );
}

/** A busy loop for `ms` in a process that is not ours: started by a shell that exits at once. */
async function busyOrphan(ms: number): Promise<number> {
  // Its output goes elsewhere, so that the shell's pipe closes when the shell exits, not when the orphan does.
  const sh = spawn('sh', ['-c', `"${process.execPath}" -e '${BUSY}' ${ms} >/dev/null 2>&1 & echo $!`], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let out = '';
  sh.stdout.on('data', (d) => (out += d));
  await new Promise((r) => sh.once('close', r));
  return Number(out.trim());
}

test('a busy program outside the kit counts; the same loop in a child of ours does not', { skip: linux }, async (t) => {
  const orphan = await busyOrphan(2500);
  assert.ok(readStat(orphan), 'the orphan runs');
  assert.notEqual(readStat(orphan)!.ppid, process.pid);
  await spinning(orphan);
  const a = takeSnapshot()!;
  await delay(1500);
  const b = takeSnapshot()!;
  const other = otherCpu(a, b);
  assert.ok(other.otherCores > 0.6 && other.otherCores < 1.5, `one busy core outside the kit: ${other.otherCores}`);

  assert.ok(await waitUntilGone(() => pidAlive(orphan), 10_000), 'the orphan has ended');
  const child = spawnOwned(t, process.execPath, ['-e', BUSY, '1800'], { stdio: 'ignore' });
  await spinning(child.pid!);
  const c = takeSnapshot()!;
  await delay(1200);
  const d = takeSnapshot()!;
  assert.ok(
    otherCpu(c, d).otherCores < 0.4,
    `the kit's own busy child is not another program: ${otherCpu(c, d).otherCores}`,
  );
  await new Promise((r) => child.once('exit', r));
});

test("a burst of a second or two shows as the peak, where the run's average hides it", { skip: linux }, async () => {
  const monitor = new ContentionMonitor();
  monitor.start(250);
  await delay(1000);
  await busyOrphan(1500);
  await delay(4000); // the burst is done, and it is a fifth of the run
  const seen = monitor.stop()!;
  assert.ok(seen.averageCores < 0.5, `the average hides it: ${seen.averageCores}`);
  assert.ok(seen.peakCores > 0.75, `the peak shows it: ${seen.peakCores}`);
  assert.equal(
    machineWasBusy({ ...MACHINE, busyCoresDuringRun: seen.averageCores, busiestSecondDuringRun: seen.peakCores }),
    true,
  );
});

test(
  'a run shorter than MIN_INTERVAL_MS reports nothing: its few ticks would read as cores',
  { skip: linux },
  async () => {
    const monitor = new ContentionMonitor();
    monitor.start();
    await delay(30); // a stubbed experiment's run, as the compare test's
    assert.equal(monitor.stop(), undefined);
    const longer = new ContentionMonitor();
    longer.start();
    await delay(MIN_INTERVAL_MS + 50);
    assert.ok(longer.stop() !== undefined, 'a run past the minimum is measured');
  },
);
