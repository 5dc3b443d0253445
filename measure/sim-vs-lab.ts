/**
 * Lesson 4 · sim-vs-lab: the degraded-replica experiment run live, then simulated with the service
 * times measured in the same run, side by side.
 *
 * Live: 3 replicas, a hog blocking app3's event loop (/stall?ms=30 × 3 connections), /fast through
 * the balancer under each policy (measure/lib/load/degraded-run.ts, as `degraded` does), in interleaved
 * rounds that also measure the path when nothing is blocked: /fast through the same balancer to
 * app1 and app2 only, with the experiment's 6 connections. After the rounds, with the hog still
 * running: /fast straight to app1 over one connection (the replica's service time). The simulation
 * (sim/scenarios/degraded.ts) draws its service times from that, and models the path outside the
 * replicas as one first-come-first-served queue with rare stalls, fitted so that the model's
 * healthy path shows the throughput, p50 and p95 the lab's path did (fitPath).
 *
 * Always through the kit's own balancer, whose code the model runs, even under
 * `LB=nginx make lesson-4`: nginx balances and handles upstream connections with its own code,
 * which the model does not run (with half-second slices its round robin p95 was 460-570 ms here,
 * against the model's 155 ms; lessons/04-where-requests-go.md, experiment 3).
 */
import { performance } from 'node:perf_hooks';
import { defineCommand, intFlag } from '../lib/cli.ts';
import { KitError } from '../lib/errors.ts';
import { COMMON_FLAGS, defineExperiment, runIfEntry, type RunContext } from './lib/harness/experiment.ts';
import { CONNECTIONS, HOG_MS, ROUNDS, runDegraded, type DegradedOptions } from './lib/load/degraded-run.ts';
import { runLoad } from './lib/load/load.ts';
import { probeOk } from './lib/load/probe.ts';
import type { ReplicaStats } from '../servers/contracts.ts';
import type { Replica } from './lib/process/topology.ts';
import { caveats, hints, render, shape, type Calibration, type SimVsLabResult } from '../results/sim-vs-lab/report.ts';
import { measures, predictions } from '../results/sim-vs-lab/predictions.ts';
import type { Dist } from '../sim/dist.ts';
import { DEGRADED_DEFAULTS, fitPath, simulateDegraded } from '../sim/scenarios/degraded.ts';

const command = defineCommand({
  usage: 'npx tsx measure/sim-vs-lab.ts [flags]',
  summary:
    'Runs the degraded-replica experiment live, measures the service times it saw, simulates the same scenario with them, and prints both side by side: ' +
    "do the lab and the model order the policies the same way, and does the model predict round robin's p95 behind the blocked replica?",
  flags: {
    ...COMMON_FLAGS,
    runs: {
      type: 'string',
      valueName: 'n',
      description: `rounds: each policy (and the path) is measured once per round, interleaved (default ${ROUNDS.full}; --quick ${ROUNDS.quick})`,
    },
    seed: { type: 'string', valueName: 'n', description: "the simulation's random seed", default: '1' },
    loop: {
      type: 'string',
      valueName: 'turns|fifo',
      description:
        'how the simulated event loops order waiting requests: in turns as Node does, or first come, first served',
      default: 'turns',
    },
  },
  epilogue:
    'Example: npx tsx measure/sim-vs-lab.ts --quick\nThe simulation alone: npx tsx sim/run.ts --scenario degraded',
});

interface Options extends DegradedOptions {
  seed: number;
  loop: 'turns' | 'fifo';
}

const QUANTILES = 1000;
const round3 = (x: number) => Math.round(x * 1000) / 1000;

async function run(ctx: RunContext<Options>): Promise<SimVsLabResult> {
  const { progress, options } = ctx;
  const calibrate = async (replicas: Replica[]) => {
    progress.step('calibration: /fast straight to app1 over 1 connection');
    const stats = async () => (await probeOk<ReplicaStats>(`${replicas[0]!.url}/__replica/stats`)).body;
    const before = await stats();
    const load = await runLoad({ url: `${replicas[0]!.url}/fast`, connections: 1, durationS: 1, quantiles: QUANTILES });
    const after = await stats();
    const served = (after.served['/fast'] ?? 0) - (before.served['/fast'] ?? 0);
    return { load, replicaCpuMs: served > 0 ? (after.cpuUs - before.cpuUs) / 1000 / served : undefined };
  };
  const { result: labResult, path, calibration } = await runDegraded(ctx, { path: true, calibrate });
  const direct = calibration!.load;
  progress.step('simulating the same scenario with the measured service times');
  const began = performance.now();
  // A request's time on a replica: the shape of the direct round trip, scaled to the replica's own
  // CPU per request. The round trip also holds the load generator's and the kernel's time, which
  // the model puts in the path queue (measured here: a 0.12-0.38 ms round trip, 0.05-0.1 ms of it the replica's).
  const directMean = direct.quantilesMs!.reduce((a, b) => a + b, 0) / direct.quantilesMs!.length;
  const scale =
    calibration!.replicaCpuMs !== undefined && calibration!.replicaCpuMs < directMean
      ? calibration!.replicaCpuMs / directMean
      : 1;
  const fast: Dist = { kind: 'empirical', valuesMs: direct.quantilesMs!.map((ms) => ms * scale) };
  const scenario = { seed: options.seed, loop: options.loop };
  // The path outside the replicas as a queue, not a delay: the balancer, the load generator and
  // the kernel share the cores, so with some connections stuck on the blocked replica the rest get
  // through sooner. It is fitted so the model's healthy path shows what the lab's did: throughput, p50, p95.
  const fit = fitPath(
    fast,
    { throughput: path!.throughput, p50: path!.latency.p50, p95: path!.latency.p95 },
    CONNECTIONS,
    scenario,
  );
  const { result: simResult, sims } = simulateDegraded(
    { ...DEGRADED_DEFAULTS, fast, ...(fit.queue ? { pathQueue: fit.queue } : {}) },
    scenario,
  );
  const simWallMs = performance.now() - began;
  const cal: Calibration = {
    direct: { p50: direct.latency.p50, p95: direct.latency.p95, samples: direct.counts.completed },
    replicaCpuMs: round3(directMean * scale),
    path: { p50: path!.latency.p50, p95: path!.latency.p95, throughput: path!.throughput, connections: CONNECTIONS },
    ...(fit.queue
      ? {
          pathQueue: {
            meanMs: round3(fit.meanMs),
            stallShare: round3(fit.stallShare),
            stallMs: round3(fit.stallMs),
            fitted: fit.fitted,
          },
        }
      : {}),
    hogMs: HOG_MS,
  };
  return {
    machine: ctx.machine,
    lab: labResult,
    sim: { ...simResult, balancer: 'the simulated balancer' },
    calibration: cal,
    seed: options.seed,
    loop: options.loop,
    simRequests: sims.reduce((n, s) => n + s.counts.sent, 0),
    simWallMs,
  };
}

export const experiment = defineExperiment({
  name: 'sim-vs-lab',
  command,
  options: (flags) => {
    const loop = String(flags.loop);
    if (loop !== 'turns' && loop !== 'fifo')
      throw new KitError('KIT_ERR_USAGE', `--loop is turns or fifo; got '${loop}'`);
    return {
      // Always the kit's balancer: the model runs its code (policies.ts, choose.ts, failover.ts).
      // nginx balances with its own code, which the model does not run; LB=nginx is ignored here.
      lb: 'builtin' as const,
      runs: intFlag('runs', flags.runs, 1, 20, flags.quick ? ROUNDS.quick : ROUNDS.full),
      hog: 'stall' as const,
      twoChoices: 'distinct' as const,
      seed: intFlag('seed', flags.seed, 0, 2 ** 31 - 1, 1),
      loop: loop as Options['loop'],
    };
  },
  run,
  report: { render, shape, hints, caveats, measures, predictions },
});

await runIfEntry(import.meta, experiment);
