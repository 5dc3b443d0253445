/**
 * Lesson 1 · the ceiling of one process: how much can one Node process serve, and what happens
 * to latency past that point?
 *
 * Starts one replica and sweeps a closed-loop load of keep-alive connections over two routes that
 * each take 5 ms: GET /slow-async?ms=5 waits on a timer (I/O-bound: the event loop is free
 * meanwhile; 1 to 64 connections) and GET /work?ms=5 computes (CPU-bound: the event loop is busy;
 * 1 to 16). The steps take turns in slices (measure/lib/machine/tally.ts).
 */
import { defineCommand } from '../lib/cli.ts';
import { KitError } from '../lib/errors.ts';
import { COMMON_FLAGS, defineExperiment, runIfEntry, type RunContext } from './lib/harness/experiment.ts';
import { runLoad } from './lib/load/load.ts';
import { runWrk } from './lib/load/wrk.ts';
import type { Progress } from './lib/harness/progress.ts';
import type { CrossCheck } from '../results/ceiling/cross-check.ts';
import { measureSteadily } from './lib/machine/steady.ts';
import { addSlice, newLoadTally, sliceOf, summarizeLoadTally, turnOrder } from './lib/machine/tally.ts';
import { createLatencyHistogram } from '../results/report/latency.ts';
import { startReplicas } from './lib/process/topology.ts';
import { caveats, hints, render, shape, type CeilingResult, type RouteSweep } from '../results/ceiling/report.ts';
import { measures, predictions } from '../results/ceiling/predictions.ts';

const command = defineCommand({
  usage: 'npx tsx measure/ceiling.ts [flags]',
  summary:
    'Sweeps closed-loop connections against one process, 1 to 64 for a route that waits 5 ms (I/O-bound) and 1 to 16 for one that ' +
    "computes for 5 ms (CPU-bound): throughput, p50/p95/p99, the knee, and Little's law checked at every step up to 16.",
  flags: { ...COMMON_FLAGS },
  epilogue:
    'By hand: npx tsx servers/replica.ts --port 3010, then npx autocannon -c 16 -d 5 "http://127.0.0.1:3010/work?ms=5"',
});

/**
 * The I/O-bound route goes to 64 connections, past where the process or the load generator runs
 * out of CPU. The CPU-bound one stops at 16: it is saturated from 1, and its new connections take
 * N²/2 requests' time to be accepted (LoadOptions.settledS), 11 s at 64, longer than a step.
 */
const CONNECTIONS: Record<RouteSweep['name'], number[]> = {
  'io-bound': [1, 2, 4, 8, 16, 32, 64],
  'cpu-bound': [1, 2, 4, 8, 16],
};
const MS = 5;
/**
 * Each step is measured in this many slices, the steps taking turns (ascending, then descending):
 * measured one after another, steal of 0.3-0.4 cores that came and went over a sweep made the
 * CPU-bound route's 1-connection step 140 req/s and its 32-connection one 179, past "flat" (2 runs
 * of 12 on Node 26 here), because the route's throughput is whatever CPU its one thread gets.
 */
const ROUNDS = 2;
/**
 * Each slice leaves out at least this long at its start, and until every connection has had its
 * first answer: the first wave of N requests starts together (it waits less than a full turn),
 * the previous slice's last requests may still run, and new connections are accepted one per
 * event loop iteration. With a fixed 0.5 s instead, 16 connections' mean on the CPU-bound route
 * came out 1.07-1.13x Little's N / throughput (limit 1.15): the last connections' first requests,
 * accepted after up to 0.75 s, were counted with the whole wait.
 */
const SETTLE_S = 0.1;

async function run({ lab, progress, quick, machine, port }: RunContext<Record<string, never>>): Promise<CeilingResult> {
  const stepS = quick ? 1 : 3;
  const sliceS = stepS / ROUNDS;
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
    const connections = CONNECTIONS[sweep.name];
    const tallies = new Map(connections.map((c) => [c, newLoadTally()]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const n of turnOrder(connections, round)) {
        const label = `${sweep.name}: round ${round + 1} of ${ROUNDS}, ${n} connection(s) for ${sliceS} s`;
        progress.step(label);
        // An upper bound only: the run stops sliceS after every connection's first answer.
        const boundS = Math.min(120, SETTLE_S + sliceS + 5 + (3 * MS * n * n) / 2000);
        const { value: slice } = await measureSteadily(
          label,
          async () => {
            const histogram = createLatencyHistogram();
            const r = await runLoad({
              url,
              connections: n,
              durationS: boundS,
              settleS: SETTLE_S,
              settledS: sliceS,
              settledInto: histogram,
            });
            if (r.settled!.completed === 0)
              throw new KitError(
                'KIT_ERR_WAIT_TIMEOUT',
                `${sweep.name}: not every one of ${n} connections was answered within ${boundS.toFixed(1)} s`,
              );
            return sliceOf(r, histogram);
          },
          { progress },
        );
        addSlice(tallies.get(n)!, slice);
      }
    }
    for (const n of connections) {
      const t = tallies.get(n)!;
      const { throughput, latency } = summarizeLoadTally(t);
      sweep.steps.push({
        connections: n,
        throughput,
        p50: latency.p50,
        p95: latency.p95,
        p99: latency.p99,
        mean: latency.mean,
        errors: t.errors,
        generatorCpu: t.generatorCpu,
      });
    }
  }
  return {
    machine,
    stepS,
    rounds: ROUNDS,
    ms: MS,
    routes,
    crossCheck: await crossCheck(replica!.url, quick, progress),
  };
}

/** Connections of the cross-check: the I/O-bound sweep's last step, where a generator runs out of CPU first if either does. */
const CROSS_CHECK_CONNECTIONS = 64;

/** The I/O-bound route at CROSS_CHECK_CONNECTIONS, sent by autocannon and then by wrk, the same time each. */
async function crossCheck(base: string, quick: boolean, progress: Progress): Promise<CrossCheck> {
  const route = `/slow-async?ms=${MS}`;
  const durationS = quick ? 1 : 2;
  const connections = CROSS_CHECK_CONNECTIONS;
  progress.step(`cross-check: GET ${route} at ${connections} connections, autocannon then wrk, ${durationS} s each`);
  const a = await runLoad({ url: base + route, connections, durationS });
  const wrk = await runWrk(base + route, connections, durationS);
  return {
    route,
    connections,
    durationS,
    autocannon: { requestsPerS: a.throughput, p50Ms: a.latency.p50, generatorCpu: a.generatorCpu },
    wrk,
  };
}

export const experiment = defineExperiment({
  name: 'ceiling',
  command,
  options: () => ({}),
  run,
  report: { render, shape, hints, caveats, measures, predictions },
});

await runIfEntry(import.meta, experiment);
