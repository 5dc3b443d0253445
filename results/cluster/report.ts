/**
 * Result, table and shape of the `cluster` experiment (lesson 3): how node:cluster spreads
 * connections over workers, what per-worker memory means for a counter, what happens when a
 * worker is killed, and why one keep-alive connection sticks to one worker. Pure functions only.
 */
import { fmtMs, machineCaption, makeChalk, makeTable, type MachineInfo } from '../report/format.ts';
import { line, type ReportExamples } from '../report/shape.ts';

export interface ClusterResult {
  machine: MachineInfo;
  workers: number;
  /** Loans sent one per fresh connection, and how many each worker pid answered. */
  fresh: { requests: number; byPid: Record<string, number> };
  /** After `total` loans in all: each worker's own counter (its last answer). */
  counters: { total: number; byPid: Record<string, number> };
  kill: {
    killedPid: number;
    newPid: number;
    /** From the kill order to the replacement listening, ms. */
    replacedInMs: number;
    /** Requests sent after the replacement, one per fresh connection. */
    requestsAfter: number;
    answeredAfter: number;
    /** The replacement's loan counter when it first answered (undefined: it never answered). */
    newWorkerCounter: number | undefined;
    /** Pids alive before the kill (to check the new one is really new). */
    pidsBefore: number[];
  };
  keepAlive: { requests: number; byPid: Record<string, number>; reusedSocket: number };
}

/** Counts per worker, largest first, joined by '/': `4/4/4`. Workers that got nothing count as 0. */
export function spread(byPid: Record<string, number>, workers: number): string {
  const counts = Object.values(byPid).sort((a, b) => b - a);
  while (counts.length < workers) counts.push(0);
  return counts.join('/');
}

export function countersVerdict(c: ClusterResult['counters']): string {
  const values = Object.values(c.byPid);
  const sum = values.reduce((a, b) => a + b, 0);
  if (sum !== c.total) return 'do-not-add-up';
  return Math.max(...values) < c.total ? 'no-worker-saw-the-total' : 'one-worker-saw-the-total';
}

/**
 * `4-on-every-worker` when the loans on fresh connections landed evenly on every worker, else
 * `uneven-5/4/3` (the counts, largest first). The key and the verdict do not depend on the worker
 * count, so one expected file holds for --workers 2 to 16.
 */
export function freshVerdict(r: ClusterResult): string {
  const counts = spread(r.fresh.byPid, r.workers);
  const each = r.fresh.requests / r.workers;
  return counts.split('/').every((n) => Number(n) === each) ? `${each}-on-every-worker` : `uneven-${counts}`;
}

export function shape(r: ClusterResult): string[] {
  const k = r.kill;
  const keepPids = Object.keys(r.keepAlive.byPid).length;
  return [
    line('fresh-connections', `${r.fresh.requests / r.workers}-loans-per-worker`, freshVerdict(r)),
    line('counters', 'after-every-loan', countersVerdict(r.counters)),
    line('kill-worker', 'replacement', k.pidsBefore.includes(k.newPid) ? 'same-pid' : 'new-pid'),
    line('kill-worker', 'after-replacement', k.answeredAfter === k.requestsAfter ? 'all-answered' : 'some-failed'),
    line(
      'kill-worker',
      'new-worker-counter',
      k.newWorkerCounter === undefined ? 'never-answered' : k.newWorkerCounter === 0 ? 'starts-at-zero' : 'not-zero',
    ),
    line(
      'keep-alive',
      `${r.keepAlive.requests}-requests-one-connection`,
      keepPids === 1 && r.keepAlive.reusedSocket === r.keepAlive.requests - 1
        ? 'all-on-one-worker'
        : `spread-over-${keepPids}-workers`,
    ),
  ];
}

/**
 * A healthy run of 3 workers, and a change that breaks each line (ReportExamples): a spread that
 * is not round robin, a counter that saw every loan, a replacement with an old pid, a request
 * lost after the kill, a replacement that kept a counter, keep-alive requests that moved.
 */
export const examples: ReportExamples<ClusterResult> = {
  healthy: () => ({
    machine: { cores: 2, loadavg1: 0.5, busyCoresAtStart: 0.05, node: '20.20.2', platform: 'linux-x64' },
    workers: 3,
    fresh: { requests: 12, byPid: { '101': 4, '102': 4, '103': 4 } },
    counters: { total: 16, byPid: { '101': 6, '102': 5, '103': 5 } },
    kill: {
      killedPid: 101,
      newPid: 104,
      replacedInMs: 380,
      requestsAfter: 6,
      answeredAfter: 6,
      newWorkerCounter: 0,
      pidsBefore: [101, 102, 103],
    },
    keepAlive: { requests: 30, byPid: { '102': 30 }, reusedSocket: 29 },
  }),
  broken: {
    'fresh-connections  4-loans-per-worker': (r) => void (r.fresh.byPid = { '101': 6, '102': 3, '103': 3 }),
    'counters  after-every-loan': (r) => void (r.counters.byPid['101'] = 16),
    'kill-worker  replacement': (r) => void (r.kill.newPid = 102),
    'kill-worker  after-replacement': (r) => void (r.kill.answeredAfter = 5),
    'kill-worker  new-worker-counter': (r) => void (r.kill.newWorkerCounter = 6),
    'keep-alive  30-requests-one-connection': (r) => void (r.keepAlive.byPid = { '102': 15, '103': 15 }),
  },
};

export const hints: Record<string, string> = {
  'fresh-connections':
    'node:cluster hands new connections to workers in turn (round robin); an uneven spread means the ' +
    'scheduling policy is not round robin (NODE_CLUSTER_SCHED_POLICY=none?) or requests overlapped',
  counters: 'each worker counts only the loans it served itself; if one saw them all, all requests went to one worker',
  'kill-worker': 'the primary should fork one replacement per worker death and the others keep serving meanwhile',
  'keep-alive':
    'a keep-alive connection belongs to the worker that accepted it; if requests spread, they were not on one connection',
};

export function render(r: ClusterResult, color: boolean, caption = machineCaption(r.machine)): string {
  const c = makeChalk(color);
  const pids = [
    ...new Set([
      ...Object.keys(r.fresh.byPid),
      ...Object.keys(r.counters.byPid),
      ...Object.keys(r.keepAlive.byPid),
      String(r.kill.newPid),
    ]),
  ];
  const table = makeTable(
    [
      'worker pid',
      `${r.fresh.requests} loans,\none per connection`,
      `counter after\n${r.counters.total} loans`,
      `${r.keepAlive.requests} requests on\none keep-alive connection`,
      '',
    ],
    ['right', 'right', 'right', 'right', 'left'],
  );
  for (const pid of pids) {
    const note =
      Number(pid) === r.kill.killedPid
        ? c.red('killed (SIGKILL)')
        : Number(pid) === r.kill.newPid
          ? c.green(`replacement, counter ${r.kill.newWorkerCounter ?? '?'}`)
          : '';
    table.push([
      pid,
      String(r.fresh.byPid[pid] ?? 0),
      String(r.counters.byPid[pid] ?? '-'),
      String(r.keepAlive.byPid[pid] ?? 0),
      note,
    ]);
  }
  const k = r.kill;
  return [
    c.bold(`Lesson 3 · cluster: ${r.workers} workers behind one port`),
    c.dim(caption),
    table.toString(),
    `Killed worker ${k.killedPid}; replacement ${k.newPid} was listening ${fmtMs(k.replacedInMs)} later. ` +
      `${k.answeredAfter} of ${k.requestsAfter} requests after it answered.`,
    `The total of loans is ${r.counters.total}, but each worker only knows its own count.`,
  ].join('\n');
}
