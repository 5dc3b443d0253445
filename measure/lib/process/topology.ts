/**
 * Lesson 4's topology: N replicas sharing one SQLite file, and a balancer in front of them,
 * either the kit's own (`servers/balancer.ts`) or real nginx (`servers/nginx.ts`).
 */
import type { Lab } from './lab.ts';
import type { ServerProcess } from './launch.ts';
import path from 'node:path';
import { KitError } from '../../../lib/errors.ts';
import type { BalancerPolicy } from '../../../core/policies.ts';
import { probeOk } from '../load/probe.ts';
import type { ReplicaStats } from '../../../servers/contracts.ts';
import { parseRetryLine } from '../../../core/failover.ts';

const BALANCERS = ['builtin', 'nginx'] as const;
export type BalancerKind = (typeof BALANCERS)[number];

/** The --lb flag every lesson 4 experiment has (LB=nginx in the environment sets its default). */
/** Lesson 4's --port is the balancer's: the address students send requests to. */
export const LB_FLAG = {
  type: 'string',
  valueName: 'builtin|nginx',
  description: "which load balancer: the kit's own, or real nginx (env LB)",
} as const;

/** Reads --lb (or LB): 'builtin' by default; throws KIT_ERR_USAGE for anything else. */
export function balancerKind(flag: unknown, env: NodeJS.ProcessEnv = process.env): BalancerKind {
  const value = typeof flag === 'string' ? flag : env.LB || 'builtin';
  if (value !== 'builtin' && value !== 'nginx')
    throw new KitError('KIT_ERR_USAGE', `--lb is builtin or nginx; got '${value}'`);
  return value;
}

export interface Replica {
  name: string;
  proc: ServerProcess;
  url: string;
  addr: string;
}

/**
 * Starts `count` replicas app1..appN (in parallel), sharing one users database: a SQLite file in a
 * temp dir, or `dbUrl` (a PostgreSQL URL); `extraArgs` go to every replica (e.g. --abrupt),
 * `lastArgs` to appN only (a fault's victim). The database file or URL is `dbFile` of the result.
 */
export async function startReplicas(
  lab: Lab,
  count: number,
  extraArgs: string[] = [],
  lastArgs: string[] = [],
  dbUrl?: string,
): Promise<Replica[] & { dbFile?: string }> {
  const db = dbUrl ?? path.join(lab.tempDir('users'), 'users.db');
  const args = (i: number) => [
    '--name',
    `app${i}`,
    '--port',
    '0',
    '--db',
    db,
    ...extraArgs,
    ...(i === count ? lastArgs : []),
  ];
  // Create the database (and its WAL mode) once, before several processes open it at once.
  const first = await lab.start({ server: 'replica', args: args(1) });
  const rest = await Promise.all(
    Array.from({ length: count - 1 }, (_, i) => lab.start({ server: 'replica', args: args(i + 2) })),
  );
  const replicas: Replica[] & { dbFile?: string } = [first, ...rest].map((proc, i) => ({
    name: `app${i + 1}`,
    proc,
    url: proc.url,
    addr: `127.0.0.1:${proc.port}`,
  }));
  replicas.dbFile = db;
  return replicas;
}

/**
 * Starts a balancer of `kind` with `policy` in front of `replicas`, and checks it forwards.
 * `extraArgs` are more balancer flags (e.g. ['--retries', '0']); `probePath` null skips the check
 * (lesson 9 wants the first request to open the upstream connection).
 */
export async function startBalancer(
  lab: Lab,
  kind: BalancerKind,
  policy: BalancerPolicy,
  replicas: Replica[],
  port = 0,
  keepAlive = true,
  extraArgs: string[] = [],
  probePath: string | null = '/fast',
): Promise<ServerProcess> {
  const upstream = replicas.map((r) => `${r.name}=${r.addr}`).join(',');
  const args = [
    '--policy',
    policy,
    '--upstream',
    upstream,
    '--port',
    String(port),
    '--keepalive',
    keepAlive ? 'on' : 'off',
    ...extraArgs,
  ];
  const lb = await lab.start({ server: kind === 'nginx' ? 'nginx' : 'balancer', args });
  if (probePath !== null) await probeOk(`${lb.url}${probePath}`);
  return lb;
}

/**
 * Lesson 4's scaling sweeps: for each count n of `counts`, a round-robin balancer in front of the
 * first n of `all`, then `step(lb, replicas)`. The kit's balancer runs once (after `warm`, if
 * given), with the replicas not in a step taken out by hand (POST /__lb/down): a fresh Node process
 * per step would be measured cold, and in a user scenario the balancer is the busiest process.
 * nginx, compiled ahead of time, is started per step and stopped after it.
 */
export async function sweepReplicaCounts(
  lab: Lab,
  kind: BalancerKind,
  all: Replica[],
  counts: readonly number[],
  port: number,
  step: (lb: ServerProcess, replicas: Replica[]) => Promise<void>,
  warm?: (lb: ServerProcess) => Promise<void>,
): Promise<void> {
  const shared = kind === 'builtin' ? await startBalancer(lab, 'builtin', 'round-robin', all, port) : undefined;
  if (shared && warm) await warm(shared);
  for (const n of counts) {
    const lb = shared ?? (await startBalancer(lab, kind, 'round-robin', all.slice(0, n), port));
    if (shared)
      for (const [i, r] of all.entries())
        await probeOk(`${shared.url}/__lb/${i < n ? 'up' : 'down'}?upstream=${r.name}`, { method: 'POST' });
    await step(lb, all.slice(0, n));
    if (!shared) await lab.stop(lb);
  }
}

/** Per replica, how many requests it has served on each route (from its /__replica/stats). */
export async function servedByReplica(replicas: Replica[], route: string): Promise<Record<string, number>> {
  // All at once: a replica whose event loop is blocked answers late, and the others need not wait for it.
  const counts = await Promise.all(
    replicas.map(async (r) => (await probeOk<ReplicaStats>(`${r.url}/__replica/stats`)).body.served[route] ?? 0),
  );
  return Object.fromEntries(replicas.map((r, i) => [r.name, counts[i] as number]));
}

/**
 * The requests a balancer retried so far: asks it (SIGUSR1) to print `retries: total=N` after
 * every `retry:` line it has, waits for that line, and parses the retry lines.
 * Rejects KIT_ERR_WAIT_TIMEOUT if the balancer does not answer within 5 s.
 */
export async function retriesOf(
  lb: ServerProcess,
): Promise<{ total: number; requests: NonNullable<ReturnType<typeof parseRetryLine>>[] }> {
  const from = lb.lines.length;
  lb.signal('SIGUSR1', 'leader');
  const m = await lb.waitForLine(/^retries: total=(\d+)$/, 5000, from);
  const requests = lb.lines.map(parseRetryLine).filter((r) => r !== undefined);
  return { total: Number(m[1]), requests };
}
