/**
 * Result, table and shape of the `counter` experiment (lesson 5): loans counted by a 3-worker
 * cluster while one worker is SIGKILLed, with the counter in memory, SQLite or Redis. Pure.
 */
import { machineCaption, makeChalk, makeTable, textThenNumbers, type MachineInfo } from '../lib/output.ts';
import { CANNOT_SHOW, line } from '../lib/shape.ts';

export interface CounterRun {
  store: string;
  /** Loans the clients got 200 for. */
  answered: number;
  /** Loans sent that got no answer (cut by the kill). */
  cut: number;
  /** What each worker said the total was afterwards (GET /loans), by pid. */
  views: Record<string, number>;
  /** The total afterwards: the store's value (shared), or the sum of the workers' views (memory). */
  total: number;
  killedPid: number;
}

export interface CounterResult {
  machine: MachineInfo;
  workers: number;
  load: { connections: number; loans: number };
  runs: CounterRun[];
  /** Why a store was not run (e.g. no redis-server), by store. */
  notRun: Record<string, string>;
}

/** The shared stores' verdict: the total is at least every 200, and at most that plus the cut requests (counted before the kill, never answered). */
export function countVerdict(r: CounterRun): 'none-lost' | 'lost' | 'over-counted' {
  if (r.total < r.answered) return 'lost';
  return r.total - r.answered <= r.cut ? 'none-lost' : 'over-counted';
}

export function shape(r: CounterResult): string[] {
  const out: string[] = [];
  for (const store of ['memory', 'sqlite', 'redis']) {
    const run = r.runs.find((x) => x.store === store);
    if (!run) {
      out.push(line(store, 'workers-agree', CANNOT_SHOW), line(store, 'total-vs-200s', CANNOT_SHOW));
      continue;
    }
    const views = Object.values(run.views);
    out.push(line(store, 'workers-agree', views.length > 1 && views.every((v) => v === views[0]) ? 'yes' : 'no'));
    out.push(line(store, 'total-vs-200s', countVerdict(run)));
  }
  return out;
}

export const hints: Record<string, string> = {
  memory: 'each worker counts in its own memory: they disagree, and the killed worker\'s count dies with it',
  sqlite: 'every worker increments one row in one SQLite file: they should agree, and no answered loan may be missing',
  redis: 'every worker increments one Redis key: they should agree, and no answered loan may be missing',
};

export function caveats(r: CounterResult): string[] {
  return Object.values(r.notRun);
}

export function render(r: CounterResult, color: boolean): string {
  const c = makeChalk(color);
  const head = ['store', 'loans answered 200', 'cut by the kill', 'total afterwards', 'what each worker says', 'verdict'];
  const table = makeTable(head, [...textThenNumbers(1, 4), 'left', 'left']);
  for (const run of r.runs) {
    const v = countVerdict(run);
    table.push([
      run.store,
      String(run.answered),
      String(run.cut),
      String(run.total),
      Object.entries(run.views)
        .map(([pid, n]) => `${pid}: ${n}`)
        .join(', '),
      v === 'none-lost' ? c.green(run.total === run.answered ? 'exact' : `none lost (+${run.total - run.answered} cut after counting)`) : c.red(`${v} (${run.total - run.answered})`),
    ]);
  }
  return [
    c.bold(`Lesson 5 · counter: loans counted by ${r.workers} cluster workers while one is SIGKILLed`),
    c.dim(`${r.load.loans} POST /loan over ${r.load.connections} connections; a worker killed halfway and replaced · ${machineCaption(r.machine)}`),
    table.toString(),
    'memory: the total is the sum of what the workers still alive say; the killed worker\'s count is gone, and its replacement starts at 0.',
  ].join('\n');
}
