/**
 * Lesson 6 · rolling restart: replacing every worker of a cluster while it serves.
 *
 * Starts servers/managed-cluster.ts with N workers (3 by default), puts 8 keep-alive connections of load on
 * GET /status, and a second later asks the primary for a rolling restart over IPC. The primary
 * forks a new worker, waits until it listens, then sends the old one SIGTERM; the old one drains.
 * The load stops a second after the last step. Which worker answers is read from /status on fresh
 * connections before and after.
 */
import { performance } from 'node:perf_hooks';
import { defineCommand, intFlag } from '../lib/cli.ts';
import { isEvent, type PrimaryEvent } from '../servers/lib/cluster/messages.ts';
import { COMMON_FLAGS, defineExperiment, runIfEntry, type RunContext } from './lib/harness/experiment.ts';
import { startLoad } from './lib/load/load.ts';
import { probeOk } from './lib/load/probe.ts';
import type { WorkerStatus } from '../servers/contracts.ts';
import { hints, render, shape, type RollingRestartResult } from '../results/rolling-restart/report.ts';
import { measures, predictions } from '../results/rolling-restart/predictions.ts';

const command = defineCommand({
  usage: 'npx tsx measure/rolling-restart.ts [flags]',
  summary:
    'Replaces every worker of a node:cluster server one at a time (each new worker listens before the old one drains) ' +
    'while load runs, and checks that no request failed and that only new workers answer afterwards.',
  flags: {
    ...COMMON_FLAGS,
    workers: { type: 'string', valueName: 'n', description: 'cluster workers (2-8)', default: '3' },
  },
  epilogue: 'By hand: npx tsx servers/managed-cluster.ts, then kill -HUP <primary pid> while a load runs.',
});

interface Options {
  workers: number;
}

const CONNECTIONS = 8;
const ROUTE = '/status';
/** Upper bound on the load's length, s: the restart normally takes well under a second per worker. */
const LOAD_BOUND_S = 60;

const isFailed = isEvent('rolling-restart-failed');
const isStep = isEvent('rolling-restart-step');

/** The worker pids that answer `count` requests, each on a fresh connection. */
async function answeringPids(url: string, count: number): Promise<number[]> {
  const pids = new Set<number>();
  for (let i = 0; i < count; i++) pids.add((await probeOk<WorkerStatus>(`${url}${ROUTE}`)).body.pid);
  return [...pids].sort((a, b) => a - b);
}

async function run({ lab, progress, options, port, machine }: RunContext<Options>): Promise<RollingRestartResult> {
  progress.step(`starting the cluster with ${options.workers} workers`);
  const server = await lab.start({
    server: 'managed-cluster',
    args: ['--port', String(port), '--workers', String(options.workers)],
    ipc: true,
  });
  const pidsBefore = await answeringPids(server.url, 3 * options.workers);

  progress.step(`load: ${CONNECTIONS} connections on ${ROUTE}; rolling restart after 1 s`);
  const started = performance.now();
  const load = startLoad({
    url: `${server.url}${ROUTE}`,
    connections: CONNECTIONS,
    durationS: LOAD_BOUND_S,
    timeline: true,
  });
  const steps: RollingRestartResult['steps'] = [];
  let restartAtS = 0;
  let doneAtS = 0;
  try {
    await new Promise((r) => setTimeout(r, 1000));
    const from = server.messageCount;
    restartAtS = (performance.now() - started) / 1000;
    server.send({ cmd: 'rolling-restart' });
    let last = performance.now();
    for (let i = 0; i < options.workers; i++) {
      const m = await server.waitForMessage(
        (x): x is Extract<PrimaryEvent, { event: 'rolling-restart-step' | 'rolling-restart-failed' }> =>
          isFailed(x) || (isStep(x) && !steps.some((s) => s.old === x.old)),
        20_000,
        from,
      );
      if (m.event === 'rolling-restart-failed') throw new Error(`the rolling restart failed: ${m.reason}`);
      const now = performance.now();
      steps.push({ old: m.old, pid: m.pid, ms: now - last });
      last = now;
      progress.step(`rolling restart: ${steps.length} of ${options.workers} workers replaced`);
    }
    await server.waitForMessage(isEvent('rolling-restart-done'), 20_000, from);
    doneAtS = (performance.now() - started) / 1000;
    await new Promise((r) => setTimeout(r, 1000));
  } finally {
    load.stop();
  }
  const result = await load.result;
  const pidsAfter = await answeringPids(server.url, 3 * options.workers);
  const timeline = (result.timeline ?? []).filter((s) => s.second < Math.floor(result.durationS));
  const duringRestart = timeline
    .filter((s) => s.second >= Math.floor(restartAtS) && s.second <= Math.floor(doneAtS))
    .reduce((n, s) => n + s.completed, 0);
  return {
    machine,
    workers: options.workers,
    load: { connections: CONNECTIONS, route: ROUTE },
    restartAtS,
    doneAtS,
    steps,
    pidsBefore,
    pidsAfter,
    timeline,
    totals: {
      completed: result.counts.completed,
      non2xx: result.counts.non2xx,
      errors: result.counts.errors,
      p99: result.latency.p99,
      max: result.latency.max,
    },
    duringRestart,
  };
}

export const experiment = defineExperiment({
  name: 'rolling-restart',
  command,
  options: (flags) => ({ workers: intFlag('workers', flags.workers, 2, 8, 3) }),
  run,
  report: { render, shape, hints, measures, predictions },
});

await runIfEntry(import.meta, experiment);
