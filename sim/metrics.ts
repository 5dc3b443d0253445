/**
 * What a simulation counts and reports: the clients' answers in the measured window (counts, an
 * HDR histogram of latency, the slow ones, a per-second timeline), the replicas taking new
 * requests per bucket, the autoscaler's decisions; and the SimResult built from them and the
 * replicas' own series. Nothing is kept per request. No Node.js APIs.
 */
import { createLatencyHistogram, recordMs, summarize, type LatencyHistogram } from '../results/report/latency.ts';
import type { SimConfig, SimResult } from './types.ts';
import type { Replica, Request } from './entities.ts';

export class Metrics {
  sent = 0;
  completed = 0;
  ok = 0;
  failed = 0;
  retried = 0;
  timeouts = 0;
  events = 0;
  readonly histogram: LatencyHistogram = createLatencyHistogram();
  readonly slowHistogram: LatencyHistogram = createLatencyHistogram();
  readonly seconds: { completed: number; ok2xx: number; non2xx: number; h: LatencyHistogram }[] = [];
  readonly decisions: NonNullable<SimResult['autoscale']> = [];
  /** Per bucket: the replicas taking new requests at its start. */
  readonly replicaCount: number[] = [];
  private nextCount = 0;

  constructor(
    private readonly end: number,
    private readonly bucketMs: number,
  ) {}

  /** A client's answer at `now` (in the measured window). */
  answer(now: number, req: Request, status: number, config: SimConfig): void {
    if (req.tried.length > 1) this.retried++;
    const ms = now - req.sentAt;
    this.completed++;
    if (status < 300) this.ok++;
    else this.failed++;
    recordMs(this.histogram, ms);
    if (config.slowMs !== undefined && ms >= config.slowMs) recordMs(this.slowHistogram, ms);
    if (config.timeline) {
      const s = (this.seconds[Math.floor(now / 1000)] ??= {
        completed: 0,
        ok2xx: 0,
        non2xx: 0,
        h: createLatencyHistogram(),
      });
      s.completed++;
      if (status < 300) s.ok2xx++;
      else s.non2xx++;
      recordMs(s.h, ms);
    }
  }

  /** Books the replicas taking new requests for every bucket that began by `now` (`upTo`: through the end). */
  countReplicas(now: number, replicas: readonly Replica[], upTo = false): void {
    // Called for every event: no closure, nothing allocated.
    if (upTo)
      while (this.nextCount * this.bucketMs < this.end) this.replicaCount[this.nextCount++] = liveCount(replicas);
    else while (this.nextCount * this.bucketMs <= now) this.replicaCount[this.nextCount++] = liveCount(replicas);
  }

  /** The run's result. */
  result(config: SimConfig, seed: number, replicas: readonly Replica[]): SimResult {
    const { end, bucketMs } = this;
    const warmupMs = config.warmupMs ?? 0;
    const buckets = Math.ceil(end / bucketMs);
    const perBucket = (series: number[]) =>
      Array.from({ length: buckets }, (_, b) => (series[b] ?? 0) / Math.min(bucketMs, end - b * bucketMs));
    const total = (series: number[]) => series.slice(0, buckets).reduce((a, b) => a + (b ?? 0), 0);
    const windowMs = end - warmupMs;
    const slow = summarize(this.slowHistogram);
    return {
      seed,
      policy: config.policy,
      simulatedMs: end,
      windowMs,
      counts: {
        sent: this.sent,
        completed: this.completed,
        ok: this.ok,
        failed: this.failed,
        retried: this.retried,
        timeouts: this.timeouts,
        events: this.events,
      },
      throughput: (this.completed * 1000) / windowMs,
      latency: summarize(this.histogram),
      slow: { count: slow.count, medianMs: slow.p50, maxMs: slow.max },
      replicas: replicas.map((r) => ({
        name: r.name,
        served: r.served,
        hogServed: r.hogServed,
        utilization: total(r.busy) / end,
        meanQueue: total(r.occupancy) / end,
        cut: r.cut,
        ...(r.inFlightAtFault !== undefined ? { inFlightAtFault: r.inFlightAtFault } : {}),
      })),
      series: {
        bucketMs,
        utilization: replicas.map((r) => perBucket(r.busy)),
        queue: replicas.map((r) => perBucket(r.occupancy)),
        replicas: this.replicaCount.slice(0, buckets),
      },
      ...(config.timeline ? { timeline: this.timeline() } : {}),
      ...(config.autoscale ? { autoscale: this.decisions } : {}),
    };
  }

  private timeline(): NonNullable<SimResult['timeline']> {
    return Array.from({ length: Math.ceil(this.end / 1000) }, (_, s) => {
      const x = this.seconds[s];
      const sum = x ? summarize(x.h) : undefined;
      return {
        second: s,
        completed: x?.completed ?? 0,
        ok2xx: x?.ok2xx ?? 0,
        non2xx: x?.non2xx ?? 0,
        errors: 0,
        p99: sum?.p99 ?? 0,
        max: sum?.max ?? 0,
      };
    });
  }
}

/** Replicas taking new requests: up (or frozen, as far as anyone can tell), in rotation, not stopping. */
function liveCount(replicas: readonly Replica[]): number {
  let n = 0;
  for (const r of replicas) if ((r.state === 'up' || r.state === 'frozen') && !r.down) n++;
  return n;
}
