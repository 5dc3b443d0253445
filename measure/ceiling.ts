/**
 * Lesson 1 · the ceiling of one process: how much can one Node process serve, and what happens
 * to latency past that point?
 *
 * Starts one replica and sweeps a closed-loop load of 1, 2, 4, … 64 keep-alive connections over
 * two routes that each take 5 ms: GET /slow-async?ms=5 waits on a timer (I/O-bound: the event
 * loop is free meanwhile) and GET /work?ms=5 computes (CPU-bound: the event loop is busy).
 */
import { defineCommand } from '../lib/cli.ts';
import { COMMON_FLAGS, defineExperiment, runIfEntry, type RunContext } from './lib/experiment.ts';
import { runLoad } from './lib/load.ts';
import { measureSteadily } from './lib/steady.ts';
import { startReplicas } from './lib/topology.ts';
import { caveats, hints, render, shape, type CeilingResult, type RouteSweep } from '../results/ceiling.ts';

const command = defineCommand({
  usage: 'npx tsx measure/ceiling.ts [flags]',
  summary:
    'Sweeps 1 to 64 closed-loop connections against one process, for a route that waits 5 ms (I/O-bound) and one that ' +
    'computes for 5 ms (CPU-bound): throughput, p50/p95/p99, the knee, and Little\'s law checked at every step.',
  flags: { ...COMMON_FLAGS },
  epilogue: 'By hand: npx tsx servers/replica.ts --port 3010, then npx autocannon -c 16 -d 5 "http://127.0.0.1:3010/work?ms=5"',
});

const CONNECTIONS = [1, 2, 4, 8, 16, 32, 64];
const MS = 5;
/**
 * Each step's first half second is not measured: it is the closed loop's start (the first wave of
 * requests starts together, so it waits less than a full turn), and the end of the previous step
 * (requests autocannon had sent when it stopped, which the replica still computes: at most
 * 64 × 5 ms). Both would bias the step's mean latency below Little's law.
 */
const SETTLE_S = 0.5;

async function run({ lab, progress, quick, machine, port }: RunContext<Record<string, never>>): Promise<CeilingResult> {
  const stepS = quick ? 1 : 3;
  progress.step('starting one replica');
  const [replica] = await startReplicas(lab, 1, ['--port', String(port)]);
  const routes: RouteSweep[] = [
    { name: 'io-bound', route: `/slow-async?ms=${MS}`, steps: [] },
    { name: 'cpu-bound', route: `/work?ms=${MS}`, steps: [] },
  ];
  for (const sweep of routes) {
    const url = `${replica!.url}${sweep.route}`;
    progress.step(`${sweep.name}: warming up`);
    await runLoad({ url, connections: 8, durationS: 0.5 });
    for (const connections of CONNECTIONS) {
      const label = `${sweep.name}: ${connections} connection(s) for ${stepS} s`;
      progress.step(label);
      const { value: r } = await measureSteadily(label, () => runLoad({ url, connections, durationS: SETTLE_S + stepS, settleS: SETTLE_S }), { progress });
      const settled = r.settled!;
      sweep.steps.push({
        connections,
        throughput: settled.throughput,
        p50: settled.latency.p50,
        p95: settled.latency.p95,
        p99: settled.latency.p99,
        mean: settled.latency.mean,
        errors: r.counts.errors + r.counts.non2xx,
        generatorCpu: r.generatorCpu,
      });
    }
  }
  return { machine, stepS, ms: MS, routes };
}

export const experiment = defineExperiment({
  name: 'ceiling',
  command,
  options: () => ({}),
  run,
  report: { render, shape, hints, caveats },
});

await runIfEntry(import.meta, experiment);
