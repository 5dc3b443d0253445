/**
 * Result, table and shape of the `rate-limit` experiment (lesson 7): one member's 60 loan attempts
 * spread over 4 cluster workers, limit 10 per minute, the limit kept in memory, SQLite or Redis. Pure.
 */
import { machineCaption, makeChalk, makeTable, textThenNumbers, type MachineInfo } from '../report/format.ts';
import { CANNOT_SHOW, line } from '../report/shape.ts';

export interface LimitRun {
  store: string;
  attempts: number;
  allowed: number;
  refused: number;
  /** Allowed attempts per worker pid. */
  allowedByWorker: Record<string, number>;
}

export interface RateLimitResult {
  machine: MachineInfo;
  workers: number;
  limit: number;
  windowS: number;
  runs: LimitRun[];
  notRun: Record<string, string>;
}

/**
 * How many got through, against the limit: exactly it (one shared count), exactly one limit per
 * worker (each process counts alone), or something else. The attempts exceed workers × limit, so
 * "no limit at all" lets every attempt through and reads `no-limit`, not `one-limit-per-worker`.
 */
export function allowedVerdict(run: LimitRun, limit: number, workers: number): string {
  if (run.allowed === limit) return 'exactly-the-limit';
  if (run.allowed === run.attempts) return 'no-limit';
  const perWorker = Object.values(run.allowedByWorker);
  if (run.allowed === workers * limit && perWorker.length === workers && perWorker.every((n) => n === limit))
    return 'one-limit-per-worker';
  return run.allowed > limit ? 'more-than-the-limit' : 'less-than-the-limit';
}

/**
 * One line per store that ran, or that could not (notRun: cannot show). A store left out on
 * purpose (lesson 7's exercise runs only Redis) has no line.
 */
export function shape(r: RateLimitResult): string[] {
  const out: string[] = [];
  for (const store of ['memory', 'sqlite', 'redis']) {
    const run = r.runs.find((x) => x.store === store);
    if (run) out.push(line(store, 'allowed-vs-limit', allowedVerdict(run, r.limit, r.workers)));
    else if (store in r.notRun) out.push(line(store, 'allowed-vs-limit', CANNOT_SHOW));
  }
  return out;
}

export const hints: Record<string, string> = {
  memory:
    'each worker keeps its own count, so each lets the member through up to the limit: exactly workers × limit in all; ' +
    'every attempt allowed means no limit was applied at all',
  sqlite: 'one count in one SQLite file: exactly the limit gets through, whichever worker answers',
  redis:
    'one count in Redis lets exactly the limit through, whichever worker answers; 10 on each worker means each counted alone',
};

export function notShown(r: RateLimitResult): string[] {
  return Object.values(r.notRun);
}

export function render(r: RateLimitResult, color: boolean, caption = machineCaption(r.machine)): string {
  const c = makeChalk(color);
  const table = makeTable(
    ['store', 'attempts', 'allowed (200)', 'refused (429)', 'allowed per worker'],
    [...textThenNumbers(1, 4), 'left'],
  );
  for (const run of r.runs) {
    table.push([
      run.store,
      String(run.attempts),
      run.allowed === r.limit ? c.green(String(run.allowed)) : c.red(String(run.allowed)),
      String(run.refused),
      Object.values(run.allowedByWorker).join(' + '),
    ]);
  }
  return [
    c.bold(`Lesson 7 · rate limit: one member, ${r.limit} loans per ${r.windowS} s, ${r.workers} cluster workers`),
    c.dim(`every attempt on a fresh connection, so the cluster spreads them over the workers · ${caption}`),
    table.toString(),
    ...(r.runs.some((x) => allowedVerdict(x, r.limit, r.workers) === 'one-limit-per-worker')
      ? [
          `A limit kept in each process's memory is really a limit per process: ${r.workers} workers let through up to ${r.workers} × ${r.limit}.`,
        ]
      : []),
  ].join('\n');
}
