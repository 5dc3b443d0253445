/**
 * Lesson 12's parts, each a bounded batch of requests over the path (path.ts) from this process,
 * in the balancer's place (requests.ts): a. one at a time at each round trip; b. eight at a time
 * through 0, 1 and the run's loss; c. through that loss with a timeout under the retransmission
 * timeout, without and with a retry; d. with a hedge after the lossless p95; e. an export through
 * a narrow link. measure/network.ts runs them in that order.
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { KitError } from '../../../lib/errors.ts';
import type { Progress } from '../harness/progress.ts';
import type { Lab } from '../process/lab.ts';
import { monotonicUs } from '../load/windows.ts';
import { readLoops } from '../profile/loops.ts';
import type { NetworkPath } from './path.ts';
import { percentile, sendRequests, type Connections, type RequestPlan, type RequestTally } from './requests.ts';
import {
  RTO_MIN_MS,
  SYN_RTO_MS,
  type BandwidthRow,
  type LossRow,
  type NetworkResult,
  type RttRow,
  type TimeoutRow,
} from '../../../results/network/report.ts';

/** What the parts need of the run: its settings (network.ts's Options). */
export interface PartSettings {
  rtts: number[];
  jitterMs: number;
  lossPercent: number;
  bytesPerS: number;
  /** Requests per row of part a, and of parts b to d (the 1 % row and part c send twice as many). */
  rttRequests: number;
  lossRequests: number;
  /** The honouring export's size; the ignoring one is four times it (exportThrough says why). */
  exportMb: number;
}

/** Parts b to d send this many requests at once, each loop at most one per GAP_MS (RequestPlan.gapMs). */
const CONCURRENCY = 8;
const GAP_MS = 10;
/** Part c's timeout: under the least retransmission timeout, so that a lost packet outlasts it. */
const TIMEOUT_MS = 100;

const isFast = (body: string) => {
  try {
    const j = JSON.parse(body) as { replica?: string; ok?: boolean };
    return j.replica === 'app1' && j.ok === true;
  } catch {
    return false;
  }
};

/** The parts over one path; `wrong` counts the answers that were not the replica's. */
export class NetworkParts {
  wrong = 0;

  constructor(
    private readonly path: NetworkPath,
    private readonly s: PartSettings,
    private readonly progress: Progress,
  ) {}

  private async send(plan: Omit<RequestPlan, 'origin' | 'path'>, ready?: () => Promise<void>): Promise<RequestTally> {
    const t = await sendRequests({ origin: this.path.replicaOrigin, path: '/fast', ...plan }, isFast, ready);
    this.wrong += t.wrong;
    return t;
  }

  /** Sends a batch with `percent` loss switched on once its connections are open, and off after. */
  private async lossy(percent: number, plan: Omit<RequestPlan, 'origin' | 'path'>): Promise<RequestTally> {
    try {
      return await this.send(plan, () => this.path.setLoss(percent));
    } finally {
      await this.path.setLoss(0);
    }
  }

  /** a. One request at a time, so that each pays the round trip alone. */
  async rtt(): Promise<RttRow[]> {
    const rows: RttRow[] = [];
    for (const ms of this.s.rtts) {
      await this.path.setToxics(ms, undefined, Math.min(this.s.jitterMs, ms));
      for (const connections of ['keep-alive', 'per-request'] as Connections[]) {
        const requests = this.s.rttRequests;
        this.progress.step(
          `a. ${requests} requests one at a time, ${ms} ms round trip, ${connections.replace('-', ' ')}`,
        );
        const t = await this.send({ requests, concurrency: 1, connections });
        rows.push({
          rttMs: ms,
          connections,
          requests,
          p50Ms: percentile(t.latenciesMs, 50),
          p99Ms: percentile(t.latenciesMs, 99),
        });
      }
    }
    await this.path.setToxics(0);
    return rows;
  }

  /** b. Eight at a time through 0, 1 and the run's loss, and over keep-alive through none and the run's. */
  async loss(): Promise<LossRow[]> {
    const rows: LossRow[] = [];
    const levels = [...new Set([0, 1, this.s.lossPercent])];
    for (const [percent, connections] of [
      ...levels.map((p) => [p, 'per-request'] as const),
      [0, 'keep-alive'] as const,
      [this.s.lossPercent, 'keep-alive'] as const,
    ]) {
      // At 1 % about 2 % of requests lose a packet: twice the requests, so that enough of them do.
      const requests = percent === 1 ? 2 * this.s.lossRequests : this.s.lossRequests;
      this.progress.step(
        `b. ${requests} requests, ${CONCURRENCY} at a time, ${percent} % loss, ${connections.replace('-', ' ')}`,
      );
      const t = await this.lossy(percent, { requests, concurrency: CONCURRENCY, gapMs: GAP_MS, connections });
      rows.push({
        lossPercent: percent,
        connections,
        concurrency: CONCURRENCY,
        requests,
        p50Ms: percentile(t.latenciesMs, 50),
        p99Ms: percentile(t.latenciesMs, 99),
        over200Ms: t.latenciesMs.filter((x) => x >= RTO_MIN_MS).length,
        over1s: t.latenciesMs.filter((x) => x >= SYN_RTO_MS).length,
        errors: t.errors,
      });
    }
    return rows;
  }

  /** c. A timeout under the retransmission timeout, with no retry and with one. */
  async timeouts(): Promise<TimeoutRow[]> {
    const rows: TimeoutRow[] = [];
    const percent = this.s.lossPercent;
    // Twice the requests: the errors left after a retry are a few, and need enough to compare.
    const requests = 2 * this.s.lossRequests;
    for (const retries of [0, 1] as const) {
      this.progress.step(
        `c. keep-alive, ${percent} % loss, giving up after ${TIMEOUT_MS} ms, ${retries ? 'one retry' : 'no retry'}`,
      );
      const plan = { requests, concurrency: CONCURRENCY, gapMs: GAP_MS, timeoutMs: TIMEOUT_MS, retries };
      const t = await this.lossy(percent, { ...plan, connections: 'keep-alive' });
      rows.push({
        lossPercent: percent,
        timeoutMs: TIMEOUT_MS,
        retries,
        requests,
        errors: t.errors,
        attempts: t.attempts,
        p99Ms: percentile(t.latenciesMs, 99),
      });
    }
    return rows;
  }

  /** d. A hedge after the p95 of the same requests with no loss. */
  async hedge(): Promise<NonNullable<NetworkResult['hedge']>> {
    const percent = this.s.lossPercent;
    const plan = {
      requests: this.s.lossRequests,
      concurrency: CONCURRENCY,
      gapMs: GAP_MS,
      connections: 'keep-alive' as const,
    };
    const lossless = await this.send(plan);
    // Node's timers count whole milliseconds and fire up to one late: a delay under 2 ms hedged
    // a third of the requests (a 1.2 ms p95), so the p95 is rounded up to a whole ms, at least 2.
    const afterMs = Math.max(2, Math.ceil(percentile(lossless.latenciesMs, 95)));
    this.progress.step(`d. keep-alive, ${percent} % loss, a hedge after ${afterMs} ms (the p95 with no loss)`);
    const t = await this.lossy(percent, { ...plan, hedgeAfterMs: afterMs });
    return {
      lossPercent: percent,
      afterMs,
      requests: plan.requests,
      hedges: t.hedges,
      attempts: t.attempts,
      p50Ms: percentile(t.latenciesMs, 50),
      p99Ms: percentile(t.latenciesMs, 99),
      errors: t.errors,
    };
  }

  /** e. One export through a narrow link, honouring backpressure, then ignoring it. */
  async bandwidth(lab: Lab): Promise<BandwidthRow[]> {
    const rows: BandwidthRow[] = [];
    await this.path.setToxics(0, this.s.bytesPerS);
    await this.path.setBandwidth(this.s.bytesPerS);
    try {
      for (const backpressure of [true, false]) {
        const mb = backpressure ? this.s.exportMb : 4 * this.s.exportMb;
        this.progress.step(
          `e. a ${mb} MiB export through ${Math.round((this.s.bytesPerS * 8) / 1e6)} Mbit/s (${this.path.limitedBy}), ${backpressure ? 'honouring' : 'ignoring'} backpressure`,
        );
        rows.push(await this.exportThrough(lab, mb, backpressure));
      }
    } finally {
      await this.path.setBandwidth(undefined);
      await this.path.setToxics(0);
    }
    return rows;
  }

  /**
   * GET /catalog/export (`mb` MiB) through the export server's link: its time, the server's loop,
   * and what it held. Ignoring backpressure shows only once the kernel's socket buffers are full
   * (about 4 MiB of send buffer here), so the caller makes that export four times the size.
   */
  private async exportThrough(lab: Lab, mb: number, backpressure: boolean): Promise<BandwidthRow> {
    const sid = `net${backpressure ? 'b' : 'i'}`;
    const origin = this.path.exportOrigin;
    const fromUs = monotonicUs();
    const began = performance.now();
    const bytes = await get(
      `${origin}/catalog/export?mb=${mb}&sid=${sid}${backpressure ? '' : '&ignore-backpressure=1'}`,
    );
    const ms = performance.now() - began;
    const toUs = monotonicUs();
    if (bytes.length !== mb * 1024 * 1024)
      throw new KitError('KIT_ERR_REQUEST', `the export sent ${bytes.length} bytes, not ${mb} MiB`);
    const record = JSON.parse((await get(`${origin}/stages/${sid}`)).toString()) as {
      extra?: { queuedMaxBytes?: number };
    };
    const loop = await loopOver(lab, this.path.exporter.pid, fromUs, toUs);
    return {
      backpressure,
      bytes: bytes.length,
      bytesPerS: this.s.bytesPerS,
      limitedBy: this.path.limitedBy,
      ms,
      loopUtilization: loop?.utilization ?? 0,
      queuedMaxBytes: record.extra?.queuedMaxBytes ?? 0,
    };
  }
}

/** The body of a GET on a connection of its own. */
function get(url: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => resolve(Buffer.concat(chunks)));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

/**
 * The export server's loop over [fromUs, toUs] (profile/loops.ts): its report writes a line every
 * 250 ms, so this waits (polling, at most 2 s) for the first line after `toUs`, which covers the end.
 */
async function loopOver(lab: Lab, pid: number, fromUs: number, toUs: number) {
  const dir = lab.loops?.dir;
  if (!dir) return undefined;
  const later = () => readLoops(dir, [{ fromUs: toUs, toUs: Infinity }]).some((l) => l.pid === pid);
  for (let i = 0; i < 40 && !later(); i++) await new Promise((r) => setTimeout(r, 50));
  return readLoops(dir, [{ fromUs, toUs: toUs + 250_000 }]).find((l) => l.pid === pid);
}
