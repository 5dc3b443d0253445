/** The autoscale experiment's measures (results/report/measures.ts): the numbers behind its shape lines. Pure. */
import { FAR_HIGHER, MORE_THROUGHPUT, NEAR } from './report.ts';
import { stats, type AutoscaleResult } from './result.ts';
import { measure, ratio, type Measure } from '../report/measures.ts';

/** The numbers behind the shape, named (results/report/measures.ts). */
export function measures(r: AutoscaleResult): Measure[] {
  const by = new Map(r.scenarios.map((s) => [s.name, stats(s, r.hpa.syncMs)] as const));
  const [f10, f40, a40, a80] = (['fixed-1w-10u', 'fixed-1w-40u', 'auto-40u', 'auto-80u'] as const).map((n) =>
    by.get(n),
  );
  return [
    ...measure(
      'p50-40-vs-10-users',
      'steady p50 on one worker, 40 users over 10',
      '×',
      ratio(f40?.steadyP50, f10?.steadyP50),
      { line: 'autoscale  fixed-1w-40u  steady-p50-vs-10-users', threshold: FAR_HIGHER },
    ),
    ...measure(
      'throughput-auto-vs-1-worker',
      'steady req/s of 40 users, autoscaled over one worker',
      '×',
      ratio(a40?.steadyRps, f40?.steadyRps),
      { line: 'autoscale  auto-40u  steady-throughput-vs-1-worker', threshold: MORE_THROUGHPUT },
    ),
    ...measure(
      'p95-auto-40-vs-1-worker-10',
      'steady p95 of 40 users autoscaled, over 10 users on one worker',
      '×',
      ratio(a40?.steadyP95, f10?.steadyP95),
      { line: 'autoscale  auto-40u  steady-p95-vs-10-users-on-1-worker', threshold: NEAR },
    ),
    ...measure(
      'recommendation-40-users',
      'workers the controller recommends for 40 users (steady part)',
      'workers',
      a40?.steadyRecommendation,
    ),
    ...measure(
      'recommendation-80-users',
      'workers the controller recommends for 80 users (steady part)',
      'workers',
      a80?.steadyRecommendation,
      { line: 'autoscale  auto-80u  steady-recommendation-vs-40-users' },
    ),
    ...measure(
      'back-to-min-40-users',
      's after the load until the workers of 40 users were back to min',
      's',
      r.scenarios.find((s) => s.name === 'auto-40u')?.backToMinS,
      { line: 'autoscale  auto-40u  after-load', threshold: r.hpa.windowMs / 1000 },
    ),
  ];
}
