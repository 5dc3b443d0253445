/**
 * Result, table and shape of the `distribution` experiment (lesson 4): 30 requests through the
 * balancer, each on a fresh connection, for each policy; how many reached each replica. Pure.
 */
import { machineCaption, makeChalk, makeTable, type MachineInfo } from '../lib/output.ts';
import { line } from '../lib/shape.ts';
import { spread } from './cluster.ts';

export interface DistributionResult {
  machine: MachineInfo;
  balancer: string;
  replicas: string[];
  requests: number;
  /** policy → replica name → requests it answered. */
  byPolicy: Record<string, Record<string, number>>;
}

/**
 * "Roughly even": every replica got at least a fifth of its fair share (2 of 30 over 3 replicas).
 * A broken policy (all to one replica, one replica never chosen) fails it. A fair random choice
 * fails it with probability about 0.03 % per policy (binomial, n=30, p=1/3: P(X ≤ 1) × 3). A
 * quarter (3 of 30) failed fair policies about 0.2 % per policy in theory and 1 % in a live run of
 * 300 × 30 requests: too close to the noise for a check run 20 times in class.
 */
export const MIN_SHARE_OF_FAIR = 0.2;

export function evenness(counts: Record<string, number>, replicas: string[], requests: number): string {
  const fair = requests / replicas.length;
  const values = replicas.map((r) => counts[r] ?? 0);
  if (values.every((v) => v === fair)) return 'exactly-even';
  return values.every((v) => v >= MIN_SHARE_OF_FAIR * fair) ? 'roughly-even' : 'uneven';
}

export function shape(r: DistributionResult): string[] {
  return Object.entries(r.byPolicy).map(([policy, counts]) => {
    const verdict = evenness(counts, r.replicas, r.requests);
    // Round robin must be exact; for the others exact is luck, so it counts as roughly even.
    const shown = policy === 'round-robin' ? (verdict === 'exactly-even' ? spread(counts, r.replicas.length) : verdict) : verdict === 'exactly-even' ? 'roughly-even' : verdict;
    return line(policy, `${r.requests}-requests`, shown);
  });
}

export const hints: Record<string, string> = {
  'round-robin': 'round robin hands requests to the replicas in turn, so 30 requests over 3 replicas must land 10/10/10; was a replica down?',
  'least-connections': 'one request at a time leaves every replica at 0 in flight, so ties are broken at random: no replica should be left out',
  random: 'random picks should reach every replica; a replica left out suggests it was not in the upstream list',
  'power-of-two-choices': 'two random replicas, the less busy wins: with one request at a time every replica should be reached',
};

export function render(r: DistributionResult, color: boolean): string {
  const c = makeChalk(color);
  const table = makeTable(['policy', ...r.replicas, 'verdict'], ['left', ...r.replicas.map(() => 'right' as const), 'left']);
  for (const [policy, counts] of Object.entries(r.byPolicy)) {
    const verdict = evenness(counts, r.replicas, r.requests);
    table.push([policy, ...r.replicas.map((n) => String(counts[n] ?? 0)), verdict === 'uneven' ? c.red(verdict) : c.green(verdict)]);
  }
  return [
    c.bold(`Lesson 4 · distribution: ${r.requests} requests per policy, each on a fresh connection, through ${r.balancer}`),
    c.dim(machineCaption(r.machine)),
    table.toString(),
  ].join('\n');
}
