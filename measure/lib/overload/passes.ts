/**
 * Lesson 11's passes (measure/overload.ts): users at one multiple of the service's capacity, or a
 * spike between two stretches below it, each begun and ended by emptying the service's queue
 * (POST /__overload/reset), and each following the service's capacity as the machine's speed drifts.
 */
import { KitError } from '../../../lib/errors.ts';
import type { QueueStats } from '../../../servers/lib/cpu/work-queue.ts';
import type { OverloadPass, SpikeClients, SpikePlan, SpikeRun } from '../../../results/overload/report.ts';
import { spikeRunOf } from '../../../results/overload/spike.ts';
import { probe } from '../load/probe.ts';
import type { ServerProcess } from '../process/launch.ts';
import { runUsers, type UsersOptions, type UsersResult } from './users.ts';
import type { Phase } from './schedule.ts';

/** One pass's figures from the service's counts: the queue in the schedule's first and last quarters. */
function queueQuarters(s: QueueStats, durationS: number): { first: number; last: number } {
  const q = (durationS * 1000) / 4;
  const inRange = (from: number, to: number) =>
    Math.max(0, ...s.queueSamples.filter(([t]) => t >= from && t <= to).map(([, n]) => n));
  return { first: inRange(0, q), last: inRange(3 * q, 4 * q) };
}

/** Users due in the schedule's second half and answered 200, per second of that half. */
function goodputLateHalf(u: UsersResult): number {
  // From the first whole bucket of the second half, per second of what the buckets cover.
  const from = Math.ceil((u.durationS * 1000) / 2 / u.bucketMs);
  const good = u.buckets.slice(from).reduce((n, b) => n + b.good, 0);
  return good / (u.durationS - (from * u.bucketMs) / 1000);
}

/** Empties the service's queue and starts its counts again; returns what it had counted. */
async function reset(s: ServerProcess): Promise<QueueStats & { loopDelayMs: { p99: number } }> {
  const r = await probe(`${s.url}/__overload/reset`, { method: 'POST' });
  if (r.status !== 200) throw new KitError('KIT_ERR_REQUEST', `POST /__overload/reset answered ${r.status}`);
  return r.body as QueueStats & { loopDelayMs: { p99: number } };
}

/** How often a pass reads the service's time per request, to report the capacity it ran at, ms. */
const TRACK_MS = 200;

/**
 * The service's capacity as a pass goes: 1000 / the worker's mean time per request over its last
 * 20 (its stats' serviceMs, read every TRACK_MS), req/s. The machine's speed drifts (a hash took
 * 8.4 to 17 ms here within minutes: other virtual machines on the same host), and rates fixed from
 * one closed-loop step were 30 % off by the time a pass ran, or off by as much within the step
 * itself. So each pass sets its rate from the worker's own time per request when it starts (`start`),
 * and keeps it: a rate that followed the readings during the pass fell as the line grew (a loaded
 * worker is a little slower), a feedback that made an open loop partly closed, and at 2× it once
 * sent its first quarter's users far faster than its last's. The readings during the pass give
 * the capacity it ran at (`stop`), which the lines compare goodput with. The worker's time per
 * request includes handing each hash back to the event loop; it was busy 95 to 99 % of every pass
 * past capacity, so its time per request is its capacity's inverse.
 */
class CapacityTracker {
  private readonly seen: number[] = [];
  /** The capacity the pass's rate is set from, req/s. */
  readonly start: number;
  private readonly timer: NodeJS.Timeout;
  private reading = false;

  constructor(
    private readonly s: ServerProcess,
    startMs: number,
  ) {
    this.start = 1000 / startMs;
    this.seen.push(this.start);
    this.timer = setInterval(() => void this.read(), TRACK_MS);
  }

  private async read(): Promise<void> {
    if (this.reading) return;
    this.reading = true;
    try {
      const r = await probe(`${this.s.url}/__overload/stats`, { timeoutMs: 1000 });
      const ms = (r.body as { serviceMs?: number }).serviceMs;
      if (typeof ms === 'number' && ms > 0) this.seen.push(1000 / ms);
    } catch {
      // A missed reading is left out; the pass itself reports a service that stopped answering.
    } finally {
      this.reading = false;
    }
  }

  current = (): number => this.start;

  /** Stops reading. */
  stop(): void {
    clearInterval(this.timer);
  }

  /** The mean of the readings so far, req/s. */
  mean(): number {
    return this.seen.reduce((a, b) => a + b, 0) / this.seen.length;
  }
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/** Hashes asked for one after another on the emptied line before a pass: the worker's time alone. */
const ALONE_PROBES = 3;
/**
 * The most a loaded worker's time per request exceeds its time alone. Past capacity the two cores
 * are shared by the worker, the event loop and the generator: the worker served 116 to 150 req/s
 * during spikes against 150 alone, 1.3× at most. A slower reading is the event loop's, not the
 * worker's: the last 20 of a pass past capacity waited for a loop busy with hundreds of users
 * giving up (11.1 ms, against 7.2 ms in the pass that followed).
 */
const MAX_SLOWDOWN = 1.3;

/**
 * The worker's time per request to set a pass's rate from, ms: its mean over its last 20 under the
 * load before (the loaded speed a pass meets; a rate from its speed alone overloaded the spike's
 * "half the capacity" to two thirds of it), at most MAX_SLOWDOWN times its time alone, read from
 * ALONE_PROBES hashes. The probes are asked for before the pass's reset, so its counts leave them out.
 */
async function workerSpeed(s: ServerProcess): Promise<number> {
  const recent = async () => (await probe(`${s.url}/__overload/stats`)).body as { recentMs: number[] };
  const loaded = (await recent()).recentMs;
  for (let i = 0; i < ALONE_PROBES; i++) {
    const r = await probe(`${s.url}/hash?id=${i}`);
    if (r.status !== 200) throw new KitError('KIT_ERR_REQUEST', `GET /hash answered ${r.status} before a pass`);
  }
  return rateServiceMs(loaded, mean((await recent()).recentMs.slice(-ALONE_PROBES)));
}

/** The time per request a pass's rate is set from: the loaded mean, between alone and MAX_SLOWDOWN × alone, ms. */
export function rateServiceMs(loadedMs: number[], aloneMs: number): number {
  return loadedMs.length ? Math.min(Math.max(mean(loadedMs), aloneMs), MAX_SLOWDOWN * aloneMs) : aloneMs;
}

let nextId = 0;
const hashPath = () => `/hash?id=${nextId++ % 1_000_000}`;

/**
 * Empties the service's line, then runs users at a rate set from the worker's time per request
 * now; returns what they saw and the capacity the pass ran at (CapacityTracker).
 */
async function tracked(
  s: ServerProcess,
  o: Omit<UsersOptions, 'origin' | 'path' | 'capacity'>,
): Promise<{ u: UsersResult; capacity: number }> {
  const speedMs = await workerSpeed(s);
  await reset(s);
  const tracker = new CapacityTracker(s, speedMs);
  const u = await runUsers({ ...o, origin: s.url, path: hashPath, capacity: tracker.current }).finally(() =>
    tracker.stop(),
  );
  return { u, capacity: tracker.mean() };
}

/** A pass at one multiple: users for `durationS`, then the service's counts. */
export async function pass(
  s: ServerProcess,
  kind: OverloadPass['kind'],
  multiple: number,
  durationS: number,
  timeoutMs: number,
): Promise<OverloadPass> {
  const { u, capacity } = await tracked(s, {
    phases: [{ multiple, durationS }],
    timeoutMs,
    retries: 0,
  });
  const rate = u.users / durationS;
  const st = await reset(s);
  const quarters = queueQuarters(st, durationS);
  const accepted = u.good + u.timedOut + u.otherErrors;
  return {
    kind,
    multiple,
    rate,
    capacity,
    durationS,
    users: u.users,
    good: u.good,
    shed: u.shed,
    shedWithRetryAfter: u.shedWithRetryAfter,
    timedOut: u.timedOut,
    otherErrors: u.otherErrors,
    goodputLateHalf: goodputLateHalf(u),
    p99Ms: u.latency.p99,
    acceptedP99Ms: u.timedOut > 0.01 * accepted ? null : u.latency.p99,
    quarterP99Ms: u.quarterP99Ms,
    queueFirstQuarter: quarters.first,
    queueLastQuarter: quarters.last,
    finished: st.finished,
    wasted: st.wasted,
    busyShare: st.busyShare,
    loopDelayP99Ms: st.loopDelayMs.p99,
    latenessP99Ms: u.lateness.p99,
  };
}

/** A spike run with one kind of users. */
export async function spikeRun(
  s: ServerProcess,
  clients: SpikeClients,
  plan: SpikePlan,
  o: { timeoutMs: number; retries: number },
): Promise<SpikeRun> {
  const phases: Phase[] = [
    { multiple: plan.baseMultiple, durationS: plan.beforeS },
    { multiple: plan.spikeMultiple, durationS: plan.spikeS },
    { multiple: plan.baseMultiple, durationS: plan.afterS },
  ];
  const retries = clients === 'no-retries' ? 0 : o.retries;
  const { u, capacity } = await tracked(s, {
    phases,
    timeoutMs: o.timeoutMs,
    retries,
    breaker: clients === 'breaker',
    bucketMs: plan.bucketMs,
  });
  const st = await reset(s);
  return spikeRunOf({ clients, retries, capacity }, u, plan, st, u.lateness.p99);
}
