/**
 * Lesson 7 · counter: does a loan counter survive several processes and a crash?
 *
 * For each store (memory, SQLite, Redis), starts servers/managed-cluster.ts with 3 workers on that store
 * and sends 6000 POST /loan (2000 with --quick) over 6 connections; halfway through, the primary
 * SIGKILLs one worker and starts a replacement. Afterwards every worker is asked for the total
 * (GET /loans, fresh connections, so each worker answers). Then the same with 3 replicas behind
 * the balancer (--lb), one of them SIGKILLed halfway.
 */
import { defineCommand } from '../lib/cli.ts';
import type { StoreKind } from '../servers/lib/state/stores.ts';
import { isEvent } from '../servers/lib/cluster/messages.ts';
import { COMMON_FLAGS, defineExperiment, runIfEntry, type RunContext } from './lib/harness/experiment.ts';
import { startLoad } from './lib/load/load.ts';
import { probeOk } from './lib/load/probe.ts';
import type { LoanCount, WorkerStatus } from '../servers/contracts.ts';
import { redisForRun, storeArgs } from './lib/process/stores.ts';
import { faultedLoad } from './lib/load/faulted-load.ts';
import { balancerKind, LB_FLAG, type BalancerKind } from './lib/process/topology.ts';
import { notShown, hints, render, shape, type CounterResult, type CounterRun } from '../results/counter/report.ts';
import { measures, predictions } from '../results/counter/predictions.ts';

const command = defineCommand({
  usage: 'npx tsx measure/counter.ts [flags]',
  summary:
    'Counts loans in a 3-worker cluster while one worker is SIGKILLed, with the counter in process memory, in SQLite and in Redis, ' +
    'and compares the total with the loans that were answered 200. Redis rows need redis-server (or REDIS_URL).',
  flags: { ...COMMON_FLAGS, lb: LB_FLAG },
  epilogue: 'Example: npx tsx measure/counter.ts --quick',
});

interface Options {
  lb: BalancerKind;
}

const WORKERS = 3;
const CONNECTIONS = 6;

/** Upper bound on one store's load, s (it normally ends after LOANS answers, in about a second). */
const BOUND_S = 30;

async function countOnce(
  { lab, progress, quick, port }: RunContext<Options>,
  store: StoreKind,
  redisUrl: string | undefined,
): Promise<CounterRun> {
  const loans = quick ? 2000 : 6000;
  progress.step(`${store}: starting a ${WORKERS}-worker cluster`);
  const { args } = storeArgs(lab, store, redisUrl, `counter-${store}`);
  const cluster = await lab.start({
    server: 'managed-cluster',
    args: ['--port', String(port), '--workers', String(WORKERS), ...args],
    ipc: true,
  });
  progress.step(`${store}: ${loans} POST /loan over ${CONNECTIONS} connections; one worker SIGKILLed halfway`);
  const from = cluster.messageCount;
  // A count, not a duration: autocannon then waits for every answer, so a loan counted but not
  // answered can only be one the kill cut.
  const load = startLoad({
    url: `${cluster.url}/loan`,
    method: 'POST',
    connections: CONNECTIONS,
    amount: loans,
    durationS: BOUND_S,
    onResponse: (n) => {
      if (n === loans / 2) cluster.send({ cmd: 'kill-worker' });
    },
  });
  const result = await load.result;
  const killed = await cluster.waitForMessage(isEvent('worker-killed'), 5000, from);
  await cluster.waitForMessage(isEvent('worker-replaced'), 20_000, from);
  const views: Record<string, number> = {};
  for (let i = 0; i < 4 * WORKERS; i++) {
    const r = await probeOk<WorkerStatus & LoanCount>(`${cluster.url}/loans`);
    views[String(r.body.pid)] = r.body.loans;
  }
  await lab.stop(cluster);
  const values = Object.values(views);
  return {
    topology: 'cluster',
    store,
    answered: result.counts.ok2xx,
    cut: result.counts.errors + result.counts.timeouts,
    views,
    total: store === 'memory' ? values.reduce((a, b) => a + b, 0) : Math.max(...values),
    killed: String(killed.pid),
  };
}

/** The same count with 3 replicas behind the balancer; replica app3 is SIGKILLed halfway (and not replaced). */
async function countOnReplicas(
  { lab, progress, quick, port, options }: RunContext<Options>,
  store: StoreKind,
  redisUrl: string | undefined,
): Promise<CounterRun> {
  const loans = quick ? 2000 : 6000;
  const { args } = storeArgs(lab, store, redisUrl, `counter-replicas-${store}`);
  const {
    load: result,
    victim,
    extra: views,
  } = await faultedLoad(
    lab,
    progress,
    {
      label: `${store}, ${WORKERS} replicas`,
      replicas: WORKERS,
      replicaArgs: args,
      lb: options.lb,
      policy: 'round-robin',
      port,
      // A count, not a duration: autocannon then waits for every answer (see countOnce).
      load: { route: '/loan', method: 'POST', connections: CONNECTIONS, amount: loans, durationS: BOUND_S },
      fault: { signal: 'SIGKILL', afterResponses: loans / 2 },
    },
    async (t) => {
      const views: Record<string, number> = {};
      for (const r of t.replicas.slice(0, -1)) views[r.name] = (await probeOk<LoanCount>(`${r.url}/loans`)).body.loans;
      return views;
    },
  );
  const values = Object.values(views);
  return {
    topology: 'replicas',
    store,
    // The balancer answers 502 for a loan the kill cut (a POST is not retried once sent).
    answered: result.counts.ok2xx,
    cut: result.counts.errors + result.counts.timeouts + result.counts.non2xx,
    views,
    total: store === 'memory' ? values.reduce((a, b) => a + b, 0) : Math.max(...values),
    killed: victim.name,
  };
}

async function run(ctx: RunContext<Options>): Promise<CounterResult> {
  const runs: CounterRun[] = [];
  const notRun: Record<string, string> = {};
  ctx.progress.step('starting redis-server');
  const redis = await redisForRun(ctx.lab);
  for (const count of [countOnce, countOnReplicas]) {
    runs.push(await count(ctx, 'memory', undefined));
    runs.push(await count(ctx, 'sqlite', undefined));
    if (redis.url) runs.push(await count(ctx, 'redis', redis.url));
  }
  if (!redis.url) notRun.redis = redis.missing!;
  return {
    machine: ctx.machine,
    balancer: ctx.options.lb,
    workers: WORKERS,
    load: { connections: CONNECTIONS, loans: ctx.quick ? 2000 : 6000 },
    runs,
    notRun,
  };
}

export const experiment = defineExperiment({
  name: 'counter',
  command,
  options: (flags) => ({ lb: balancerKind(flags.lb) }),
  run,
  report: { render, shape, hints, notShown, measures, predictions },
});

await runIfEntry(import.meta, experiment);
