/**
 * Lesson 3 · cluster: several worker processes behind one port.
 *
 * Sends 12 loans, each on a fresh connection (node:cluster spreads connections round robin), 4
 * more (each worker's counter holds only its own share), kills a worker with SIGKILL (the primary
 * replaces it; the new one starts from zero), then sends 30 requests over ONE keep-alive
 * connection (they all reach the same worker: the cluster balances connections, not requests).
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { defineCommand, intFlag } from '../lib/cli.ts';
import { isEvent, type PrimaryEvent } from '../servers/lib/cluster/messages.ts';
import { COMMON_FLAGS, defineExperiment, runIfEntry, type RunContext } from './lib/harness/experiment.ts';
import { probeOk } from './lib/load/probe.ts';
import type { WorkerStatus } from '../servers/contracts.ts';
import { examples, hints, render, shape, type ClusterResult } from '../results/cluster/report.ts';
import { measures, predictions } from '../results/cluster/predictions.ts';

const command = defineCommand({
  usage: 'npx tsx measure/cluster.ts [flags]',
  summary:
    'Starts the cluster loan server and shows how its workers share the work: loans on fresh connections, ' +
    'per-worker counters, a worker killed with SIGKILL and replaced, and one keep-alive connection pinned ' +
    'to one worker.',
  flags: {
    ...COMMON_FLAGS,
    workers: {
      type: 'string',
      valueName: 'n',
      description: 'worker processes, 2-16 (expected-output/cluster.txt holds for any count)',
      default: '3',
    },
  },
  epilogue:
    '--quick changes nothing here: this experiment takes about 2 s as it is.\nExample: npx tsx measure/cluster.ts --shape | diff - expected-output/cluster.txt',
});

interface Options {
  workers: number;
}

/** Loans per worker on fresh connections: the spread is exact for any worker count. */
const FRESH_PER_WORKER = 4;
const MORE = 4;
const KEEP_ALIVE = 30;

const tally = (pids: number[]) =>
  pids.reduce<Record<string, number>>((acc, p) => ((acc[p] = (acc[p] ?? 0) + 1), acc), {});

async function run({ lab, progress, options, port, machine }: RunContext<Options>): Promise<ClusterResult> {
  progress.step(`starting the cluster with ${options.workers} workers`);
  const server = await lab.start({
    server: 'cluster',
    args: ['--port', String(port), '--workers', String(options.workers)],
    ipc: true,
  });

  const fresh = FRESH_PER_WORKER * options.workers;
  progress.step(`${fresh} loans, one per fresh connection`);
  const counters: Record<string, number> = {};
  const loan = async () => {
    const r = await probeOk<WorkerStatus>(`${server.url}/loan`, { method: 'POST' });
    counters[r.body.pid] = r.body.loanCounter;
    return r.body.pid;
  };
  const freshPids: number[] = [];
  for (let i = 0; i < fresh; i++) freshPids.push(await loan());
  progress.step(`${MORE} more loans`);
  for (let i = 0; i < MORE; i++) await loan();

  progress.step('killing one worker with SIGKILL and waiting for its replacement');
  const pidsBefore = Object.keys(counters).map(Number);
  const victim = freshPids[0]!;
  const from = server.messageCount;
  const killedAt = performance.now();
  server.send({ cmd: 'kill-worker', pid: victim });
  const replaced = await server.waitForMessage(
    (m): m is Extract<PrimaryEvent, { event: 'worker-replaced' }> => isEvent('worker-replaced')(m) && m.old === victim,
    20_000,
    from,
  );
  const replacedInMs = performance.now() - killedAt;
  const requestsAfter = 2 * options.workers;
  let answeredAfter = 0;
  let newWorkerCounter: number | undefined;
  for (let i = 0; i < requestsAfter; i++) {
    const r = await probeOk<WorkerStatus>(`${server.url}/status`).catch(() => undefined);
    if (!r) continue;
    answeredAfter++;
    if (r.body.pid === replaced.pid && newWorkerCounter === undefined) newWorkerCounter = r.body.loanCounter;
  }

  progress.step(`${KEEP_ALIVE} requests over one keep-alive connection`);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const keepPids: number[] = [];
  let reusedSocket = 0;
  try {
    for (let i = 0; i < KEEP_ALIVE; i++) {
      const r = await probeOk<WorkerStatus>(`${server.url}/status`, { agent });
      keepPids.push(r.body.pid);
      if (r.reusedSocket) reusedSocket++;
    }
  } finally {
    agent.destroy();
  }
  return {
    machine,
    workers: options.workers,
    fresh: { requests: fresh, byPid: tally(freshPids) },
    counters: { total: fresh + MORE, byPid: counters },
    kill: {
      killedPid: victim,
      newPid: replaced.pid,
      replacedInMs,
      requestsAfter,
      answeredAfter,
      newWorkerCounter,
      pidsBefore,
    },
    keepAlive: { requests: KEEP_ALIVE, byPid: tally(keepPids), reusedSocket },
  };
}

export const experiment = defineExperiment({
  name: 'cluster',
  command,
  options: (flags) => ({ workers: intFlag('workers', flags.workers, 2, 16, 3) }),
  run,
  report: { render, shape, hints, measures, predictions, examples },
});

await runIfEntry(import.meta, experiment);
