/**
 * Result, table and shape of the `rate-limit` experiment (lesson 5): one member's 40 loan attempts
 * spread over 4 cluster workers, limit 10 per minute, the limit kept in memory, SQLite or Redis. Pure.
 */
import { machineCaption, makeChalk, makeTable, textThenNumbers, type MachineInfo } from '../lib/output.ts';
import { CANNOT_SHOW, line } from '../lib/shape.ts';

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

export function shape(r: RateLimitResult): string[] {
  const out: string[] = [];
  for (const store of ['memory', 'sqlite', 'redis']) {
    const run = r.runs.find((x) => x.store === store);
    if (!run) {
      out.push(line(store, 'allowed-vs-limit', CANNOT_SHOW));
      continue;
    }
    out.push(line(store, 'allowed-vs-limit', run.allowed === r.limit ? 'exactly-the-limit' : run.allowed > r.limit ? 'more-than-the-limit' : 'less-than-the-limit'));
  }
  return out;
}

export const hints: Record<string, string> = {
  memory: 'each worker keeps its own count, so each lets the member through up to the limit: about workers × limit in all',
  sqlite: 'one count in one SQLite file: exactly the limit gets through, whichever worker answers',
  redis: 'one count in Redis: exactly the limit gets through, whichever worker answers',
};

export function caveats(r: RateLimitResult): string[] {
  return Object.values(r.notRun);
}

export function render(r: RateLimitResult, color: boolean): string {
  const c = makeChalk(color);
  const table = makeTable(['store', 'attempts', 'allowed (200)', 'refused (429)', 'allowed per worker'], [...textThenNumbers(1, 4), 'left']);
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
    c.bold(`Lesson 5 · rate limit: one member, ${r.limit} loans per ${r.windowS} s, ${r.workers} cluster workers`),
    c.dim(`every attempt on a fresh connection, so the cluster spreads them over the workers · ${machineCaption(r.machine)}`),
    table.toString(),
    `A limit kept in each process's memory is really a limit per process: ${r.workers} workers let through up to ${r.workers} × ${r.limit}.`,
  ].join('\n');
}
