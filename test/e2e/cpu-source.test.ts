// Proves the CPU fallback for machines without /proc (macOS), played on Linux: under a known load
// (a busy child of the test, outside the watched "kit"), other programs' CPU read from os.cpus()
// and ps agrees with /proc's over the same 3 s window, ps names the busy program, and a run's
// monitor says which source it used. It measures over seconds, so it is in the end-to-end tier;
// the accounting itself is checked in test/unit/contention-accounting.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { busiestPrograms, ContentionMonitor, otherCpu, takeSnapshot } from '../../measure/lib/machine/contention.ts';
import { failOnWarnings, spawnOwned } from '../helpers.ts';

failOnWarnings();

const onLinux = process.platform === 'linux' ? false : 'the comparison needs /proc (Linux)';

/**
 * How far the fallback's "other programs" may be from /proc's, in cores, over WINDOW_MS. The
 * machine's part (os.cpus()) reads the same counters as /proc/stat; the kit's part comes from ps,
 * whose procps prints whole seconds, and the kit here is one sleeping process; the rest is the
 * kernel's own threads, which /proc leaves out and os.cpus() counts. Measured here under this
 * test's busy child: the two differed by -0.01 to +0.02 cores in 20 windows of 3 s (1.01-1.06
 * cores from /proc); ps's own reading of the child was 0.98-1.31, whole seconds over 3.
 */
const TOLERANCE_CORES = 0.15;
const WINDOW_MS = 3000;

test(
  "a busy child: os.cpus() and ps agree with /proc on other programs' CPU, and ps names it",
  { skip: onLinux },
  async (t) => {
    // The "kit" is a sleeping child; the busy one (this test's too) counts as another program.
    const kit = spawnOwned(t, process.execPath, ['-e', 'setInterval(() => {}, 1000); console.log("ready")'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const busy = spawnOwned(t, process.execPath, ['-e', 'console.log("ready"); for (;;) {}'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    await Promise.all([once(kit.stdout!, 'data'), once(busy.stdout!, 'data')]);
    const a = { proc: takeSnapshot(kit.pid!, 'proc')!, ps: takeSnapshot(kit.pid!, 'ps')! };
    await new Promise((r) => setTimeout(r, WINDOW_MS)); // the measured window, not a wait for readiness
    const b = { proc: takeSnapshot(kit.pid!, 'proc')!, ps: takeSnapshot(kit.pid!, 'ps')! };
    const fromProc = otherCpu(a.proc, b.proc, { reaped: false }).otherCores;
    const fromPs = otherCpu(a.ps, b.ps).otherCores;
    assert.ok(fromProc > 0.8, `/proc saw ${fromProc} cores of other programs; the busy child alone is 1`);
    assert.ok(Math.abs(fromPs - fromProc) <= TOLERANCE_CORES, `os.cpus() and ps: ${fromPs} cores; /proc: ${fromProc}`);
    assert.equal(otherCpu(a.ps, b.ps).stealCores, 0, 'no steal without /proc');
    const [top] = busiestPrograms(a.ps, b.ps);
    assert.equal(top?.name, 'node', JSON.stringify(busiestPrograms(a.ps, b.ps)));
    // procps prints whole seconds: over 3 s the busy child reads 2 to 4 s.
    assert.ok(top!.cores >= 0.6 && top!.cores <= 1.4, `ps: node ${top!.cores} cores`);
  },
);

test("a run's monitor says which source it read", { skip: onLinux }, async () => {
  const saved = process.env.NSL_CPU_SOURCE;
  process.env.NSL_CPU_SOURCE = 'ps';
  try {
    const m = new ContentionMonitor();
    m.start(200);
    await new Promise((r) => setTimeout(r, 600)); // the run being watched
    assert.equal(m.stop()?.source, 'ps');
  } finally {
    if (saved === undefined) delete process.env.NSL_CPU_SOURCE;
    else process.env.NSL_CPU_SOURCE = saved;
  }
  const m = new ContentionMonitor();
  m.start(200);
  await new Promise((r) => setTimeout(r, 600));
  assert.equal(m.stop()?.source, 'proc');
});
