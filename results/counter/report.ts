/**
 * Result, table and shape of the `counter` experiment (lesson 7): loans counted by a 3-worker
 * cluster while one worker is SIGKILLed, with the counter in memory, SQLite or Redis. Pure.
 */
import { machineCaption, makeChalk, makeTable, textThenNumbers, type MachineInfo } from '../report/format.ts';
import { CANNOT_SHOW, line } from '../report/shape.ts';

export interface CounterRun {
  /** A cluster's workers (one replaced after the kill), or replicas behind the balancer (one killed for good). */
  topology: 'cluster' | 'replicas';
  store: string;
  /** Loans the clients got 200 for. */
  answered: number;
  /** Loans that got an error instead of an answer (cut by the kill), as the load generator counted them. */
  cut: number;
  /** What each process said the total was afterwards (GET /loans), by pid or replica name. */
  views: Record<string, number>;
  /** The total afterwards: the store's value (shared), or the sum of the processes' views (memory). */
  total: number;
  /** The pid or replica name killed. */
  killed: string;
}

export interface CounterResult {
  machine: MachineInfo;
  balancer: string;
  workers: number;
  load: { connections: number; loans: number };
  runs: CounterRun[];
  /** Why a store was not run (e.g. no redis-server), by store. */
  notRun: Record<string, string>;
}

/**
 * The total against the loans answered 200: 'lost' when answered loans are missing from it;
 * 'none-lost' when it holds every one, plus at most one loan per connection: the loans that were in
 * flight at the killed process, counted and never answered (a load connection has one request in
 * flight at a time). autocannon's error count cannot bound this: a request on a connection the
 * kernel closes cleanly (FIN) is neither answered nor counted as an error.
 */
export function countVerdict(r: CounterRun, connections: number): 'none-lost' | 'lost' | 'over-counted' {
  if (r.total < r.answered) return 'lost';
  return r.total - r.answered <= connections ? 'none-lost' : 'over-counted';
}

export function shape(r: CounterResult): string[] {
  const out: string[] = [];
  for (const topology of ['cluster', 'replicas'] as const) {
    for (const store of ['memory', 'sqlite', 'redis']) {
      const key = `${topology}-${store}`;
      const run = r.runs.find((x) => x.store === store && x.topology === topology);
      if (!run) {
        out.push(line(key, 'each-process-sees', CANNOT_SHOW), line(key, 'total-vs-200s', CANNOT_SHOW));
        continue;
      }
      // Not "do they agree": round robin gives two memory counters equal shares, which agree by chance.
      const views = Object.values(run.views);
      out.push(
        line(
          key,
          'each-process-sees',
          views.length > 0 && views.every((v) => v >= run.answered) ? 'all-loans' : 'only-its-own',
        ),
      );
      out.push(line(key, 'total-vs-200s', countVerdict(run, r.load.connections)));
    }
  }
  return out;
}

const MEMORY_HINT =
  "each process counts in its own memory: each sees only its own loans, and the killed one's count dies with it";
const SHARED_HINT =
  'every process increments one shared value: each sees every loan, and no answered loan may be missing';
export const hints: Record<string, string> = {
  'cluster-memory': MEMORY_HINT,
  'replicas-memory': MEMORY_HINT,
  'cluster-sqlite': SHARED_HINT,
  'replicas-sqlite': SHARED_HINT,
  'cluster-redis': SHARED_HINT,
  'replicas-redis': SHARED_HINT,
};

export function notShown(r: CounterResult): string[] {
  return Object.values(r.notRun);
}

export function render(r: CounterResult, color: boolean, caption = machineCaption(r.machine)): string {
  const c = makeChalk(color);
  const head = [
    'processes',
    'store',
    'loans answered 200',
    'cut by the kill',
    'total afterwards',
    'what each process says',
    'verdict',
  ];
  const table = makeTable(head, [...textThenNumbers(2, 5), 'left', 'left']);
  for (const run of r.runs) {
    const v = countVerdict(run, r.load.connections);
    table.push([
      run.topology === 'cluster' ? `${r.workers} cluster workers` : `${r.workers} replicas, ${r.balancer}`,
      run.store,
      String(run.answered),
      String(run.cut),
      String(run.total),
      Object.entries(run.views)
        .map(([pid, n]) => `${pid}: ${n}`)
        .join(', '),
      v === 'none-lost'
        ? c.green(run.total === run.answered ? 'exact' : `none lost (+${run.total - run.answered} counted, then cut)`)
        : c.red(`${v} (${run.total - run.answered})`),
    ]);
  }
  return [
    c.bold(
      `Lesson 7 · counter: loans counted by ${r.workers} cluster workers, then ${r.workers} replicas, while one process is SIGKILLed`,
    ),
    c.dim(
      `${r.load.loans} POST /loan over ${r.load.connections} connections; a process killed halfway (the cluster replaces its worker; the replica stays dead) · ${caption}`,
    ),
    table.toString(),
    "memory: the total is the sum of what the surviving processes say; the killed one's count is gone, and a replacement worker starts at 0.",
  ].join('\n');
}
