/**
 * A CPU quota a lone server holds itself to (lesson 4's capped replicas), as a container started
 * with `--cpus 0.2` is held: no primary stands over it, unlike lesson 8's cluster workers
 * (../cluster/quota.ts), so the process enforces its quota on itself.
 *
 *   cgroup    the process moves itself into a cgroup of its own with a CFS quota (quota.ts
 *             limitProcess) and moves back out when it exits, so that the group can be removed.
 *             A group left by a SIGKILL is swept by the next probe (its pid is gone).
 *   throttle  the in-process throttle (throttle.ts, period bookkeeping). A process cannot
 *             SIGCONT itself, so a pause blocks its own main thread (Atomics.wait) instead of
 *             stopping every thread: the replica's routes run on the main thread, so that is
 *             where its CPU goes. The server calls checkpoint() as each request arrives, and
 *             the CPU since the last check is booked to the period it began in: a request's work
 *             comes before its synchronous wait (a database lock or flush), and CFS does not
 *             charge a sleeping process. Booked after the periods it slept through, a replica at
 *             0.2 core making writes of 4.4 ms of CPU and a 16 ms flush served 83 requests in
 *             3 s where the cgroup served 134.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  limitProcess,
  probeCgroup,
  QUOTA_PERIOD_MS,
  readThrottleStats,
  releaseCgroup,
  removeGroup,
  type CgroupSupport,
  type QuotaMode,
  type ThrottleStats,
} from './quota.ts';
import { KitError } from '../../../lib/errors.ts';
import { startThrottle } from './throttle.ts';

export interface SelfQuota {
  mode: 'cgroup' | 'throttle';
  /** One line for the server's log: the quota, its period, how it is enforced and why. */
  describe: string;
  /** Periods, throttled periods (pauses, for the throttle) and time throttled so far. */
  stats(): Partial<ThrottleStats> | undefined;
  /** Call as each request arrives: the throttle checks its books at once (a no-op for a cgroup). */
  checkpoint(): void;
}

/** Moves this process into a cgroup of its own under `cgroup`, or returns why it could not (the probe's group is then removed). */
function joinCgroup(
  cgroup: Extract<CgroupSupport, { ok: true }>,
  quota: number,
  periodMs: number,
): { dir: string } | { reason: string } {
  try {
    return { dir: limitProcess(cgroup, process.pid, quota, periodMs) };
  } catch (err) {
    releaseCgroup(cgroup);
    return { reason: `cgroup v${cgroup.version}: ${(err as Error).message}` };
  }
}

/**
 * Holds this process to `quota` cores from now on, in periods of `periodMs`. `wanted` 'cgroup'
 * throws KIT_ERR_USAGE (with the reason) when no cgroup can be made or joined; 'auto' falls back
 * to the throttle.
 */
export function holdSelfToQuota(quota: number, wanted: QuotaMode, periodMs = QUOTA_PERIOD_MS): SelfQuota {
  const probe =
    wanted === 'throttle'
      ? ({ ok: false, reason: 'asked for the throttle' } as const)
      : probeCgroup(`nsl-${process.pid}`);
  const joined = probe.ok ? joinCgroup(probe, quota, periodMs) : { reason: probe.reason };
  if (probe.ok && 'dir' in joined) {
    const { dir } = joined;
    process.on('exit', () => {
      try {
        writeFileSync(path.join(path.dirname(probe.base), 'cgroup.procs'), String(process.pid));
      } catch {}
      removeGroup(dir);
      releaseCgroup(probe);
    });
    return {
      mode: 'cgroup',
      describe: `cpu quota: ${quota} core, period ${periodMs} ms, enforced by a cgroup v${probe.version} (${probe.base})`,
      stats: () => readThrottleStats(dir),
      checkpoint: () => {},
    };
  }
  const reason = 'reason' in joined ? joined.reason : '';
  if (wanted === 'cgroup')
    throw new KitError(
      'KIT_ERR_USAGE',
      `--quota-mode cgroup: ${reason}`,
      'use --quota-mode throttle (or auto), which needs no permission',
    );
  const asleep = new Int32Array(new SharedArrayBuffer(4));
  let pauses = 0;
  let pausedMs = 0;
  const throttle = startThrottle(
    quota,
    (ms) => {
      pauses++;
      pausedMs += ms;
      Atomics.wait(asleep, 0, 0, ms);
    },
    periodMs,
    true,
  );
  const why = wanted === 'auto' ? ` (no cgroup: ${reason})` : '';
  return {
    mode: 'throttle',
    describe: `cpu quota: ${quota} core, period ${periodMs} ms, enforced by the in-process throttle${why}`,
    stats: () => ({ throttled: pauses, throttledMs: pausedMs }),
    checkpoint: throttle.check,
  };
}
