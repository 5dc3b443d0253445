// Proves that the in-process throttle says so when it cannot pause a worker (native Windows has
// no SIGSTOP: process.kill throws ERR_UNKNOWN_SIGNAL there), once, rather than silently holding
// no worker to its quota; a worker that can be paused is paused and counted. Played with a
// stand-in worker whose kill throws as Windows' does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Worker } from 'node:cluster';
import { QuotaDelivery } from '../../servers/lib/cluster/quota.ts';

/** A stand-in cluster worker: `kill` records the signal, or throws as on native Windows. */
function standIn(id: number, windows: boolean): { worker: Worker; signals: string[] } {
  const signals: string[] = [];
  const kill = (signal: string) => {
    if (windows && signal !== 'SIGKILL' && signal !== 'SIGTERM') {
      throw Object.assign(new TypeError(`Unknown signal: ${signal}`), { code: 'ERR_UNKNOWN_SIGNAL' });
    }
    signals.push(signal);
    return true;
  };
  return { worker: { id, process: { pid: 1000 + id, kill } } as unknown as Worker, signals };
}

test('a pause that cannot be delivered is said once, naming the worker and what it means', () => {
  const quota = new QuotaDelivery(0.25, 'throttle', 10_000);
  const lines: string[] = [];
  for (const id of [1, 2]) {
    quota.forked(id);
    quota.pause(standIn(id, true).worker, 50, true, (l) => lines.push(l));
  }
  assert.equal(lines.length, 1, lines.join('\n'));
  assert.match(
    lines[0]!,
    /^cpu quota: the throttle could not pause worker 1001 \(SIGSTOP: Unknown signal: SIGSTOP\); no worker is held to its quota/,
  );
  assert.equal(quota.throttleStats(1)?.throttled, 0);
});

test('where SIGSTOP exists the worker is paused, counted, and continued', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const quota = new QuotaDelivery(0.25, 'throttle', 10_000);
  const lines: string[] = [];
  const { worker, signals } = standIn(1, false);
  quota.forked(1);
  quota.pause(worker, 50, true, (l) => lines.push(l));
  t.mock.timers.tick(50);
  assert.deepEqual(signals, ['SIGSTOP', 'SIGCONT']);
  assert.deepEqual(lines, []);
  assert.equal(quota.throttleStats(1)?.throttled, 1);
});
