/**
 * Result, table and shape of the `degraded` experiment (lesson 4): one of three replicas has its
 * event loop kept busy; /fast goes through the balancer under each policy. Pure functions only.
 */
import { fmtMs, fmtRate, machineCaption, makeChalk, makeTable, type MachineInfo } from '../lib/output.ts';
import { line } from '../lib/shape.ts';

export interface PolicyRun {
  policy: string;
  /** Medians over the repetitions. */
  throughput: number;
  p50: number;
  p95: number;
  p99: number;
  errors: number;
  /** replica name → /fast requests it served during the measured runs. */
  perReplica: Record<string, number>;
  /** CPU of the load generator, as a fraction of one core (the highest of the repetitions). */
  generatorCpu: number;
}

export interface DegradedResult {
  machine: MachineInfo;
  balancer: string;
  degraded: string;
  hog: { route: string; connections: number };
  load: { connections: number; durationS: number; repetitions: number };
  policies: PolicyRun[];
}

/** "An order of magnitude": p95 at least this many times least connections'. */
export const P95_FACTOR = 10;
/** "Much lower throughput": at most this share of least connections'. */
export const THROUGHPUT_SHARE = 0.5;
/** p50 "in the same range": the largest within this factor of the smallest. */
export const P50_RANGE = 10;

const byName = (r: DegradedResult, policy: string) => r.policies.find((p) => p.policy === policy);

export function shape(r: DegradedResult): string[] {
  const lc = byName(r, 'least-connections');
  const out: string[] = [];
  for (const p of r.policies) {
    if (p.policy === 'least-connections' || !lc) continue;
    const ratio = p.p95 / Math.max(lc.p95, 0.001);
    const p95 = ratio >= P95_FACTOR ? 'order-of-magnitude-higher' : ratio <= 3 ? 'same-range' : 'somewhat-higher';
    const tput = p.throughput <= THROUGHPUT_SHARE * lc.throughput ? 'much-lower' : 'similar';
    out.push(line(p.policy, 'p95-vs-least-connections', p95));
    out.push(line(p.policy, 'throughput-vs-least-connections', tput));
  }
  const p50s = r.policies.map((p) => Math.max(p.p50, 0.001));
  out.push(line('all-policies', 'p50', Math.max(...p50s) / Math.min(...p50s) < P50_RANGE ? 'same-order-of-magnitude' : 'far-apart'));
  out.push(line('all-policies', 'errors', r.policies.every((p) => p.errors === 0) ? 'none' : 'some'));
  return out;
}

export function caveats(r: DegradedResult): string[] {
  const busy = r.policies.filter((p) => p.generatorCpu > 0.8);
  return busy.length
    ? [`the load generator used most of a core under ${busy.map((p) => p.policy).join(', ')}: there, it (not the replicas) limited throughput.`]
    : [];
}

export const hints: Record<string, string> = {
  'round-robin':
    'round robin sends every third request to the busy replica whatever its load, so about a third of requests wait behind it: p95 should be tens of ms',
  random: 'random picks the busy replica a third of the time, whatever its load',
  'power-of-two-choices': 'two choices compares two distinct replicas and avoids the busy one; a high p95 suggests it sampled the same replica twice',
  'all-policies':
    'p50 should stay low for every policy (most requests go to healthy replicas), and nothing should fail; errors mean a replica or the balancer broke',
};

export function render(r: DegradedResult, color: boolean): string {
  const c = makeChalk(color);
  const names = Object.keys(r.policies[0]?.perReplica ?? {});
  const table = makeTable(['policy', 'throughput', 'p50', 'p95', 'p99', 'errors', ...names.map((n) => (n === r.degraded ? `${n} (busy)` : n))], [
    'left',
    'right',
    'right',
    'right',
    'right',
    'right',
    ...names.map(() => 'right' as const),
  ]);
  const lc = byName(r, 'least-connections');
  for (const p of r.policies) {
    const bad = lc && p.p95 >= P95_FACTOR * lc.p95;
    const total = Object.values(p.perReplica).reduce((a, b) => a + b, 0) || 1;
    table.push([
      p.policy,
      fmtRate(p.throughput),
      fmtMs(p.p50),
      bad ? c.red(fmtMs(p.p95)) : c.green(fmtMs(p.p95)),
      fmtMs(p.p99),
      String(p.errors),
      ...names.map((n) => `${Math.round((100 * (p.perReplica[n] ?? 0)) / total)} %`),
    ]);
  }
  const { load } = r;
  return [
    c.bold(`Lesson 4 · degraded replica: ${r.degraded}'s event loop kept busy; /fast through ${r.balancer}`),
    c.dim(
      `${load.connections} connections, ${load.durationS} s × ${load.repetitions} (median); hog: ${r.hog.connections} connections of ${r.hog.route} straight to ${r.degraded} · ${machineCaption(r.machine)}`,
    ),
    table.toString(),
    'The replica columns give the share of /fast requests each replica served. Look at p50: it barely moves. Look at p95.',
  ].join('\n');
}
