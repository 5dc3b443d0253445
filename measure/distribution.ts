/**
 * Lesson 4 · distribution: how each balancing policy spreads requests over 3 replicas.
 *
 * Starts 3 replicas and, for each policy, a balancer (the kit's own, or nginx with --lb nginx);
 * sends 30 /whoami requests one after another, each on a fresh connection, and counts which
 * replica answered each.
 */
import { defineCommand } from '../lib/cli.ts';
import { POLICIES } from '../servers/lib/policies.ts';
import { COMMON_FLAGS, runExperiment, type RunContext } from './lib/experiment.ts';
import { probeOk } from './lib/probe.ts';
import { balancerKind, LB_FLAG, startBalancer, startReplicas, type BalancerKind } from './lib/topology.ts';
import { hints, render, shape, type DistributionResult } from './report/distribution.ts';

const command = defineCommand({
  usage: 'npx tsx measure/distribution.ts [flags]',
  summary: 'Sends 30 requests through the load balancer for each policy (round robin, least connections, random, power of two choices) and counts how many each of 3 replicas answered.',
  flags: { ...COMMON_FLAGS, lb: LB_FLAG },
  epilogue: '--quick changes nothing here (it takes a few seconds as it is).\nExample: LB=nginx npx tsx measure/distribution.ts',
});

const REPLICAS = 3;
const REQUESTS = 30;

async function run({ lab, progress, options, machine, port }: RunContext<{ lb: BalancerKind }>): Promise<DistributionResult> {
  progress.step(`starting ${REPLICAS} replicas`);
  const replicas = await startReplicas(lab, REPLICAS);
  const byPolicy: DistributionResult['byPolicy'] = {};
  for (const policy of POLICIES) {
    progress.step(`${policy}: ${REQUESTS} requests through ${options.lb}`);
    const lb = await startBalancer(lab, options.lb, policy, replicas, port);
    const counts: Record<string, number> = {};
    for (let i = 0; i < REQUESTS; i++) {
      const r = await probeOk(`${lb.url}/whoami`);
      counts[r.body.replica] = (counts[r.body.replica] ?? 0) + 1;
    }
    byPolicy[policy] = counts;
    await lab.stop(lb);
  }
  return { machine, balancer: options.lb, replicas: replicas.map((r) => r.name), requests: REQUESTS, byPolicy };
}

process.exitCode = await runExperiment({
  name: 'distribution',
  command,
  options: (flags) => ({ lb: balancerKind(flags.lb) }),
  run,
  report: { render, shape, hints },
});
