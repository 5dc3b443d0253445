/**
 * A CPU quota per cluster worker (lesson 8), like a container given 0.25 of a core, so that a
 * 2-core laptop can hold eight workers' worth of scaling.
 *
 * Two ways to enforce it, chosen by `--quota-mode`:
 *   cgroup    the kernel's CFS bandwidth control: a cgroup per worker whose quota is
 *             `quota × period` µs of CPU per `period` (QUOTA_PERIOD_MS). cgroup v2 writes
 *             `cpu.max`, v1 `cpu.cfs_quota_us` / `cpu.cfs_period_us` (kernel docs,
 *             Documentation/scheduler/sched-bwc.rst). Made at the top of /sys/fs/cgroup, which
 *             needs root. Every thread of the worker is covered.
 *   throttle  in-process accounting (throttle.ts): the worker reads its own CPU time and
 *             asks the primary to stop it (SIGSTOP, then SIGCONT) while it is in debt. Like CFS,
 *             every thread stops, and the long-run share is the quota.
 *   auto      cgroup when it can be set up, else throttle (the primary prints which, and why).
 * Without a quota (`--cpu-quota none`) there is nothing to enforce, and utilization is measured
 * against one core.
 *
 * Either way a worker reports `process.cpuUsage()` to the primary (see CpuSample), which computes
 * its utilization as CPU time / wall time / quota.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { KitError } from '../../../lib/errors.ts';

export type QuotaMode = 'auto' | 'cgroup' | 'throttle';
const QUOTA_MODES: readonly QuotaMode[] = ['auto', 'cgroup', 'throttle'];

/**
 * The cgroup quota's period, ms: a worker may use quota × this much CPU in every period. CFS
 * defaults to 100 ms (sched-bwc.rst: cpu.cfs_period_us 100000), which Kubernetes keeps; a throttled
 * request may then wait up to 75 ms at a 0.25 quota even when the worker is half idle on average,
 * and at 10 users that wait alone set the p95 in about half of the runs measured here. 20 ms keeps
 * the wait (up to 15 ms) small next to the queueing the lesson is about. `--quota-period-ms` sets
 * another (lesson 8's shared-compute experiment uses 100); the throttle then keeps periods too.
 */
export const QUOTA_PERIOD_MS = 20;
/** The quotas the kit accepts, cores: below 0.05 a period's share is under the 1 ms CFS allows at 20 ms. */
const QUOTA_CORES_RANGE = [0.05, 4] as const;

/** A lone server's --cpu-quota: undefined when not given; KIT_ERR_USAGE outside QUOTA_CORES_RANGE. */
export function quotaCores(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const cores = Number(text);
  const [min, max] = QUOTA_CORES_RANGE;
  if (!(cores >= min && cores <= max))
    throw new KitError('KIT_ERR_USAGE', `--cpu-quota must be a number of cores from ${min} to ${max}; got '${text}'`);
  return cores;
}

/** --quota-mode: 'auto' when not given; KIT_ERR_USAGE for anything but auto, cgroup or throttle. */
export function quotaMode(text: string | undefined): QuotaMode {
  const mode = text ?? 'auto';
  if (!QUOTA_MODES.includes(mode as QuotaMode))
    throw new KitError('KIT_ERR_USAGE', `--quota-mode must be auto, cgroup or throttle; got '${mode}'`);
  return mode as QuotaMode;
}

/** The periods CFS accepts, ms (sched-bwc.rst: 1 ms to 1 s). */
export const QUOTA_PERIOD_RANGE_MS = [1, 1000] as const;
/** How often a worker reports its CPU time to the primary, ms (a utilization needs two reports). */
export const CPU_SAMPLE_MS = 250;
/** A worker's CPU report: total CPU µs so far (user + system, all threads) at a wall time in ms. */
export interface CpuSample {
  type: 'cpu';
  cpuUs: number;
  /** performance.timeOrigin + performance.now(), ms: comparable across processes. */
  at: number;
}

/** Worker → primary: stop me (all threads) for `ms`, then continue me. */
export interface PauseRequest {
  type: 'pause';
  ms: number;
}

/** Wall clock shared by processes, ms (sub-millisecond, unlike Date.now()). */
export const wallMs = () => performance.timeOrigin + performance.now();

/**
 * Starts reporting this process's CPU time every CPU_SAMPLE_MS through `send`. Returns a stop
 * function. The timer is unref'd: it never keeps the process alive.
 */
export function reportCpu(send: (s: CpuSample) => void): () => void {
  const tick = () => {
    const u = process.cpuUsage();
    send({ type: 'cpu', cpuUs: u.user + u.system, at: wallMs() });
  };
  tick();
  const timer = setInterval(tick, CPU_SAMPLE_MS);
  timer.unref();
  return () => clearInterval(timer);
}

/** Where and how cgroups can be made on this machine, or why not. */
export type CgroupSupport = { ok: true; version: 1 | 2; base: string } | { ok: false; reason: string };

/**
 * Finds a place to create per-worker cgroups with a CPU quota: cgroup v2 at /sys/fs/cgroup (its
 * `cpu` controller enabled for children), or v1's `cpu` hierarchy at /sys/fs/cgroup/cpu. Creates
 * `<base>/nsl-<pid>` to prove it may; release() removes it. Linux only.
 */
export function probeCgroup(label: string, root = '/sys/fs/cgroup'): CgroupSupport {
  if (process.platform !== 'linux')
    return { ok: false, reason: `cgroups are Linux-only (this is ${process.platform})` };
  const v2 = existsSync(path.join(root, 'cgroup.controllers'));
  const v1 = existsSync(path.join(root, 'cpu', 'cpu.cfs_quota_us'));
  if (!v2 && !v1) return { ok: false, reason: `no cgroup cpu controller found under ${root}` };
  const version = v2 ? 2 : 1;
  const parent = v2 ? root : path.join(root, 'cpu');
  const base = path.join(parent, label);
  try {
    if (v2) {
      const controllers = readFileSync(path.join(root, 'cgroup.controllers'), 'utf8');
      if (!/\bcpu\b/.test(controllers))
        return { ok: false, reason: 'the cgroup v2 root does not offer the cpu controller' };
      if (!/\bcpu\b/.test(readFileSync(path.join(root, 'cgroup.subtree_control'), 'utf8')))
        writeFileSync(path.join(root, 'cgroup.subtree_control'), '+cpu');
    }
    sweepStale(parent);
    mkdirSync(base);
    if (v2) writeFileSync(path.join(base, 'cgroup.subtree_control'), '+cpu');
    return { ok: true, version, base };
  } catch (err) {
    try {
      rmdirSync(base);
    } catch {}
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'EACCES' || code === 'EPERM' || code === 'EROFS'
        ? `no permission to create cgroups under ${root} (run as root)`
        : (err as Error).message;
    return { ok: false, reason: `cgroup v${version}: ${why}` };
  }
}

/**
 * Removes the cgroups of earlier runs whose primary is gone (a primary killed with SIGKILL cannot
 * remove its own): `nsl-<pid>` folders under `parent` with no such process, and their `w*` groups.
 * A group that still holds a process cannot be removed and is left alone.
 */
function sweepStale(parent: string): void {
  for (const name of readdirSync(parent)) {
    const m = /^nsl-(\d+)$/.exec(name);
    if (!m || pidAlive(Number(m[1]))) continue;
    const dir = path.join(parent, name);
    try {
      for (const child of readdirSync(dir)) if (/^w\d+$/.test(child)) removeGroup(path.join(dir, child));
    } catch {}
    removeGroup(dir);
  }
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Puts `pid` in a new cgroup `<base>/w<pid>` limited to `quota` cores. Throws on failure, after
 * removing the group it made.
 */
export function limitProcess(
  support: Extract<CgroupSupport, { ok: true }>,
  pid: number,
  quota: number,
  periodMs = QUOTA_PERIOD_MS,
): string {
  const dir = path.join(support.base, `w${pid}`);
  mkdirSync(dir);
  try {
    const periodUs = Math.round(periodMs * 1000);
    const quotaUs = Math.max(1000, Math.round(quota * periodUs));
    if (support.version === 2) {
      writeFileSync(path.join(dir, 'cpu.max'), `${quotaUs} ${periodUs}`);
    } else {
      writeFileSync(path.join(dir, 'cpu.cfs_period_us'), String(periodUs));
      writeFileSync(path.join(dir, 'cpu.cfs_quota_us'), String(quotaUs));
    }
    writeFileSync(path.join(dir, 'cgroup.procs'), String(pid));
  } catch (err) {
    removeGroup(dir);
    throw err;
  }
  return dir;
}

/** How often a quota stopped a worker: periods it ran in, periods it was throttled in, time throttled. */
export interface ThrottleStats {
  periods: number;
  throttled: number;
  throttledMs: number;
}

/**
 * Parses a cgroup's `cpu.stat`: v1 counts `throttled_time` in ns, v2 `throttled_usec` in µs
 * (sched-bwc.rst, "Statistics"); undefined when the file has no throttling counters.
 */
export function parseCpuStat(text: string): ThrottleStats | undefined {
  const field = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1] ?? NaN);
  const periods = field('nr_periods');
  const throttled = field('nr_throttled');
  const ns = field('throttled_time');
  const us = field('throttled_usec');
  const throttledMs = Number.isFinite(us) ? us / 1000 : ns / 1e6;
  if (!Number.isFinite(periods) || !Number.isFinite(throttled) || !Number.isFinite(throttledMs)) return undefined;
  return { periods, throttled, throttledMs };
}

/** A worker cgroup's throttling so far, or undefined when it cannot be read. */
export function readThrottleStats(dir: string): ThrottleStats | undefined {
  try {
    return parseCpuStat(readFileSync(path.join(dir, 'cpu.stat'), 'utf8'));
  } catch {
    return undefined;
  }
}

/** Removes a worker's cgroup once its process is gone (a cgroup with a process in it cannot go). */
export function removeGroup(dir: string): void {
  try {
    rmdirSync(dir);
  } catch {}
}

/** Removes the run's base cgroup (after every worker's group is removed). */
export function releaseCgroup(support: CgroupSupport): void {
  if (support.ok) removeGroup(support.base);
}

/**
 * A worker's utilization over the last `spanMs`: CPU time / wall time / quota (1 = its whole
 * quota), from its reports (oldest first). Uses the newest report and the oldest one no more than
 * `spanMs` before it and not before `sinceMs` (when it began listening: its start-up CPU says
 * nothing about the load); undefined with fewer than two such reports or less than half a span covered.
 */
export function utilizationFrom(
  samples: readonly CpuSample[],
  spanMs: number,
  quota: number,
  sinceMs = -Infinity,
): number | undefined {
  const last = samples.at(-1);
  if (!last) return undefined;
  const first = samples.find((s) => last.at - s.at <= spanMs && s.at >= sinceMs);
  if (!first || first === last || last.at - first.at < spanMs / 2) return undefined;
  return (last.cpuUs - first.cpuUs) / 1000 / (last.at - first.at) / quota;
}
