/**
 * Lesson 8's autoscaler in the cluster primary: every sync period, the HPA rule (lib/hpa.ts) on
 * the workers' utilization (each one's CPU over the last METRIC_WINDOW_SYNCS periods, a share of
 * its quota), then forks or retires workers to match. A retired worker drains and is not replaced.
 * Each sync goes to the launcher as an `autoscale` event (messages.ts).
 */
import { wallMs } from '../cpu/quota.ts';
import type { QuotaDelivery } from './quota.ts';
import type { Supervisor } from './supervisor.ts';
import { decide, initialHpaState, METRIC_WINDOW_SYNCS, type HpaConfig, type WorkerSample } from '../../../core/hpa.ts';

/** Starts syncing every `syncMs`; the timer does not keep the primary alive. */
export function startAutoscaler(s: Supervisor, quota: QuotaDelivery, config: HpaConfig, syncMs: number): void {
  let hpaState = initialHpaState();
  s.say(
    `autoscale: min ${config.min}, max ${config.max}, target ${Math.round(config.target * 100)}% of the quota, ` +
      `tolerance ${config.tolerance}, sync every ${syncMs} ms, scale-down window ${config.windowMs / 1000} s, ` +
      `start-up ignored for ${config.initializationMs / 1000} s, scale-up at most max(${config.scaleUp.workers}, ${config.scaleUp.percent}%) per ${config.scaleUp.periodMs / 1000} s ` +
      '(Kubernetes defaults: sync 15 s, window 300 s, max(4, 100%) per 15 s)',
  );
  const timer = setInterval(() => {
    if (s.shuttingDown || s.rolling) return;
    const now = wallMs();
    const active = s.living().filter((w) => !s.retiring.has(w.id));
    const samples: (WorkerSample & { id: number })[] = active.map((w) => {
      const readyAt = quota.cpu.get(w.id)?.readyAt;
      const utilization = quota.utilization(w.id, METRIC_WINDOW_SYNCS * syncMs);
      return {
        id: w.id,
        pid: w.process.pid!,
        ...(readyAt !== undefined ? { readyAt } : {}),
        ...(utilization !== undefined ? { utilization } : {}),
      };
    });
    const d = decide(config, hpaState, now, samples);
    hpaState = d.state;
    const before = samples.length;
    if (d.desired > before) {
      for (let i = before; i < d.desired; i++) s.fork();
    } else if (d.desired < before) {
      // Retire the newest workers: they hold the fewest keep-alive connections.
      for (const w of [...active].sort((a, b) => b.id - a.id).slice(0, before - d.desired)) s.retire(w);
    }
    if (d.desired !== before) {
      const avg =
        d.averageUtilization === undefined
          ? 'no metrics'
          : `average ${Math.round(d.averageUtilization * 100)}% of quota`;
      s.say(
        `autoscale: ${before} -> ${d.desired} workers (${avg}, target ${Math.round(config.target * 100)}%): ${d.reason}`,
      );
    }
    s.tell({
      event: 'autoscale',
      at: now,
      current: before,
      desired: d.desired,
      recommendation: d.recommendation,
      averageUtilization: d.averageUtilization,
      reason: d.reason,
      workers: samples.map((w) => {
        const throttle = quota.throttleStats(w.id);
        return {
          pid: w.pid,
          ready: w.readyAt !== undefined,
          utilization: w.utilization,
          ...(throttle ? { throttle } : {}),
        };
      }),
      retiring: s
        .living()
        .filter((w) => s.retiring.has(w.id))
        .map((w) => w.process.pid!),
    });
  }, syncMs);
  timer.unref();
}
