/**
 * Result, table and shape of the `distribution` experiment (lesson 4): for each policy, 30
 * requests through the balancer, each on a fresh connection, with the replica that answered each
 * in order; then 30 more while one replica holds a long request. Pure.
 */
import { machineCaption, makeChalk, makeTable, type MachineInfo } from '../report/format.ts';
import { line } from '../report/shape.ts';
import { spread } from '../cluster/report.ts';

export interface PolicyDistribution {
  /** The replica that answered each of the requests, in the order sent. */
  order: string[];
  /** The replica holding the long request during the second sequence. */
  busy: string;
  /** The second sequence's answers, in order. */
  withBusy: string[];
  /** False when the long request ended before the second sequence did (the replica was not busy throughout). */
  heldThroughout: boolean;
}

export interface DistributionResult {
  machine: MachineInfo;
  balancer: string;
  replicas: string[];
  requests: number;
  byPolicy: Record<string, PolicyDistribution>;
}

/**
 * "Roughly even": every replica got at least a fifth of its fair share (2 of 30 over 3 replicas).
 * A broken policy (all to one replica, one replica never chosen) fails it. A fair random choice
 * fails it with probability about 0.03 % per policy (binomial, n=30, p=1/3: P(X ≤ 1) × 3). A
 * quarter (3 of 30) failed fair policies about 0.2 % per policy in theory and 1 % in a live run of
 * 300 × 30 requests: too close to the noise for a check run 20 times in class.
 */
const MIN_SHARE_OF_FAIR = 0.2;

/** Requests per replica, from an order. */
function countsOf(order: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of order) out[r] = (out[r] ?? 0) + 1;
  return out;
}

export function evenness(counts: Record<string, number>, replicas: string[], requests: number): string {
  const fair = requests / replicas.length;
  const values = replicas.map((r) => counts[r] ?? 0);
  if (values.every((v) => v === fair)) return 'exactly-even';
  return values.every((v) => v >= MIN_SHARE_OF_FAIR * fair) ? 'roughly-even' : 'uneven';
}

/**
 * `in-turn` when the order is one cycle over every replica repeated (a, b, c, a, b, c, …), else
 * `not-in-turn`. A uniform random choice is in turn over 30 requests with probability 3!·3^-30.
 */
export function orderVerdict(order: string[], replicas: string[]): string {
  const n = replicas.length;
  const cycle = order.slice(0, n);
  const inTurn = new Set(cycle).size === n && order.every((r, i) => r === cycle[i % n]);
  return inTurn ? 'in-turn' : 'not-in-turn';
}

/**
 * Whether the second sequence sent the replica with a request in flight anything: none (a policy
 * that reads load: least connections; power of two choices, since two distinct samples of three always
 * include an idle replica) or some (round robin and random do not look; random sends it none of
 * 30 with probability (2/3)^30, about 5 in a million).
 */
function busyVerdict(d: PolicyDistribution): string {
  if (!d.heldThroughout) return 'long-request-ended-too-soon';
  return d.withBusy.some((r) => r === d.busy) ? 'some-to-the-busy-one' : 'none-to-the-busy-one';
}

/** Policies whose order of picks is part of their shape. Least connections breaks ties at random in the kit's balancer and in turn in nginx, so its order is neither's finding. */
const ORDERED: Record<string, true> = { 'round-robin': true, random: true, 'power-of-two-choices': true };

export function shape(r: DistributionResult): string[] {
  const out: string[] = [];
  for (const [policy, d] of Object.entries(r.byPolicy)) {
    const counts = countsOf(d.order);
    const verdict = evenness(counts, r.replicas, d.order.length);
    // Round robin must be exact; for the others exact is luck, so it counts as roughly even (their order line tells them apart).
    const shown =
      policy === 'round-robin'
        ? verdict === 'exactly-even'
          ? spread(counts, r.replicas.length)
          : verdict
        : verdict === 'exactly-even'
          ? 'roughly-even'
          : verdict;
    out.push(line(policy, `${d.order.length}-requests`, shown));
    if (ORDERED[policy]) out.push(line(policy, 'order', orderVerdict(d.order, r.replicas)));
    out.push(line(policy, `${d.withBusy.length}-requests-with-one-replica-busy`, busyVerdict(d)));
  }
  return out;
}

export const hints: Record<string, string> = {
  'round-robin':
    'round robin hands requests to the replicas in turn, whatever their load: 30 requests over 3 replicas land 10/10/10, in the same order every cycle, a third of them on a busy replica',
  'least-connections':
    'least connections sends each request to a replica with the fewest requests in flight: with one replica holding a long request, it should send that one nothing',
  random:
    'random picks any replica, in no order and whatever its load; a replica left out suggests it was not in the upstream list',
  'power-of-two-choices':
    'power of two choices samples two distinct replicas and takes the less busy: out of three, one sample is always idle, so a busy replica gets nothing; its order is random',
};

export function render(r: DistributionResult, color: boolean, caption = machineCaption(r.machine)): string {
  const c = makeChalk(color);
  const table = makeTable(
    ['policy', ...r.replicas, 'verdict', 'first 9 answers', `with one replica busy`],
    ['left', ...r.replicas.map(() => 'right' as const), 'left', 'left', 'left'],
  );
  for (const [policy, d] of Object.entries(r.byPolicy)) {
    const counts = countsOf(d.order);
    const verdict = evenness(counts, r.replicas, d.order.length);
    const toBusy = d.withBusy.filter((x) => x === d.busy).length;
    table.push([
      policy,
      ...r.replicas.map((n) => String(counts[n] ?? 0)),
      verdict === 'uneven' ? c.red(verdict) : c.green(verdict),
      d.order.slice(0, 9).join(' '),
      `${toBusy} of ${d.withBusy.length} to ${d.busy}`,
    ]);
  }
  return [
    c.bold(
      `Lesson 4 · distribution: ${r.requests} requests per policy, each on a fresh connection, through ${r.balancer}`,
    ),
    c.dim(`then ${r.requests} more while one replica holds a long request (/slow-async) · ${caption}`),
    table.toString(),
  ].join('\n');
}
