// Proves the event-loop report under every experiment's table (measure/lib/profile/loops.ts): a real
// loan service loaded with scrypt on its loop reads a busy loop and a long delay, the same service
// loaded with the thread pool's scrypt reads a far less busy one; only lines inside a load count;
// a cluster's workers report under the primary's name; wrappers of programs that are not Node are
// left out, and a profiled process's utilization is not given.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Lab } from '../../measure/lib/process/lab.ts';
import { runLoad } from '../../measure/lib/load/load.ts';
import { LoopWatch, readLoops } from '../../measure/lib/profile/loops.ts';
import { failOnWarnings } from '../helpers.ts';

failOnWarnings();
const lab = new Lab();
after(() => lab.close());

/** One run of `route` on a fresh loan service under a LoopWatch: the loan process's row. */
async function loopUnder(route: string) {
  const watch = new LoopWatch();
  try {
    lab.loops = watch;
    const loan = await lab.start({ server: 'loan', args: ['--port', '0', '--cost', 'N=2^14,r=8,p=1'] });
    watch.begin();
    await runLoad({ url: `http://127.0.0.1:${loan.port}${route}`, connections: 2, durationS: 1.5 });
    watch.end();
    await lab.stop(loan);
    const rows = watch.rows();
    assert.equal(rows.length, 1, JSON.stringify(rows));
    return rows[0]!;
  } finally {
    lab.loops = undefined;
    watch.dispose();
  }
}

test('scrypt on the loop reads a busy loop and a long delay; on the thread pool, a far less busy loop', async () => {
  const blocking = await loopUnder('/member/verify-blocking');
  const pooled = await loopUnder('/member/verify-pooled');
  assert.equal(blocking.name, 'loan');
  assert.ok(blocking.coveredS >= 1, `lines cover ${blocking.coveredS} s of a 1.5 s load`);
  const [b, p] = [blocking.utilization ?? NaN, pooled.utilization ?? NaN];
  assert.ok(b > 0.8, `blocking: utilization ${b}`);
  assert.ok(p < b / 2, `${p} vs ${b}`);
  assert.ok(blocking.delayMaxMs > 5 * Math.max(pooled.delayMaxMs, 1), `${blocking.delayMaxMs} vs ${pooled.delayMaxMs}`);
});

test('a cluster reports its workers under its own name', async () => {
  const watch = new LoopWatch();
  try {
    lab.loops = watch;
    const primary = await lab.start({ server: 'cluster', args: ['--port', '0', '--workers', '2'], ipc: true });
    watch.begin();
    await runLoad({ url: `http://127.0.0.1:${primary.port}/status`, connections: 2, durationS: 1 });
    watch.end();
    await lab.stop(primary);
    const names = watch.rows().map((r) => r.name);
    assert.deepEqual(names, ['cluster', 'cluster-worker', 'cluster-worker']);
  } finally {
    lab.loops = undefined;
    watch.dispose();
  }
});

test('only lines that end inside a load count, and wrappers are left out', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'nsl-loops-test-'));
  try {
    const line = (atUs: number, name: string, activeMs: number, delayMaxMs: number, profiled = false) =>
      JSON.stringify({ atUs, name, activeMs, idleMs: 250 - activeMs, delayMaxMs, profiled }) + '\n';
    writeFileSync(path.join(dir, '11.jsonl'), line(1_000, 'replica', 250, 900) + line(2_000, 'replica', 50, 3));
    writeFileSync(path.join(dir, '12.jsonl'), line(2_000, 'redis', 1, 0));
    writeFileSync(path.join(dir, '13.jsonl'), line(2_000, 'loan', 240, 2, true));
    writeFileSync(path.join(dir, 'notes.txt'), 'not a report');
    const rows = readLoops(dir, [{ fromUs: 1_500, toUs: 2_500 }]);
    assert.deepEqual(rows, [
      // Under the CPU profiler an idle loop reads busy: no utilization is given.
      { name: 'loan', pid: 13, utilization: undefined, delayMaxMs: 2, coveredS: 0.25 },
      { name: 'replica', pid: 11, utilization: 0.2, delayMaxMs: 3, coveredS: 0.25 },
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
