/**
 * Result, table and shape of the `sessions` experiment (lesson 7): members log in through the
 * balancer and read /me, before and after one replica is killed, with sessions in replica memory
 * (round robin, ip-hash, sticky cookie), in SQLite, in Redis, or in a signed token. Pure.
 */
import { fmtMs, machineCaption, makeChalk, makeTable, textThenNumbers, type MachineInfo } from '../report/format.ts';
import { CANNOT_SHOW, line } from '../report/shape.ts';

export interface PhaseCount {
  /** GET /me requests, and how many answered 401 (the session was not found). */
  requests: number;
  lost: number;
  /** Answers that were neither 200 nor 401, and requests with no answer. */
  errors: number;
}

export interface SessionRun {
  /** Shape key, e.g. memory-round-robin. */
  name: string;
  store: string;
  policy: string;
  before: PhaseCount;
  after: PhaseCount;
  /** Requests (logins and /me) each replica answered before the kill. */
  perReplica: Record<string, number>;
  victim: string;
  /** p95 of GET /me before the kill, ms. */
  p95: number;
}

export interface SessionsResult {
  machine: MachineInfo;
  balancer: string;
  members: number;
  reads: number;
  runs: SessionRun[];
  notRun: Record<string, string>;
}

/** The configurations, in table order, and what each should show. */
export const CONFIGS = [
  'memory-round-robin',
  'memory-ip-hash',
  'memory-sticky-cookie',
  'sqlite-round-robin',
  'redis-round-robin',
  'token-round-robin',
] as const;

/** none: 0; some: under half; most: half or more. */
function lostVerdict(p: PhaseCount): 'none-lost' | 'some-lost' | 'most-lost' {
  if (p.lost === 0) return 'none-lost';
  return p.lost / Math.max(p.requests, 1) >= 0.5 ? 'most-lost' : 'some-lost';
}

function spreadVerdict(perReplica: Record<string, number>): 'one-replica' | 'several-replicas' {
  return Object.values(perReplica).filter((n) => n > 0).length === 1 ? 'one-replica' : 'several-replicas';
}

export function shape(r: SessionsResult): string[] {
  const out: string[] = [];
  for (const name of CONFIGS) {
    const run = r.runs.find((x) => x.name === name);
    if (!run) {
      out.push(line(name, 'before-kill', CANNOT_SHOW), line(name, 'after-kill', CANNOT_SHOW));
      continue;
    }
    out.push(line(name, 'before-kill', lostVerdict(run.before)), line(name, 'after-kill', lostVerdict(run.after)));
    if (run.policy !== 'round-robin') out.push(line(name, 'spread', spreadVerdict(run.perReplica)));
  }
  out.push(
    line('all-configs', 'errors', r.runs.every((x) => x.before.errors + x.after.errors === 0) ? 'none' : 'some'),
  );
  return out;
}

export const hints: Record<string, string> = {
  'memory-round-robin':
    'the session lives in the memory of the replica that logged the member in; round robin sends most reads elsewhere',
  'memory-ip-hash':
    'every client on loopback has the same address, so ip-hash sends them all to one replica; when it dies, every session dies with it',
  'memory-sticky-cookie':
    "the balancer's cookie keeps each member on one replica; only the killed replica's members lose their session",
  'sqlite-round-robin': 'sessions in one SQLite file are found by every replica, before and after the kill',
  'redis-round-robin': 'sessions in Redis are found by every replica, before and after the kill',
  'token-round-robin': 'a signed token carries the session: any replica with the secret can check it',
  'all-configs': "a killed replica's GET /me should be retried by the balancer: errors mean a request was lost",
};

export function notShown(r: SessionsResult): string[] {
  return Object.values(r.notRun);
}

const pct = (p: PhaseCount) => `${Math.round((100 * p.lost) / Math.max(p.requests, 1))} %`;

export function render(r: SessionsResult, color: boolean, caption = machineCaption(r.machine)): string {
  const c = makeChalk(color);
  const replicas = [...new Set(r.runs.flatMap((x) => Object.keys(x.perReplica)))].sort();
  const head = ['store', 'policy', '401 before kill', '401 after kill', 'errors', ...replicas, 'p95 /me'];
  const table = makeTable(head, textThenNumbers(2, head.length));
  for (const run of r.runs) {
    const total = Object.values(run.perReplica).reduce((a, b) => a + b, 0) || 1;
    const paint = (p: PhaseCount) => (p.lost === 0 ? c.green(pct(p)) : c.red(pct(p)));
    table.push([
      run.store,
      run.policy,
      paint(run.before),
      paint(run.after),
      String(run.before.errors + run.after.errors),
      ...replicas.map(
        (n) => `${Math.round((100 * (run.perReplica[n] ?? 0)) / total)} %${n === run.victim ? ' †' : ''}`,
      ),
      fmtMs(run.p95),
    ]);
  }
  return [
    c.bold(
      `Lesson 7 · sessions: ${r.members} members log in and read /me ${r.reads} times, through ${r.balancer}; then one replica is killed`,
    ),
    c.dim(
      `401 = the replica that answered did not know the session · replica columns: share of requests before the kill; † = the replica killed (the busiest) · ${caption}`,
    ),
    table.toString(),
    'In memory a session is only where it was created. A sticky balancer keeps it findable until that replica dies; a shared store or a signed token does not care which replica answers.',
  ].join('\n');
}
