/**
 * Lesson 2 · what a proxy in front of a process costs.
 *
 * One replica; GET /fast straight to it, then through the kit's balancer and through nginx (when
 * installed), each with upstream keep-alive on and off. Per configuration: one connection for
 * latency (p50, p99: the cost of one request, without queueing), eight for throughput, and how many
 * connections the replica accepted meanwhile (from its /__replica/stats): with keep-alive a proxy
 * reuses a few, without it opens one per request.
 */
import { defineCommand } from '../lib/cli.ts';
import { findNginx } from '../servers/lib/nginx-config.ts';
import { COMMON_FLAGS, defineExperiment, runIfEntry, type RunContext } from './lib/experiment.ts';
import { runLoad } from './lib/load.ts';
import { probeOk } from './lib/probe.ts';
import { startBalancer, startReplicas, type Replica } from './lib/topology.ts';
import { notShown, hints, render, shape, type ProxyConfig, type ProxyOverheadResult, type ProxyRun } from '../results/proxy-overhead.ts';

const command = defineCommand({
  usage: 'npx tsx measure/proxy-overhead.ts [flags]',
  summary:
    'Sends GET /fast to one replica directly, through the kit\'s balancer and through nginx (when installed), with upstream ' +
    'keep-alive on and off: req/s, p50, p99, and the connections the proxy opened to the replica.',
  flags: { ...COMMON_FLAGS },
  epilogue: 'By hand: npx tsx servers/replica.ts --port 3010 and npx tsx servers/balancer.ts --upstream 127.0.0.1:3010 --keepalive off',
});

const ROUTE = '/fast';
/**
 * Without keep-alive every request leaves a socket in TIME_WAIT (60 s on Linux, 30 s on macOS,
 * whose ephemeral port range holds about 16,000 ports): those runs are bounded in requests too, so
 * a run, or two in a row, can never use up the ports.
 */
const NO_KEEPALIVE_REQUESTS = { latency: 1000, throughput: 3000 };
const LATENCY_CONNECTIONS = 1;
const THROUGHPUT_CONNECTIONS = 8;

/** Connections the replica has accepted so far (this question's own included: it opens one), and its CPU time, µs. */
async function replicaStats(replica: Replica): Promise<{ connections: number; cpuUs: number }> {
  const body = (await probeOk(`${replica.url}/__replica/stats`)).body;
  return { connections: body.connections as number, cpuUs: body.cpuUs as number };
}

async function measure(url: string, replica: Replica, stepS: number, keepAlive: boolean): Promise<Omit<ProxyRun, 'config'>> {
  await runLoad({ url, connections: THROUGHPUT_CONNECTIONS, durationS: 0.5, ...(keepAlive ? {} : { amount: 500 }) }); // warm-up: JIT and pools
  const before = await replicaStats(replica);
  const latency = await runLoad({ url, connections: LATENCY_CONNECTIONS, durationS: stepS, ...(keepAlive ? {} : { amount: NO_KEEPALIVE_REQUESTS.latency }) });
  const throughput = await runLoad({ url, connections: THROUGHPUT_CONNECTIONS, durationS: stepS, ...(keepAlive ? {} : { amount: NO_KEEPALIVE_REQUESTS.throughput }) });
  const after = await replicaStats(replica);
  // The second stats question opened one connection of its own.
  const upstreamConnections = after.connections - before.connections - 1;
  const requests = latency.counts.completed + throughput.counts.completed;
  return {
    throughput: throughput.throughput,
    p50: latency.latency.p50,
    p99: latency.latency.p99,
    requests,
    upstreamConnections,
    replicaCpuUsPerRequest: Math.round(((after.cpuUs - before.cpuUs) / Math.max(requests, 1)) * 10) / 10,
    errors: latency.counts.errors + latency.counts.non2xx + throughput.counts.errors + throughput.counts.non2xx,
  };
}

async function run({ lab, progress, quick, machine, port }: RunContext<Record<string, never>>): Promise<ProxyOverheadResult> {
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
    ...(nginxMissing ? [] : ([{ proxy: 'nginx', keepAlive: true }, { proxy: 'nginx', keepAlive: false }] as ProxyConfig[])),
  ];
  const runs: ProxyRun[] = [];
  for (const config of configs) {
    const label = config.proxy === 'direct' ? 'direct' : `${config.proxy}, upstream keep-alive ${config.keepAlive ? 'on' : 'off'}`;
    progress.step(`${label}: 1 connection, then ${THROUGHPUT_CONNECTIONS}, ${stepS} s each`);
    if (config.proxy === 'direct') {
      runs.push({ config, ...(await measure(`${replica!.url}${ROUTE}`, replica!, stepS, true)) });
      continue;
    }
    // --port is the proxy's, as in lesson 4: the address students send requests to.
    const lb = await startBalancer(lab, config.proxy, 'round-robin', [replica!], port, config.keepAlive);
    runs.push({ config, ...(await measure(`${lb.url}${ROUTE}`, replica!, stepS, config.keepAlive)) });
    await lab.stop(lb);
  }
  return { machine, stepS, route: ROUTE, connections: { latency: LATENCY_CONNECTIONS, throughput: THROUGHPUT_CONNECTIONS }, runs, ...(nginxMissing ? { nginxMissing } : {}) };
}

export const experiment = defineExperiment({
  name: 'proxy-overhead',
  command,
  options: () => ({}),
  run,
  report: { render, shape, hints, notShown },
});

await runIfEntry(import.meta, experiment);
