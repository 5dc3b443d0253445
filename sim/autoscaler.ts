/**
 * The simulated autoscaler: the cluster primary's own HPA rule (core/hpa.ts decide()),
 * every sync period, on each replica's event-loop utilization read as the lab's primary reads
 * it: busy time over the last METRIC_WINDOW_SYNCS periods, none from before it was ready. No
 * Node.js APIs.
 */
import { decide, initialHpaState, METRIC_WINDOW_SYNCS, type HpaState } from '../core/hpa.ts';
import { retire, start } from './replica.ts';
import type { World } from './world.ts';
import { Ev, isFrozen } from './entities.ts';

/** One controller's state across its syncs. */
export class Autoscaler {
  private state: HpaState = initialHpaState();

  /** One sync: read the utilizations, decide, start or retire replicas, plan the next sync. */
  sync(w: World): void {
    const a = w.config.autoscale!;
    const live = w.replicas.filter((r) => r.state === 'up' || r.state === 'starting' || (isFrozen(r) && !r.down));
    const b1 = Math.floor(w.now / w.bucketMs);
    const samples = live.map((r, i) => {
      const ready = r.readyAt !== undefined && r.readyAt <= w.now - a.syncMs;
      const from = Math.max(w.now - METRIC_WINDOW_SYNCS * a.syncMs, r.readyAt ?? w.now);
      const b0 = Math.ceil(from / w.bucketMs);
      let busy = 0;
      for (let b = b0; b < b1; b++) busy += r.busy[b] ?? 0;
      const span = (b1 - b0) * w.bucketMs;
      return { pid: i, readyAt: r.readyAt, utilization: ready && span > 0 ? Math.min(1, busy / span) : undefined };
    });
    const d = decide(a.hpa, this.state, w.now, samples);
    this.state = d.state;
    w.metrics.decisions.push({
      atMs: w.now,
      current: live.length,
      desired: d.desired,
      reason: d.reason,
      ...(d.averageUtilization !== undefined ? { averageUtilization: d.averageUtilization } : {}),
    });
    for (let n = live.length; n < d.desired; n++) start(w, a.startupMs);
    for (let n = live.length; n > d.desired; n--) retire(w);
    if (w.now + a.syncMs <= w.end) w.at(w.now + a.syncMs, Ev.Sync);
  }
}
