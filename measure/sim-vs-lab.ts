/**
 * Lesson 4 · sim-vs-lab: the degraded-replica experiment run live, then simulated with the service
 * times measured in the same run, side by side.
 *
 * Live: 3 replicas, a hog blocking app3's event loop (/stall?ms=30 × 3 connections), /fast through
 * the balancer under each policy (measure/lib/degraded-run.ts, as `degraded` does). After the
 * policies, with the hog still running, two calibration loads: /fast straight to app1 over one
 * connection (the replica's service time) and /fast through the balancer to app1 and app2 with the
 * experiment's 6 connections (the whole path when nothing is blocked). The simulation
 * (sim/scenarios/degraded.ts) draws its service times from the first and, as a delay outside the
 * replicas, from the second less the first's median.
 *
 * Always through the kit's own balancer, whose code the model runs, even under
 * `LB=nginx make lesson-4`. (Through nginx, measured here, round robin's p95 was 280-470 ms against
 * the model's 155 ms and the built-in balancer's 155-190 ms: nginx balances and handles upstream
 * connections with its own code, which the model does not run.)
 */
import { performance } from 'node:perf_hooks';
import { defineCommand, intFlag } from '../lib/cli.ts';
import { KitError } from '../lib/errors.ts';
import { COMMON_FLAGS, runExperiment, type RunContext } from './lib/experiment.ts';
import { HOG_MS, HOG_CONNECTIONS, CONNECTIONS, runDegraded, type DegradedOptions } from './lib/degraded-run.ts';
import { runLoad } from './lib/load.ts';
import { startBalancer, type Replica } from './lib/topology.ts';
import { caveats, hints, render, shape, type Calibration, type SimVsLabResult } from './report/sim-vs-lab.ts';
import { fixed } from '../sim/dist.ts';
import { DEGRADED_DEFAULTS, simulateDegraded } from '../sim/scenarios/degraded.ts';

const command = defineCommand({
  usage: 'npx tsx measure/sim-vs-lab.ts [flags]',
  summary:
    'Runs the degraded-replica experiment live, measures the service times it saw, simulates the same scenario with them, and prints both side by side: ' +
    'do the lab and the model order the policies the same way, and how far apart are their round-robin/least-connections p95 ratios?',
  flags: {
    ...COMMON_FLAGS,
    runs: { type: 'string', valueName: 'n', description: 'measured lab runs per policy, median reported (default 3; --quick 1)' },
    seed: { type: 'string', valueName: 'n', description: 'the simulation\'s random seed', default: '1' },
    loop: { type: 'string', valueName: 'turns|fifo', description: 'how the simulated event loops order waiting requests: in turns as Node does, or first come, first served', default: 'turns' },
  },
  epilogue: 'Example: npx tsx measure/sim-vs-lab.ts --quick\nThe simulation alone: npx tsx sim/run.ts --scenario degraded',
});

interface Options extends DegradedOptions {
  seed: number;
  loop: 'turns' | 'fifo';
}

const QUANTILES = 1000;

async function run(ctx: RunContext<Options>): Promise<SimVsLabResult> {
  const { lab, progress, options, quick, port } = ctx;
  const calibrate = async (replicas: Replica[]) => {
    progress.step('calibration: /fast straight to app1 over 1 connection');
    const direct = await runLoad({ url: `${replicas[0]!.url}/fast`, connections: 1, durationS: 1, quantiles: QUANTILES });
    progress.step(`calibration: /fast through the balancer to app1 and app2 with ${CONNECTIONS} connections`);
    const lb = await startBalancer(lab, options.lb, 'least-connections', replicas.slice(0, 2), port);
    // Warmed up and measured as each policy is below: a fresh balancer is slower until its JIT
    // has compiled the hot path, and a path measured cold made the model's p95 too high.
    await runLoad({ url: `${lb.url}/fast`, connections: CONNECTIONS, durationS: 1 });
    const path = await runLoad({ url: `${lb.url}/fast`, connections: CONNECTIONS, durationS: quick ? 1 : 2, quantiles: QUANTILES });
    await lab.stop(lb);
    return { direct, path };
  };
  const { result: labResult, calibration } = await runDegraded(ctx, calibrate);
  const { direct, path } = calibration!;
  progress.step('simulating the same scenario with the measured service times');
  const began = performance.now();
  const outside = path.quantilesMs!.map((ms) => Math.max(0, ms - direct.latency.p50));
  const { result: simResult, sims } = simulateDegraded(
    {
      ...DEGRADED_DEFAULTS,
      fast: { kind: 'empirical', valuesMs: direct.quantilesMs! },
      pathDelay: { kind: 'empirical', valuesMs: outside },
      hog: fixed(HOG_MS),
      connections: CONNECTIONS,
      hogConnections: HOG_CONNECTIONS,
    },
    { seed: options.seed, loop: options.loop },
  );
  const simWallMs = performance.now() - began;
  const cal: Calibration = {
    direct: { p50: direct.latency.p50, p95: direct.latency.p95, samples: direct.counts.completed },
    path: { p50: path.latency.p50, p95: path.latency.p95, throughput: path.throughput, connections: CONNECTIONS },
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

process.exitCode = await runExperiment({
  name: 'sim-vs-lab',
  command,
  options: (flags) => {
    const loop = String(flags.loop);
    if (loop !== 'turns' && loop !== 'fifo') throw new KitError('KIT_ERR_USAGE', `--loop is turns or fifo; got '${loop}'`);
    return {
      // Always the kit's balancer: the model runs its code (policies.ts, choose.ts, failover.ts).
      // nginx balances with its own code, which the model does not run; LB=nginx is ignored here.
      lb: 'builtin' as const,
      runs: intFlag('runs', flags.runs as string | undefined, 1, 9, flags.quick ? 1 : 3),
      hog: 'stall' as const,
      seed: intFlag('seed', flags.seed as string | undefined, 0, 2 ** 31 - 1, 1),
      loop: loop as Options['loop'],
    };
  },
  run,
  report: { render, shape, hints, caveats },
});
