/**
 * Lesson 2 · what a proxy in front of a process costs.
 *
 * One replica; GET /fast straight to it, then through the kit's balancer and through nginx (when
 * installed), each with upstream keep-alive on and off. Per configuration: one connection for
 * latency (p50, p99: the cost of one request, without queueing), eight for throughput, and how many
 * connections the replica accepted meanwhile (from its /__replica/stats): with keep-alive a proxy
 * reuses a few, without it opens one per request. The configurations take turns in rounds
 * (ROUNDS), so a slow stretch of the machine weighs on all of them alike.
 */
import { defineCommand } from '../lib/cli.ts';
import { findNginx } from '../servers/lib/balancer/nginx-config.ts';
import { COMMON_FLAGS, defineExperiment, runIfEntry, type RunContext } from './lib/harness/experiment.ts';
import { runLoad } from './lib/load/load.ts';
import { measureSteadily } from './lib/machine/steady.ts';
import { createLatencyHistogram, summarize, type LatencyHistogram } from '../results/report/latency.ts';
import { probeOk } from './lib/load/probe.ts';
import type { ReplicaStats } from '../servers/contracts.ts';
import { startBalancer, startReplicas, type Replica } from './lib/process/topology.ts';
import type { Lab } from './lib/process/lab.ts';
import type { Progress } from './lib/harness/progress.ts';
import {
  notShown,
  hints,
  render,
  shape,
  type ProxyConfig,
  type ProxyOverheadResult,
  type ProxyRun,
} from '../results/proxy-overhead/report.ts';
import { measures, predictions } from '../results/proxy-overhead/predictions.ts';

const command = defineCommand({
  usage: 'npx tsx measure/proxy-overhead.ts [flags]',
  summary:
    "Sends GET /fast to one replica directly, through the kit's balancer and through nginx (when installed), with upstream " +
    'keep-alive on and off: req/s, p50, p99, and the connections the proxy opened to the replica.',
  flags: { ...COMMON_FLAGS },
  epilogue:
    'By hand: npx tsx servers/replica.ts --port 3010 and npx tsx servers/balancer.ts --upstream 127.0.0.1:3010 --keepalive off',
});

const ROUTE = '/fast';
/**
 * Without keep-alive every request leaves a socket in TIME_WAIT (60 s on Linux, 30 s on macOS,
 * whose ephemeral port range holds about 16,000 ports): those runs are bounded in requests too
 * (with their warm-ups, 12,000 connections a run), so a run can never use up the ports. The
 * replica closes first and holds most of them on its own port: after 300 requests through the
 * kit's balancer with --keepalive off, 284 of the 300 new TIME_WAIT sockets were the replica's (ss -tan).
 */
const NO_KEEPALIVE_REQUESTS = { latency: 1000, throughput: 3000 };
/**
 * Each path's warm-up before the rounds: the kit's balancer is JavaScript, and until V8 has
 * optimized its request path it spends more CPU per request. On a slow 2-core virtual machine
 * (--quick, 20 runs each on Node 20 and 22), after 0.5 s of warm-up its keep-alive p50 was
 * 0.85-2.0 ms and its throughput 710-1,660 req/s, no better than without keep-alive in 5 of the
 * Node 20 runs; after 2 s, 0.53-1.54 ms and 990-2,370 req/s, and keep-alive off was 0.43-0.78 of
 * it in all 40. 4 s gained nothing more. The p50 still varies from machine to machine: the shape
 * compares it with the direct p50 (results/proxy-overhead/report.ts). Without keep-alive the warm-up is
 * bounded in requests too (see NO_KEEPALIVE_REQUESTS).
 */
const WARM_UP = { seconds: 2, requestsWithoutKeepAlive: 2000 };
const LATENCY_CONNECTIONS = 1;
const THROUGHPUT_CONNECTIONS = 8;

/**
 * Each configuration's loads are split into this many rounds, the configurations taking turns in
 * a rotated order. The host's wake-up latency for this VM's cores (its steal) rose and fell over
 * tens of seconds here: run one configuration after another, the one that ran during such a
 * stretch looked like the slow one (the kit's balancer without keep-alive came out no slower than
 * with it in 2 of 6 runs); taking turns, every configuration meets the same stretches.
 */
const ROUNDS = 3;

/** Connections the replica has accepted so far (this question's own included: it opens one), and its CPU time, µs. */
async function replicaStats(replica: Replica): Promise<{ connections: number; cpuUs: number }> {
  const body = (await probeOk<ReplicaStats>(`${replica.url}/__replica/stats`)).body;
  return { connections: body.connections, cpuUs: body.cpuUs };
}

/** What one configuration's loads in one round measured. */
interface Slice {
  latency: LatencyHistogram;
  /** Throughput load: completed responses and the seconds it ran. */
  completed: number;
  seconds: number;
  requests: number;
  upstreamConnections: number;
  cpuUs: number;
  errors: number;
}

interface Target {
  config: ProxyConfig;
  url: string;
  label: string;
}

/** One round's share of a configuration's two loads (latency at one connection, then throughput). */
async function measureSlice(t: Target, replica: Replica, sliceS: number): Promise<Slice> {
  const bounded = (n: number) => (t.config.keepAlive ? {} : { amount: Math.ceil(n / ROUNDS) });
  const histogram = createLatencyHistogram();
  const before = await replicaStats(replica);
  const latency = await runLoad({
    url: t.url,
    connections: LATENCY_CONNECTIONS,
    durationS: sliceS,
    settleS: 0,
    settledInto: histogram,
    ...bounded(NO_KEEPALIVE_REQUESTS.latency),
  });
  const throughput = await runLoad({
    url: t.url,
    connections: THROUGHPUT_CONNECTIONS,
    durationS: sliceS,
    ...bounded(NO_KEEPALIVE_REQUESTS.throughput),
  });
  const after = await replicaStats(replica);
  return {
    latency: histogram,
    completed: throughput.counts.completed,
    seconds: throughput.durationS,
    requests: latency.counts.completed + throughput.counts.completed,
    // The second stats question opened one connection of its own.
    upstreamConnections: after.connections - before.connections - 1,
    cpuUs: after.cpuUs - before.cpuUs,
    errors: latency.counts.errors + latency.counts.non2xx + throughput.counts.errors + throughput.counts.non2xx,
  };
}

/** A configuration's slices from every round, as the Result's run. */
function merge(config: ProxyConfig, slices: Slice[]): ProxyRun {
  const histogram = createLatencyHistogram();
  for (const s of slices) histogram.add(s.latency);
  const sum = (f: (s: Slice) => number) => slices.reduce((n, s) => n + f(s), 0);
  const latency = summarize(histogram);
  const requests = sum((s) => s.requests);
  return {
    config,
    throughput:
      Math.round(
        (sum((s) => s.completed) /
          Math.max(
            sum((s) => s.seconds),
            0.001,
          )) *
          10,
      ) / 10,
    p50: latency.p50,
    p99: latency.p99,
    requests,
    upstreamConnections: sum((s) => s.upstreamConnections),
    replicaCpuUsPerRequest: Math.round((sum((s) => s.cpuUs) / Math.max(requests, 1)) * 10) / 10,
    errors: sum((s) => s.errors),
  };
}

/**
 * Starts a proxy in front of `replica` for each configuration (none for direct) and warms each
 * path up. Every proxy runs for the whole experiment, so the rounds can take turns; --port is the
 * first one's (the kit's balancer with keep-alive), the address a student would send requests to.
 */
async function startTargets(
  lab: Lab,
  progress: Progress,
  replica: Replica,
  configs: ProxyConfig[],
  port: number,
): Promise<Target[]> {
  const targets: Target[] = [];
  for (const config of configs) {
    const label =
      config.proxy === 'direct' ? 'direct' : `${config.proxy}, upstream keep-alive ${config.keepAlive ? 'on' : 'off'}`;
    const url =
      config.proxy === 'direct'
        ? replica.url
        : (
            await startBalancer(
              lab,
              config.proxy,
              'round-robin',
              [replica],
              targets.length === 1 ? port : 0,
              config.keepAlive,
            )
          ).url;
    progress.step(`${label}: warming up`);
    await runLoad({
      url: `${url}${ROUTE}`,
      connections: THROUGHPUT_CONNECTIONS,
      durationS: WARM_UP.seconds,
      ...(config.keepAlive ? {} : { amount: WARM_UP.requestsWithoutKeepAlive }),
    });
    targets.push({ config, url: `${url}${ROUTE}`, label });
  }
  return targets;
}

async function run({
  lab,
  progress,
  quick,
  machine,
  port,
}: RunContext<Record<string, never>>): Promise<ProxyOverheadResult> {
  const stepS = quick ? 1 : 3;
  progress.step('starting one replica');
  const [replica] = await startReplicas(lab, 1);
  let nginxMissing: string | undefined;
  try {
    findNginx();
  } catch (err) {
    nginxMissing = (err as Error).message;
  }
  const configs: ProxyConfig[] = [
    { proxy: 'direct', keepAlive: true },
    { proxy: 'builtin', keepAlive: true },
    { proxy: 'builtin', keepAlive: false },
    ...(nginxMissing
      ? []
      : ([
          { proxy: 'nginx', keepAlive: true },
          { proxy: 'nginx', keepAlive: false },
        ] as ProxyConfig[])),
  ];
  const targets = await startTargets(lab, progress, replica!, configs, port);
  const slices: Slice[][] = targets.map(() => []);
  for (let round = 0; round < ROUNDS; round++) {
    const label = `round ${round + 1} of ${ROUNDS}: each path, 1 connection then ${THROUGHPUT_CONNECTIONS}, ${(stepS / ROUNDS).toFixed(2)} s each`;
    progress.step(label);
    const order = targets.map((_, i) => (i + round) % targets.length);
    const { value } = await measureSteadily(
      label,
      async () => {
        const out: Slice[] = [];
        for (const i of order) out[i] = await measureSlice(targets[i]!, replica!, stepS / ROUNDS);
        return out;
      },
      { progress },
    );
    value.forEach((s, i) => slices[i]!.push(s));
  }
  const runs = targets.map((t, i) => merge(t.config, slices[i]!));
  return {
    machine,
    stepS,
    route: ROUTE,
    connections: { latency: LATENCY_CONNECTIONS, throughput: THROUGHPUT_CONNECTIONS },
    runs,
    ...(nginxMissing ? { nginxMissing } : {}),
  };
}

export const experiment = defineExperiment({
  name: 'proxy-overhead',
  command,
  options: () => ({}),
  run,
  report: { render, shape, hints, notShown, measures, predictions },
});

await runIfEntry(import.meta, experiment);
