/**
 * Lesson 8's CPU quota, delivered by the cluster primary (../cpu/quota.ts has the mechanisms):
 * each worker joins a cgroup of its own once it listens, or, without cgroups, the in-process
 * throttle in the worker asks the primary to pause it (SIGSTOP, then SIGCONT after the pause);
 * the primary also keeps each worker's CPU reports for the autoscaler.
 */
import type { Worker } from 'node:cluster';
import {
  limitProcess,
  probeCgroup,
  QUOTA_PERIOD_MS,
  readThrottleStats,
  releaseCgroup,
  removeGroup,
  utilizationFrom,
  wallMs,
  type CgroupSupport,
  type CpuSample,
  type QuotaMode,
} from '../cpu/quota.ts';
import type { WorkerThrottle } from './messages.ts';
import { MAX_PAUSE_MS } from '../cpu/throttle.ts';

/** What the primary knows of one worker's CPU: when it began listening, its reports, its pause. */
interface WorkerCpu {
  forkedAt: number;
  readyAt?: number;
  samples: CpuSample[];
  pausedTimer?: NodeJS.Timeout;
  /** The throttle's pauses so far, and their total length, ms. */
  pauses: number;
  pausedMs: number;
}

export class QuotaDelivery {
  /** 'off' without a quota. */
  readonly mode: 'cgroup' | 'throttle' | 'off';
  /** Cores per worker (1 without a quota: utilization is then a share of one core). */
  readonly fraction: number;
  readonly cgroup: CgroupSupport;
  readonly cpu = new Map<number, WorkerCpu>();
  private readonly groups = new Map<number, string>(); // worker id -> its cgroup directory
  /** A pause has failed and the primary said so (once). */
  private pauseFailed = false;

  /**
   * `quota`: cores per worker, or undefined for none; `keepMs`: how long CPU reports are kept;
   * `periodMs`: the quota's period (a cgroup's defaults to QUOTA_PERIOD_MS; the throttle keeps
   * periods only when one is given).
   */
  constructor(
    private readonly quota: number | undefined,
    private readonly wanted: QuotaMode,
    private readonly keepMs: number,
    readonly periodMs?: number,
  ) {
    this.fraction = quota ?? 1;
    this.cgroup =
      quota !== undefined && wanted !== 'throttle'
        ? probeCgroup(`nsl-${process.pid}`)
        : { ok: false, reason: 'no quota' };
    this.mode = quota === undefined ? 'off' : this.cgroup.ok ? 'cgroup' : 'throttle';
  }

  /** The line the primary prints about the quota, or undefined without one. */
  describe(): string | undefined {
    if (this.quota === undefined) return undefined;
    const how = this.cgroup.ok
      ? `enforced by a cgroup v${this.cgroup.version} (${this.cgroup.base})`
      : `enforced by the in-process throttle${this.wanted === 'auto' ? ` (no cgroup: ${this.cgroup.reason})` : ''}`;
    const period =
      this.cgroup.ok || this.periodMs !== undefined ? `, period ${this.periodMs ?? QUOTA_PERIOD_MS} ms` : '';
    return `cpu quota: ${this.quota} core per worker${period}, ${how}`;
  }

  forked(id: number): void {
    this.cpu.set(id, { forkedAt: wallMs(), samples: [], pauses: 0, pausedMs: 0 });
  }

  /**
   * The quota applies from the moment a worker listens: starting up (loading and compiling the
   * code) at a quarter of a core would take seconds. The start-up burst that this lets through is
   * why the autoscaler leaves starting workers out of its average.
   */
  listening(worker: Worker, say: (line: string) => void): void {
    const m = this.cpu.get(worker.id);
    if (m) m.readyAt = wallMs();
    if (this.cgroup.ok && worker.process.pid !== undefined && !this.groups.has(worker.id)) {
      try {
        this.groups.set(worker.id, limitProcess(this.cgroup, worker.process.pid, this.fraction, this.periodMs));
      } catch (err) {
        say(`cpu quota: could not put worker ${worker.process.pid} in its cgroup: ${(err as Error).message}`);
      }
    }
  }

  /** A worker's CPU report: kept for the last `keepMs`. */
  report(id: number, sample: CpuSample): void {
    const m = this.cpu.get(id);
    if (!m) return;
    m.samples.push(sample);
    while (m.samples.length > 0 && sample.at - m.samples[0]!.at > this.keepMs) m.samples.shift();
  }

  /**
   * The throttle asks for a pause of `ms`: stop the worker, continue it after (unless `mayPause`
   * says no). Where a worker cannot be stopped (native Windows has no SIGSTOP), `say` is told once:
   * the throttle then holds no worker to its quota, and a student must not read its numbers as a
   * capped worker's.
   */
  pause(worker: Worker, ms: number, mayPause: boolean, say: (line: string) => void = () => {}): void {
    const m = this.cpu.get(worker.id);
    if (!m || m.pausedTimer || !mayPause) return;
    try {
      worker.process.kill('SIGSTOP');
    } catch (err) {
      if (!this.pauseFailed)
        say(
          `cpu quota: the throttle could not pause worker ${worker.process.pid} (SIGSTOP: ${(err as Error).message}); no worker is held to its quota, so this run's numbers are an uncapped cluster's`,
        );
      this.pauseFailed = true;
      return;
    }
    const pauseMs = Math.min(MAX_PAUSE_MS, Math.max(1, ms));
    m.pauses++;
    m.pausedMs += pauseMs;
    m.pausedTimer = setTimeout(() => this.resume(worker), pauseMs);
  }

  /**
   * How often the quota stopped a worker since it began listening: the cgroup's own counters
   * (cpu.stat), or the throttle's pauses (its periods counted on the wall clock, as it keeps them;
   * none in the bucket bookkeeping). Undefined without a quota.
   */
  throttleStats(id: number): WorkerThrottle | undefined {
    if (this.mode === 'off') return undefined;
    const dir = this.groups.get(id);
    if (dir !== undefined) return readThrottleStats(dir);
    const m = this.cpu.get(id);
    if (!m || this.mode !== 'throttle') return undefined;
    const periods =
      this.periodMs && m.readyAt !== undefined ? Math.floor((wallMs() - m.readyAt) / this.periodMs) : undefined;
    return { ...(periods !== undefined ? { periods } : {}), throttled: m.pauses, throttledMs: Math.round(m.pausedMs) };
  }

  /** Continues a worker the throttle paused (a no-op otherwise). */
  resume(worker: Worker | undefined): void {
    const m = worker && this.cpu.get(worker.id);
    if (!m?.pausedTimer) return;
    clearTimeout(m.pausedTimer);
    m.pausedTimer = undefined;
    try {
      worker!.process.kill('SIGCONT');
    } catch {}
  }

  /** A worker's utilization over the last `spanMs` (fraction of its quota), or undefined without enough reports. */
  utilization(id: number, spanMs: number): number | undefined {
    const m = this.cpu.get(id);
    return m ? utilizationFrom(m.samples, spanMs, this.fraction, m.readyAt) : undefined;
  }

  exited(id: number): void {
    const m = this.cpu.get(id);
    if (m?.pausedTimer) clearTimeout(m.pausedTimer);
    this.cpu.delete(id);
    const dir = this.groups.get(id);
    if (dir !== undefined) {
      this.groups.delete(id);
      removeGroup(dir);
    }
  }

  /** On the primary's exit: a paused worker cannot notice it is gone, so it is continued; every cgroup is removed. */
  cleanup(workers: readonly Worker[]): void {
    for (const w of workers) this.resume(w);
    for (const dir of this.groups.values()) removeGroup(dir);
    releaseCgroup(this.cgroup);
  }
}
