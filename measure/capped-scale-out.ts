/**
 * Lesson 5 · capped-scale-out: with each replica held to a fifth of a core, as containers given a
 * CPU limit are, does throughput grow from 1 to 5 replicas, and where does the shared database
 * stop it?
 *
 * Starts 5 replicas, each with --cpu-quota CAPPED_SPEC.cores, sharing one SQLite file whose every
 * commit waits CAPPED_SPEC.commitMs for a modelled disk flush, and for 1, 2, 3 and 5 of them runs
 * the same closed-loop load through the balancer: the CPU-bound /work route, then the create-then-read
 * user scenario with the same kind of CPU work in each request. Reads each replica's CPU, quota
 * throttling and writer-lock times (/__replica/stats) around every step.
 */
import { performance } from 'node:perf_hooks';
import { COMMON_FLAGS, defineExperiment, runIfEntry, type RunContext } from './lib/harness/experiment.ts';
import type { ServerProcess } from './lib/process/launch.ts';
import { runLoad } from './lib/load/load.ts';
import { measureSteadily } from './lib/machine/steady.ts';
import { probeOk } from './lib/load/probe.ts';
import type { ReplicaStats } from '../servers/contracts.ts';
import { busyCoresBetween, cpuTimes } from './lib/machine/machine.ts';
import { userScenario } from './lib/load/user-scenario.ts';
import { postgresCpuS, startPostgres, type Postgres } from './lib/process/postgres.ts';
import { KitError } from '../lib/errors.ts';
import {
  balancerKind,
  LB_FLAG,
  startReplicas,
  sweepReplicaCounts,
  type BalancerKind,
  type Replica,
} from './lib/process/topology.ts';
import { QUOTA_PERIOD_MS, quotaMode, type QuotaMode } from '../servers/lib/cpu/quota.ts';
import { MAX_COMMIT_MS } from '../servers/lib/state/users-db.ts';
import { defineCommand, intFlag } from '../lib/cli.ts';
import { caveats, hints, notShown, render, shape } from '../results/capped-scale-out/report.ts';
import {
  CAPPED_SPEC,
  type CappedScaleOutResult,
  type CappedStep,
  type CappedWorkload,
} from '../results/capped-scale-out/result.ts';
import { measures, predictions } from '../results/capped-scale-out/predictions.ts';

const command = defineCommand({
  usage: 'npx tsx measure/capped-scale-out.ts [flags]',
  summary: `Holds each replica to ${CAPPED_SPEC.cores} core and runs the same closed-loop load through the balancer to 1, 2, 3 and 5 of them: the CPU-bound /work route, and a create-then-read user scenario whose writes share one SQLite file.`,
  flags: {
    ...COMMON_FLAGS,
    lb: LB_FLAG,
    'quota-mode': {
      type: 'string',
      valueName: 'mode',
      description:
        'how each replica is held to its quota: auto (a cgroup if allowed, else the throttle), cgroup, throttle (default: auto)',
    },
    db: {
      type: 'string',
      valueName: 'sqlite|postgres',
      description:
        'the shared database: a SQLite file (the default, embedded) or a throwaway PostgreSQL server (needs PostgreSQL installed)',
    },
    'commit-ms': {
      type: 'string',
      valueName: 'ms',
      description: `the modelled disk flush each commit waits for, holding the writer lock, 0 to ${MAX_COMMIT_MS} (default ${CAPPED_SPEC.commitMs}: a spinning disk; 0: a fast SSD)`,
    },
  },
  epilogue:
    'Examples: npx tsx measure/capped-scale-out.ts --lb nginx\n          npx tsx measure/capped-scale-out.ts --commit-ms 0   (no slow disk: where does the scenario stop now?)\n          npx tsx measure/capped-scale-out.ts --db postgres   (a database server instead of a file)',
});

const { counts: COUNTS, connections: CONNECTIONS } = CAPPED_SPEC;
/** The first wave of a closed loop starts together; its answers are left out of the figures. */
const SETTLE_S = 0.5;

/** What each replica's /__replica/stats says now: its CPU (µs), its writes and its quota. */
const readAll = (replicas: Replica[]): Promise<ReplicaStats[]> =>
  Promise.all(replicas.map(async (r) => (await probeOk<ReplicaStats>(`${r.url}/__replica/stats`)).body));

/** The step's figures from the replicas' readings before and after it, over `wallMs`; `dbCpuS`: PostgreSQL's CPU seconds in the step. */
function fromReadings(
  before: ReplicaStats[],
  after: ReplicaStats[],
  wallMs: number,
  dbCpuS: number | undefined,
): Pick<CappedStep, 'replicaCores' | 'throttledShare' | 'db'> {
  const sum = (f: (r: ReplicaStats) => number) => after.reduce((n, a, i) => n + f(a) - f(before[i]!), 0);
  const writes = sum((r) => r.db?.writes ?? 0);
  const held = sum((r) => r.db?.lockHeldMs ?? 0);
  return {
    replicaCores: sum((r) => r.cpuUs) / 1000 / wallMs,
    throttledShare: Math.min(1, sum((r) => r.quota?.throttle?.throttledMs ?? 0) / wallMs / after.length),
    db: {
      writes,
      writesPerS: writes / (wallMs / 1000),
      lockBusy: held / wallMs,
      lockWaitMs: writes ? sum((r) => r.db?.lockWaitMs ?? 0) / writes : 0,
      lockHoldMs: writes ? held / writes : 0,
      writeMs: writes ? sum((r) => r.db?.writeMs ?? 0) / writes : 0,
      ...(dbCpuS === undefined ? {} : { cores: dbCpuS / (wallMs / 1000) }),
    },
  };
}

/** One step: `workload` through `lb` to `replicas` for `durationS` (after the settling); `pg` when the database is PostgreSQL. */
async function measureStep(
  lb: ServerProcess & { url: string },
  replicas: Replica[],
  workload: CappedWorkload['name'],
  durationS: number,
  pg: Postgres | undefined,
): Promise<CappedStep> {
  const checks = { failed: 0 };
  const cpuBefore = cpuTimes();
  // The readings' midpoints bound the step, so that the replicas' CPU and the wall time cover the same span.
  const readAt = performance.now();
  const before = await readAll(replicas);
  const dbBefore = pg && postgresCpuS(pg);
  const started = (readAt + performance.now()) / 2;
  const base = { connections: CONNECTIONS, durationS: durationS + SETTLE_S, settleS: SETTLE_S };
  const r =
    workload === 'user-scenario'
      ? await runLoad({
          ...base,
          url: lb.url,
          requests: userScenario(checks, `work=${CAPPED_SPEC.appWorkMs}`) as never,
        })
      : await runLoad({ ...base, url: `${lb.url}/work?ms=${CAPPED_SPEC.workMs}` });
  const endAt = performance.now();
  const after = await readAll(replicas);
  const wallMs = (endAt + performance.now()) / 2 - started;
  const dbAfter = pg && postgresCpuS(pg);
  const dbCpuS = dbBefore === undefined || dbAfter === undefined ? undefined : dbAfter - dbBefore;
  if (workload === 'cpu-bound') checks.failed = r.counts.non2xx;
  const settled = r.settled!;
  return {
    replicas: replicas.length,
    throughput: settled.throughput,
    p50: settled.latency.p50,
    p95: settled.latency.p95,
    failedChecks: checks.failed + r.counts.errors,
    requests: r.counts.completed,
    generatorCpu: r.generatorCpu,
    busyCores: busyCoresBetween(cpuBefore, cpuTimes()),
    ...fromReadings(before, after, wallMs, dbCpuS),
  };
}

interface Options {
  lb: BalancerKind;
  quotaMode: QuotaMode;
  db: 'sqlite' | 'postgres';
  commitMs: number;
}

async function run({
  lab,
  progress,
  options,
  quick,
  machine,
  port,
}: RunContext<Options>): Promise<CappedScaleOutResult> {
  const durationS = CAPPED_SPEC.stepS[quick ? 'quick' : 'full'];
  const most = Math.max(...COUNTS);
  let pg: Postgres | undefined;
  if (options.db === 'postgres') {
    progress.step('starting a throwaway PostgreSQL (initdb, then postgres)');
    pg = await startPostgres(lab);
  }
  progress.step(`starting ${most} replicas, each held to ${CAPPED_SPEC.cores} core`);
  const flush = pg ? [] : ['--commit-ms', String(options.commitMs)];
  const all = await startReplicas(
    lab,
    most,
    ['--cpu-quota', String(CAPPED_SPEC.cores), '--quota-mode', options.quotaMode, ...flush],
    [],
    pg?.url,
  );
  const quotaMode = (await readAll(all.slice(0, 1)))[0]!.quota?.mode ?? 'none';
  const workloads: CappedWorkload[] = [
    { name: 'cpu-bound', description: `GET /work?ms=${CAPPED_SPEC.workMs}`, steps: [] },
    {
      name: 'user-scenario',
      description: `POST /users then GET /users/:id, each with ?work=${CAPPED_SPEC.appWorkMs}; checks 201 then 200`,
      steps: [],
    },
  ];
  await sweepReplicaCounts(lab, options.lb, all, COUNTS, port, async (lb, replicas) => {
    for (const w of workloads) {
      const label = `${replicas.length} replica(s): ${w.name} for ${durationS} s`;
      progress.step(label);
      w.steps.push(
        (await measureSteadily(label, () => measureStep(lb, replicas, w.name, durationS, pg), { progress })).value,
      );
    }
  });
  return {
    machine,
    balancer: options.lb,
    cap: { cores: CAPPED_SPEC.cores, periodMs: QUOTA_PERIOD_MS, mode: quotaMode },
    database: pg ? { kind: 'postgres' } : { kind: 'sqlite', commitMs: options.commitMs },
    load: { connections: CONNECTIONS, durationS },
    workloads,
  };
}

export const experiment = defineExperiment({
  name: 'capped-scale-out',
  command,
  options: (flags): Options => {
    const db = flags.db ?? 'sqlite';
    if (db !== 'sqlite' && db !== 'postgres')
      throw new KitError('KIT_ERR_USAGE', `--db is sqlite or postgres; got '${db}'`);
    if (db === 'postgres' && flags['commit-ms'] !== undefined)
      throw new KitError(
        'KIT_ERR_USAGE',
        '--commit-ms models a slow disk for SQLite; PostgreSQL flushes its WAL for real',
      );
    return {
      lb: balancerKind(flags.lb),
      quotaMode: quotaMode(flags['quota-mode']),
      db,
      commitMs: intFlag('commit-ms', flags['commit-ms'], 0, MAX_COMMIT_MS, CAPPED_SPEC.commitMs),
    };
  },
  run,
  report: { render, shape, hints, caveats, notShown, measures, predictions },
});

await runIfEntry(import.meta, experiment);
