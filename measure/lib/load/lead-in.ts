/**
 * A load's lead-in: its first seconds, run on the same connections as the rest so that every
 * process on the path is warm when the measured part begins, and then left out of the result
 * (faultedLoad's leadInS; the failover experiment's warm-up).
 */
import type { LoadResult } from './load-types.ts';

/**
 * The load's result without its first `lead` seconds: the timeline from then on (renumbered from
 * 0), the counts less the lead-in's, and the latency of the responses after it (the load's
 * settled part). Slow responses and header matches are left out by the load itself (its
 * countFromMs), and the access log's lines by their time, so the two still compare.
 */
export function withoutLeadIn(r: LoadResult, lead: number): LoadResult {
  const before = (r.timeline ?? []).filter((s) => s.second < lead);
  const sum = (k: 'completed' | 'ok2xx' | 'non2xx' | 'errors') => before.reduce((n, s) => n + s[k], 0);
  const counts = {
    ...r.counts,
    completed: r.counts.completed - sum('completed'),
    ok2xx: r.counts.ok2xx - sum('ok2xx'),
    non2xx: r.counts.non2xx - sum('non2xx'),
    errors: Math.max(0, r.counts.errors - sum('errors')),
  };
  const durationS = Math.max(0.001, r.durationS - lead);
  return {
    ...r,
    counts,
    durationS,
    throughput: Math.round((counts.completed / durationS) * 10) / 10,
    latency: r.settled?.latency ?? r.latency,
    ...(r.timeline
      ? { timeline: r.timeline.filter((s) => s.second >= lead).map((s) => ({ ...s, second: s.second - lead })) }
      : {}),
  };
}
