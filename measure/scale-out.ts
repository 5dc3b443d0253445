/**
 * Lesson 5 · scale-out: does adding replicas add throughput?
 *
 * Starts 5 replicas sharing one SQLite file, and for 1, 2, 3 and 5 of them a balancer in front
 * (round robin); runs the same closed-loop load for two workloads: (a) a user scenario — create a
 * user, read it back, check 201 then 200 — and (b) the CPU-bound /work?ms=5.
 */
import { defineCommand } from '../lib/cli.ts';
import { COMMON_FLAGS, defineExperiment, runIfEntry, type RunContext } from './lib/harness/experiment.ts';
import { performance } from 'node:perf_hooks';
import type { ServerProcess } from './lib/process/launch.ts';
import { runLoad } from './lib/load/load.ts';
import { measureSteadily } from './lib/machine/steady.ts';
import { userScenario } from './lib/load/user-scenario.ts';
import { allStats, TICKS_PER_S, type ProcStat } from '../lib/proc.ts';
import { busyCoresBetween, cpuTimes } from './lib/machine/machine.ts';
import {
  balancerKind,
  LB_FLAG,
  servedByReplica,
  startReplicas,
  sweepReplicaCounts,
  type BalancerKind,
  type Replica,
} from './lib/process/topology.ts';
import {
  caveats,
  hints,
  notShown,
  render,
  SCALE_OUT_SPEC,
  shape,
  type RoleCpu,
  type ScaleOutResult,
  type ScaleStep,
} from '../results/scale-out/report.ts';
import { measures, predictions } from '../results/scale-out/predictions.ts';

const command = defineCommand({
  usage: 'npx tsx measure/scale-out.ts [flags]',
  summary:
    'Runs the same closed-loop load through the balancer to 1, 2, 3 and 5 replicas: a create-then-read user scenario, and the CPU-bound /work route.',
  flags: { ...COMMON_FLAGS, lb: LB_FLAG },
  epilogue: 'Example: npx tsx measure/scale-out.ts --lb nginx',
});

const { counts: COUNTS, connections: CONNECTIONS, workMs: WORK_MS } = SCALE_OUT_SPEC;
const WARMUP_S = 2;

/** Requests of the user scenario (create and read) each replica has served so far. */
async function servedUsers(replicas: Replica[]): Promise<Record<string, number>> {
  const [creates, reads] = await Promise.all([
    servedByReplica(replicas, '/users'),
    servedByReplica(replicas, '/users/:id'),
  ]);
  return Object.fromEntries(replicas.map((r) => [r.name, creates[r.name]! + reads[r.name]!]));
}

/** CPU time of every process now, by pid, ticks (empty without /proc). */
const ticksNow = (): Map<number, ProcStat> => allStats();

/**
 * Cores' worth of CPU each role used between two readings: the balancer (its process group:
 * nginx's workers too), the replicas together, the load generator (this process), and the busiest
 * single process of them all (an event loop cannot use more than one core).
 */
function usage(
  a: Map<number, ProcStat>,
  b: Map<number, ProcStat>,
  seconds: number,
  lb: ServerProcess,
  replicas: Replica[],
): RoleCpu | undefined {
  if (a.size === 0 || b.size === 0) return undefined;
  const cores = (pid: number) => {
    const x = a.get(pid);
    const y = b.get(pid);
    return x && y ? Math.max(0, y.ownTicks - x.ownTicks) / TICKS_PER_S / seconds : 0;
  };
  const group = (pgid: number) => [...b.values()].filter((st) => st.pgid === pgid).map((st) => st.pid);
  const round = (x: number) => Math.round(x * 100) / 100;
  const roles: [RoleCpu['busiest']['role'], number[]][] = [
    ['balancer', group(lb.pid)],
    ['replica', replicas.flatMap((r) => group(r.proc.pid))],
    ['load generator', [process.pid]],
  ];
  let busiest: RoleCpu['busiest'] = { role: 'load generator', cores: 0 };
  for (const [role, pids] of roles)
    for (const pid of pids) if (cores(pid) > busiest.cores) busiest = { role, cores: round(cores(pid)) };
  const sum = (pids: number[]) => round(pids.reduce((n, pid) => n + cores(pid), 0));
  return { balancer: sum(roles[0]![1]), replicas: sum(roles[1]![1]), generator: sum(roles[2]![1]), busiest };
}

/**
 * One step: the workload through `lb` to `replicas` for `durationS`, with each role's CPU (of
 * `all` replicas) and, for the user scenario, each replica's share of the requests.
 */
async function measureStep(
  lb: ServerProcess & { url: string },
  replicas: Replica[],
  workload: string,
  durationS: number,
  all: Replica[],
): Promise<ScaleStep> {
  const users = workload === 'user-scenario';
  const checks = { failed: 0 };
  const cpuBefore = cpuTimes();
  const procBefore = ticksNow();
  const servedBefore = users ? await servedUsers(replicas) : undefined;
  const started = performance.now();
  const r = users
    ? await runLoad({ url: lb.url, connections: CONNECTIONS, durationS, requests: userScenario(checks) as never })
    : await runLoad({ url: `${lb.url}/work?ms=${WORK_MS}`, connections: CONNECTIONS, durationS });
  const cpu = usage(procBefore, ticksNow(), (performance.now() - started) / 1000, lb, all);
  const servedAfter = servedBefore ? await servedUsers(replicas) : undefined;
  if (!users) checks.failed = r.counts.non2xx;
  return {
    replicas: replicas.length,
    throughput: r.throughput,
    mean: r.latency.mean,
    p95: r.latency.p95,
    failedChecks: checks.failed + r.counts.errors,
    requests: r.counts.completed,
    generatorCpu: r.generatorCpu,
    busyCores: busyCoresBetween(cpuBefore, cpuTimes()),
    ...(cpu ? { cpu } : {}),
    ...(servedBefore && servedAfter
      ? { perReplica: Object.fromEntries(Object.keys(servedAfter).map((k) => [k, servedAfter[k]! - servedBefore[k]!])) }
      : {}),
  };
}

async function run({
  lab,
  progress,
  options,
  quick,
  machine,
  port,
}: RunContext<{ lb: BalancerKind }>): Promise<ScaleOutResult> {
  const durationS = SCALE_OUT_SPEC.stepS[quick ? 'quick' : 'full'];
  const most = Math.max(...COUNTS);
  progress.step(`starting ${most} replicas`);
  const all = await startReplicas(lab, most);
  const workloads: ScaleOutResult['workloads'] = [
    { name: 'user-scenario', description: 'POST /users then GET /users/:id, checking 201 then 200', steps: [] },
    { name: 'cpu-bound', description: `GET /work?ms=${WORK_MS} (${WORK_MS} ms of CPU each)`, steps: [] },
  ];
  const warm = async (lb: ServerProcess) => {
    progress.step(`warm-up: the user scenario through the balancer for ${WARMUP_S} s`);
    await runLoad({
      url: lb.url,
      connections: CONNECTIONS,
      durationS: WARMUP_S,
      requests: userScenario({ failed: 0 }) as never,
    });
  };
  await sweepReplicaCounts(
    lab,
    options.lb,
    all,
    COUNTS,
    port,
    async (lb, replicas) => {
      for (const w of workloads) {
        const label = `${replicas.length} replica(s): ${w.name} for ${durationS} s`;
        progress.step(label);
        w.steps.push(
          (await measureSteadily(label, () => measureStep(lb, replicas, w.name, durationS, all), { progress })).value,
        );
      }
    },
    warm,
  );
  return { machine, balancer: options.lb, load: { connections: CONNECTIONS, durationS }, workloads };
}

export const experiment = defineExperiment({
  name: 'scale-out',
  command,
  options: (flags) => ({ lb: balancerKind(flags.lb) }),
  run,
  report: { render, shape, hints, caveats, notShown, measures, predictions },
});

await runIfEntry(import.meta, experiment);
