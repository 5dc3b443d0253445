/**
 * Lesson 4 · distribution: how each balancing policy spreads requests over 3 replicas.
 *
 * Starts 3 replicas and, for each policy, a balancer (the kit's own, or nginx with --lb nginx);
 * (a) sends 30 /whoami requests one after another, each on a fresh connection, and records which
 * replica answered each, in order; (b) sends one long request (/slow-async) through the balancer,
 * so that one replica has a request in flight, and then 30 more /whoami: a policy that reads load
 * sends the busy replica none of them.
 */
import { defineCommand } from '../lib/cli.ts';
import { POLICIES } from '../core/policies.ts';
import { COMMON_FLAGS, defineExperiment, runIfEntry, type RunContext } from './lib/harness/experiment.ts';
import { probe, probeOk } from './lib/load/probe.ts';
import type { Whoami } from '../servers/contracts.ts';
import {
  balancerKind,
  LB_FLAG,
  servedByReplica,
  startBalancer,
  startReplicas,
  type BalancerKind,
  type Replica,
} from './lib/process/topology.ts';
import { pollUntil } from '../lib/wait.ts';
import {
  hints,
  render,
  shape,
  type DistributionResult,
  type PolicyDistribution,
} from '../results/distribution/report.ts';
import { measures, predictions } from '../results/distribution/predictions.ts';
import type { ServerProcess } from './lib/process/launch.ts';

const command = defineCommand({
  usage: 'npx tsx measure/distribution.ts [flags]',
  summary:
    'Sends 30 requests through the load balancer for each policy (round robin, least connections, random, power of two choices) ' +
    'and counts how many each of 3 replicas answered, and in what order; then 30 more while one replica holds a long request.',
  flags: { ...COMMON_FLAGS, lb: LB_FLAG },
  epilogue:
    '--quick changes nothing here (it takes a few seconds as it is).\nExample: LB=nginx npx tsx measure/distribution.ts',
});

const REPLICAS = 3;
const REQUESTS = 30;
/** Longer than 30 sequential requests take (the replica's longest /slow-async); abandoned once they are done. */
const LONG_MS = 10_000;

async function sequence(lb: ServerProcess): Promise<string[]> {
  const order: string[] = [];
  for (let i = 0; i < REQUESTS; i++) order.push((await probeOk<Whoami>(`${lb.url}/whoami`)).body.replica);
  return order;
}

/** Sends one long request through `lb` and resolves with the replica that holds it, and a way to abandon it. */
async function holdOne(lb: ServerProcess, replicas: Replica[]): Promise<{ busy: string; release: () => boolean }> {
  const before = await servedByReplica(replicas, '/slow-async');
  const abort = new AbortController();
  let answered = false;
  probe(`${lb.url}/slow-async?ms=${LONG_MS}`, { signal: abort.signal })
    .then(() => (answered = true))
    .catch(() => {}); // abandoned on purpose
  const busy = await pollUntil(
    'the long request to reach a replica',
    async () => {
      const now = await servedByReplica(replicas, '/slow-async');
      return replicas.map((r) => r.name).find((n) => now[n]! > before[n]!);
    },
    10_000,
  );
  // release() says whether the long request was still in flight: if not, the replica was not busy throughout.
  return {
    busy,
    release: () => {
      abort.abort();
      return !answered;
    },
  };
}

async function run({
  lab,
  progress,
  options,
  machine,
  port,
}: RunContext<{ lb: BalancerKind }>): Promise<DistributionResult> {
  progress.step(`starting ${REPLICAS} replicas`);
  const replicas = await startReplicas(lab, REPLICAS);
  const byPolicy: Record<string, PolicyDistribution> = {};
  for (const policy of POLICIES) {
    progress.step(`${policy}: ${REQUESTS} requests through ${options.lb}`);
    const lb = await startBalancer(lab, options.lb, policy, replicas, port);
    const order = await sequence(lb);
    progress.step(`${policy}: ${REQUESTS} more while one replica holds a long request`);
    const held = await holdOne(lb, replicas);
    const withBusy = await sequence(lb);
    const heldThroughout = held.release();
    await lab.stop(lb);
    byPolicy[policy] = { order, busy: held.busy, withBusy, heldThroughout };
  }
  return { machine, balancer: options.lb, replicas: replicas.map((r) => r.name), requests: REQUESTS, byPolicy };
}

export const experiment = defineExperiment({
  name: 'distribution',
  command,
  options: (flags) => ({ lb: balancerKind(flags.lb) }),
  run,
  report: { render, shape, hints, measures, predictions },
});

await runIfEntry(import.meta, experiment);
