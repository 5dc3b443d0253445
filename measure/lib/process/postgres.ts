/**
 * A throwaway PostgreSQL for an experiment (servers/postgres.ts), started like any lab server and
 * stopped with it, and the CPU its processes use (the postmaster's backends are not in the
 * wrapper's process group, so they are found by parentage in /proc).
 */
import type { Lab } from './lab.ts';
import type { ServerProcess } from './launch.ts';
import { allStats, descendants, TICKS_PER_S } from '../../../lib/proc.ts';

export interface Postgres {
  proc: ServerProcess;
  /** postgres://nsl@127.0.0.1:<port>/postgres */
  url: string;
}

/** Starts PostgreSQL. Rejects with KIT_ERR_POSTGRES_MISSING when it is not installed. */
export async function startPostgres(lab: Lab): Promise<Postgres> {
  const proc = await lab.start({ server: 'postgres', args: ['--port', '0'] });
  const url = proc.lines.map((l) => /^url: (postgres:\/\/\S+)$/.exec(l)?.[1]).find(Boolean)!;
  return { proc, url };
}

/**
 * CPU seconds used so far by the server and every process below it, those that already exited
 * included (undefined without /proc). A backend that exits between two readings would take its
 * time out of a sum of live processes and could make a step's CPU negative; once reaped, its time
 * is in its parent's reaped-children ticks (cutime + cstime, proc(5)), so both are counted.
 */
export function postgresCpuS(pg: Postgres): number | undefined {
  const stats = allStats();
  if (stats.size === 0) return undefined;
  let ticks = 0;
  for (const pid of descendants(stats, pg.proc.pid)) {
    const st = stats.get(pid);
    ticks += st ? st.ownTicks + st.reapedChildrenTicks : 0;
  }
  return ticks / TICKS_PER_S;
}
