/**
 * Lesson 4 · degraded: one slow replica, four policies.
 *
 * Starts 3 replicas; a hog keeps replica app3's event loop blocked by sending it /stall?ms=30
 * directly (3 connections, bypassing the balancer; --hog busy sends /slow-sync?ms=30 instead). Meanwhile /fast goes through the balancer
 * (6 connections) under each policy: a warm-up, then measured runs (median of 3; 1 with --quick).
 */
import { defineCommand, intFlag } from '../lib/cli.ts';
import { KitError } from '../lib/errors.ts';
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
    hog: { type: 'string', valueName: 'stall|busy', description: 'block app3 by sleeping (stall) or by burning CPU (busy)', default: 'stall' },
  },
  epilogue: 'Example: npx tsx measure/degraded.ts --lb nginx',
});

interface Options {
  lb: BalancerKind;
  runs: number;
  hog: keyof typeof HOGS;
}

const REPLICAS = 3;
const CONNECTIONS = 6;
/**
 * How the hog blocks app3's event loop, 30 ms per request: `stall` sleeps the thread (no CPU),
 * `busy` busy-waits (a full core). The default is stall: on a 2-core machine a busy-waiting hog
 * takes a whole core from the balancer, the load generator and the healthy replicas, and measured
 * here that lifted the healthy path's p95 to 8-19 ms through the built-in balancer, within about
 * 10x of the blocked replica's. The lesson is the blocked event loop; --hog busy shows the rest.
 */
const HOGS = { stall: '/stall?ms=30', busy: '/slow-sync?ms=30' } as const;
const HOG_CONNECTIONS = 3;

async function run({ lab, progress, options, quick, machine, port }: RunContext<Options>): Promise<DegradedResult> {
  const durationS = quick ? 1 : 2;
  progress.step(`starting ${REPLICAS} replicas`);
  const replicas = await startReplicas(lab, REPLICAS);
  const degraded = replicas.at(-1)!;
  // The hog runs for the whole experiment; it is bounded too, and stopped at the end.
  const hogBudgetS = Math.min(120, POLICIES.length * (1 + options.runs * durationS) * 3 + 10);
  const hogRoute = HOGS[options.hog];
  const hog = startLoad({ url: `${degraded.url}${hogRoute}`, connections: HOG_CONNECTIONS, durationS: hogBudgetS });
  try {
    const policies: PolicyRun[] = [];
    for (const policy of POLICIES) {
      progress.step(`${policy}: warm-up`);
      const lb = await startBalancer(lab, options.lb, policy, replicas, port);
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
      hog: { route: hogRoute, connections: HOG_CONNECTIONS },
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
  options: (flags) => {
    const hog = String(flags.hog);
    if (hog !== 'stall' && hog !== 'busy') throw new KitError('KIT_ERR_USAGE', `--hog is stall or busy; got '${hog}'`);
    return { lb: balancerKind(flags.lb), runs: intFlag('runs', flags.runs as string | undefined, 1, 9, flags.quick ? 1 : 3), hog };
  },
  run,
  report: { render, shape, hints, caveats },
});
