/**
 * Lesson 4 · degraded: one slow replica, four policies.
 *
 * Starts 3 replicas; a hog keeps replica app3's event loop busy by sending it /slow-sync?ms=30
 * directly (3 connections, bypassing the balancer). Meanwhile /fast goes through the balancer
 * (6 connections) under each policy: a warm-up, then measured runs (median of 3; 1 with --quick).
 */
import { defineCommand, intFlag } from '../lib/cli.ts';
import { POLICIES } from '../servers/lib/policies.ts';
import { COMMON_FLAGS, runExperiment, type RunContext } from './lib/experiment.ts';
import { median } from './lib/latency.ts';
import { runLoad, startLoad, type LoadResult } from './lib/load.ts';
import { balancerKind, LB_FLAG, servedByReplica, startBalancer, startReplicas, type BalancerKind } from './lib/topology.ts';
import { caveats, hints, render, shape, type DegradedResult, type PolicyRun } from './report/degraded.ts';

const command = defineCommand({
  usage: 'npx tsx measure/degraded.ts [flags]',
  summary:
    'Keeps one of three replicas busy (its event loop blocked by a stream of 30 ms requests) and measures /fast through the ' +
    'balancer under each policy: throughput, p50, p95, p99, and how many requests each replica got.',
  flags: {
    ...COMMON_FLAGS,
    lb: LB_FLAG,
    runs: { type: 'string', valueName: 'n', description: 'measured runs per policy, median reported (default 3; --quick 1)' },
  },
  epilogue: 'Example: npx tsx measure/degraded.ts --lb nginx',
});

interface Options {
  lb: BalancerKind;
  runs: number;
}

const REPLICAS = 3;
const CONNECTIONS = 6;
const HOG = { route: '/slow-sync?ms=30', connections: 3 };

async function run({ lab, progress, options, quick, machine }: RunContext<Options>): Promise<DegradedResult> {
  const durationS = quick ? 1 : 2;
  progress.step(`starting ${REPLICAS} replicas`);
  const replicas = await startReplicas(lab, REPLICAS);
  const degraded = replicas.at(-1)!;
  // The hog runs for the whole experiment; it is bounded too, and stopped at the end.
  const hogBudgetS = Math.min(120, POLICIES.length * (1 + options.runs * durationS) * 3 + 10);
  const hog = startLoad({ url: `${degraded.url}${HOG.route}`, connections: HOG.connections, durationS: hogBudgetS });
  try {
    const policies: PolicyRun[] = [];
    for (const policy of POLICIES) {
      progress.step(`${policy}: warm-up`);
      const lb = await startBalancer(lab, options.lb, policy, replicas);
      await runLoad({ url: `${lb.url}/fast`, connections: CONNECTIONS, durationS: 1 });
      const before = await servedByReplica(replicas, '/fast');
      const runs: LoadResult[] = [];
      for (let i = 0; i < options.runs; i++) {
        progress.step(`${policy}: /fast with ${CONNECTIONS} connections for ${durationS} s (run ${i + 1} of ${options.runs})`);
        runs.push(await runLoad({ url: `${lb.url}/fast`, connections: CONNECTIONS, durationS }));
      }
      const after = await servedByReplica(replicas, '/fast');
      await lab.stop(lb);
      policies.push({
        policy,
        throughput: median(runs.map((r) => r.throughput)),
        p50: median(runs.map((r) => r.latency.p50)),
        p95: median(runs.map((r) => r.latency.p95)),
        p99: median(runs.map((r) => r.latency.p99)),
        errors: runs.reduce((n, r) => n + r.counts.errors + r.counts.non2xx, 0),
        perReplica: Object.fromEntries(replicas.map((r) => [r.name, after[r.name]! - before[r.name]!])),
        generatorCpu: Math.max(...runs.map((r) => r.generatorCpu)),
      });
    }
    return {
      machine,
      balancer: options.lb,
      degraded: degraded.name,
      hog: HOG,
      load: { connections: CONNECTIONS, durationS, repetitions: options.runs },
      policies,
    };
  } finally {
    hog.stop();
    await hog.result.catch(() => undefined);
  }
}

process.exitCode = await runExperiment({
  name: 'degraded',
  command,
  options: (flags) => ({ lb: balancerKind(flags.lb), runs: intFlag('runs', flags.runs as string | undefined, 1, 9, flags.quick ? 1 : 3) }),
  run,
  report: { render, shape, hints, caveats },
});
