/**
 * Lesson 12 · network: what the link between a balancer and its replicas does to requests.
 *
 * Puts a replica (servers/replica.ts) and lesson 9's export server (servers/stages.ts) behind a
 * toxic proxy each (measure/lib/network/path.ts): as root on Linux inside a network namespace whose
 * veth link really drops packets (nftables) and limits the rate (tbf), elsewhere on loopback. Then
 * this process, in the balancer's place, sends bounded batches of requests
 * (measure/lib/network/requests.ts):
 *   a. one at a time at 0, 1 and 5 ms of round trip, over keep-alive and a connection per request;
 *   b. eight at a time through 0, 1 and 5 % loss: p50, p99, and how many waited a retransmission;
 *   c. through the same 5 %, giving up after 100 ms (under the 200 ms retransmission timeout), with
 *      no retry and with one;
 *   d. through the same 5 %, with a hedge sent after the lossless p95;
 *   e. one large export through a 32 Mbit/s link, honouring backpressure and ignoring it.
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { defineCommand } from '../lib/cli.ts';
import { KitError } from '../lib/errors.ts';
import { COMMON_FLAGS, defineExperiment, runIfEntry, type RunContext } from './lib/harness/experiment.ts';
import { NetworkPath } from './lib/network/path.ts';
import { percentile, sendRequests, type Connections, type RequestPlan } from './lib/network/requests.ts';
import { monotonicUs } from './lib/load/windows.ts';
import { readLoops } from './lib/profile/loops.ts';
import {
  RTO_MIN_MS,
  SYN_RTO_MS,
  shape,
  type BandwidthRow,
  type LossRow,
  type NetworkResult,
  type RttRow,
  type TimeoutRow,
} from '../results/network/report.ts';
import { render } from '../results/network/render.ts';
import { hints, notShown } from '../results/network/hints.ts';
import { measures, predictions } from '../results/network/predictions.ts';
import { examples } from '../results/network/examples.ts';

const command = defineCommand({
  usage: 'npx tsx measure/network.ts [flags]',
  summary:
    'Lesson 12: puts a replica behind a real link (as root on Linux, a network namespace with nftables loss and a tbf rate limit; elsewhere a toxic proxy on loopback) and measures what round trips, loss, timeouts, hedged requests and bandwidth do to its requests.',
  flags: {
    ...COMMON_FLAGS,
    latency: {
      type: 'string',
      valueName: 'ms',
      description: 'the largest round trip of part a, 0 to 2000 (default 5; parts a also runs 0 and 1)',
    },
    jitter: {
      type: 'string',
      valueName: 'ms',
      description: "part a's round trips vary by up to this much either way, 0 to the latency (default 0)",
    },
    loss: {
      type: 'string',
      valueName: '%',
      description: 'the loss of parts b to d, 0 to 50 per cent (default 5; part b also runs 0 and 1)',
    },
    bandwidth: {
      type: 'string',
      valueName: 'Mbit/s',
      description: "part e's link, above 0 and at most 1000 Mbit/s (default 32)",
    },
    'no-kernel': {
      type: 'boolean',
      description: 'do not make a network namespace even as root: the toxic proxy alone, as without root',
    },
  },
  epilogue:
    'Example: npx tsx measure/network.ts --predict\nAs root on Linux the loss rows are real: sudo make lesson-12',
});

interface Options {
  rtts: number[];
  jitterMs: number;
  lossPercent: number;
  bytesPerS: number;
  useKernel: boolean;
  /** Requests per row of part a, and of parts b to d (the 1 % row sends twice as many: see LossRow). */
  rttRequests: number;
  lossRequests: number;
  exportMb: number;
}

/** Parts b to d send this many requests at once, each loop at most one per GAP_MS (RequestPlan.gapMs). */
const CONCURRENCY = 8;
const GAP_MS = 10;
/** Part c's timeout: under the least retransmission timeout, so that a lost packet outlasts it. */
const TIMEOUT_MS = 100;

/** A number flag within [min, max] (`above`: min itself excluded); KIT_ERR_USAGE naming the flag and its range. */
function numberFlag(name: string, raw: string | undefined, min: number, max: number, fallback: number, above = false) {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  const ok = /^\d+(\.\d+)?$/.test(raw.trim()) && (above ? n > min : n >= min) && n <= max;
  if (!ok)
    throw new KitError(
      'KIT_ERR_USAGE',
      `--${name} is a number ${above ? `above ${min}` : `from ${min}`} to ${max}; got '${raw}'`,
    );
  return n;
}

const isFast = (body: string) => {
  try {
    const j = JSON.parse(body) as { replica?: string; ok?: boolean };
    return j.replica === 'app1' && j.ok === true;
  } catch {
    return false;
  }
};

async function run(ctx: RunContext<Options>): Promise<NetworkResult> {
  const { lab, progress, options: o, machine } = ctx;
  progress.step('starting a replica and an export server, each behind a toxic proxy');
  const path = await NetworkPath.open(lab, o.useKernel);
  progress.step(
    path.kernel
      ? 'the path crosses a veth link into a network namespace: loss (nftables) and bandwidth (tbf) are the kernel’s'
      : `no network namespace (${path.kernelMissing}): the toxic proxy alone, on loopback; the loss rows are not shown`,
  );
  let wrong = 0;
  const send = async (plan: Omit<RequestPlan, 'origin' | 'path'>, ready?: () => Promise<void>) => {
    const t = await sendRequests({ origin: path.replicaOrigin, path: '/fast', ...plan }, isFast, ready);
    wrong += t.wrong;
    return t;
  };

  // a. One request at a time, so that each pays the round trip alone.
  const rtt: RttRow[] = [];
  for (const ms of o.rtts) {
    await path.setToxics(ms, undefined, Math.min(o.jitterMs, ms));
    for (const connections of ['keep-alive', 'per-request'] as Connections[]) {
      progress.step(
        `a. ${o.rttRequests} requests one at a time, ${ms} ms round trip, ${connections.replace('-', ' ')}`,
      );
      const t = await send({ requests: o.rttRequests, concurrency: 1, connections });
      rtt.push({
        rttMs: ms,
        connections,
        requests: o.rttRequests,
        p50Ms: percentile(t.latenciesMs, 50),
        p99Ms: percentile(t.latenciesMs, 99),
      });
    }
  }
  await path.setToxics(0);

  const loss: LossRow[] = [];
  const timeouts: TimeoutRow[] = [];
  let hedge: NetworkResult['hedge'];
  if (path.kernel) {
    // b. Eight at a time through loss; the loss goes on once the connections are open.
    const lossy = (percent: number) => () => path.setLoss(percent);
    const levels = [...new Set([0, 1, o.lossPercent])];
    for (const [percent, connections] of [
      ...levels.map((p) => [p, 'per-request'] as const),
      [0, 'keep-alive'] as const,
      [o.lossPercent, 'keep-alive'] as const,
    ]) {
      // At 1 % about 2 % of requests lose a packet: twice the requests, so that enough of them do.
      const requests = percent === 1 ? 2 * o.lossRequests : o.lossRequests;
      progress.step(
        `b. ${requests} requests, ${CONCURRENCY} at a time, ${percent} % loss, ${connections.replace('-', ' ')}`,
      );
      const t = await send({ requests, concurrency: CONCURRENCY, gapMs: GAP_MS, connections }, lossy(percent));
      await path.setLoss(0);
      loss.push({
        lossPercent: percent,
        connections,
        concurrency: CONCURRENCY,
        requests,
        p50Ms: percentile(t.latenciesMs, 50),
        p99Ms: percentile(t.latenciesMs, 99),
        over200Ms: t.latenciesMs.filter((x) => x >= RTO_MIN_MS).length,
        over1s: t.latenciesMs.filter((x) => x >= SYN_RTO_MS).length,
        errors: t.errors,
      });
    }
    // c. A timeout under the retransmission timeout, with no retry and with one.
    for (const retries of [0, 1] as const) {
      progress.step(
        `c. keep-alive, ${o.lossPercent} % loss, giving up after ${TIMEOUT_MS} ms, ${retries ? 'one retry' : 'no retry'}`,
      );
      // Twice the requests: the errors left after a retry are a few, and need enough to compare.
      const t = await send(
        {
          requests: 2 * o.lossRequests,
          concurrency: CONCURRENCY,
          gapMs: GAP_MS,
          connections: 'keep-alive',
          timeoutMs: TIMEOUT_MS,
          retries,
        },
        lossy(o.lossPercent),
      );
      await path.setLoss(0);
      timeouts.push({
        lossPercent: o.lossPercent,
        timeoutMs: TIMEOUT_MS,
        retries,
        requests: 2 * o.lossRequests,
        errors: t.errors,
        attempts: t.attempts,
        p99Ms: percentile(t.latenciesMs, 99),
      });
    }
    // d. A hedge after the p95 of the same requests with no loss.
    const lossless = await send({
      requests: o.lossRequests,
      concurrency: CONCURRENCY,
      gapMs: GAP_MS,
      connections: 'keep-alive',
    });
    // Node's timers count whole milliseconds and fire up to one late: a delay under 2 ms hedged
    // a third of the requests (a 1.2 ms p95), so the p95 is rounded up to a whole ms, at least 2.
    const afterMs = Math.max(2, Math.ceil(percentile(lossless.latenciesMs, 95)));
    progress.step(`d. keep-alive, ${o.lossPercent} % loss, a hedge after ${afterMs} ms (the p95 with no loss)`);
    const t = await send(
      {
        requests: o.lossRequests,
        concurrency: CONCURRENCY,
        gapMs: GAP_MS,
        connections: 'keep-alive',
        hedgeAfterMs: afterMs,
      },
      lossy(o.lossPercent),
    );
    await path.setLoss(0);
    hedge = {
      lossPercent: o.lossPercent,
      afterMs,
      requests: o.lossRequests,
      hedges: t.hedges,
      attempts: t.attempts,
      p50Ms: percentile(t.latenciesMs, 50),
      p99Ms: percentile(t.latenciesMs, 99),
      errors: t.errors,
    };
  }

  // e. One export through a narrow link.
  const bandwidth: BandwidthRow[] = [];
  await path.setToxics(0, o.bytesPerS);
  await path.setBandwidth(o.bytesPerS);
  for (const backpressure of [true, false]) {
    progress.step(
      `e. a ${backpressure ? o.exportMb : 4 * o.exportMb} MiB export through ${Math.round((o.bytesPerS * 8) / 1e6)} Mbit/s (${path.limitedBy}), ${backpressure ? 'honouring' : 'ignoring'} backpressure`,
    );
    bandwidth.push(await exportThrough(ctx, path, o, backpressure, `net${backpressure ? 'b' : 'i'}`));
  }
  await path.setBandwidth(undefined);
  await path.setToxics(0);

  return {
    machine,
    link: path.kernel ? 'namespace' : 'proxy',
    ...(path.kernelMissing ? { kernelMissing: path.kernelMissing } : {}),
    rtt,
    loss,
    timeouts,
    ...(hedge ? { hedge } : {}),
    bandwidth,
    wrongAnswers: wrong,
  };
}

/** GET /catalog/export through the export server's link: its time, the server's loop, and what it held. */
async function exportThrough(
  ctx: RunContext<Options>,
  path: NetworkPath,
  o: Options,
  backpressure: boolean,
  sid: string,
): Promise<BandwidthRow> {
  // Ignoring backpressure shows only once the kernel's socket buffers are full (about 4 MiB of
  // send buffer here): that export is four times the size.
  const mb = backpressure ? o.exportMb : 4 * o.exportMb;
  const target = `${path.exportOrigin}/catalog/export?mb=${mb}&sid=${sid}${backpressure ? '' : '&ignore-backpressure=1'}`;
  const fromUs = monotonicUs();
  const began = performance.now();
  const bytes = await new Promise<number>((resolve, reject) => {
    http
      .get(target, { agent: false }, (res) => {
        let n = 0;
        res.on('data', (d: Buffer) => (n += d.length));
        res.on('end', () => resolve(n));
        res.on('error', reject);
      })
      .on('error', reject);
  });
  const ms = performance.now() - began;
  const toUs = monotonicUs();
  if (bytes !== mb * 1024 * 1024)
    throw new KitError('KIT_ERR_REQUEST', `the export sent ${bytes} bytes, not ${mb} MiB`);
  const record = await new Promise<{ extra?: { queuedMaxBytes?: number } }>((resolve, reject) => {
    http
      .get(`${path.exportOrigin}/stages/${sid}`, { agent: false }, (res) => {
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve(JSON.parse(body)));
      })
      .on('error', reject);
  });
  const loop = await loopOver(ctx, path.exporter.pid, fromUs, toUs);
  return {
    backpressure,
    bytes,
    bytesPerS: o.bytesPerS,
    limitedBy: path.limitedBy,
    ms,
    loopUtilization: loop?.utilization ?? 0,
    queuedMaxBytes: record.extra?.queuedMaxBytes ?? 0,
  };
}

/**
 * The export server's loop over [fromUs, toUs] (profile/loops.ts): its report writes a line every
 * 250 ms, so this waits (polling, at most 2 s) for the first line after `toUs`, which covers the end.
 */
async function loopOver(ctx: RunContext<Options>, pid: number, fromUs: number, toUs: number) {
  const dir = ctx.lab.loops?.dir;
  if (!dir) return undefined;
  const later = () => readLoops(dir, [{ fromUs: toUs, toUs: Infinity }]).some((l) => l.pid === pid);
  for (let i = 0; i < 40 && !later(); i++) await new Promise((r) => setTimeout(r, 50));
  return readLoops(dir, [{ fromUs, toUs: toUs + 250_000 }]).find((l) => l.pid === pid);
}

export const experiment = defineExperiment({
  name: 'network',
  command,
  options: (flags): Options => {
    const latency = numberFlag('latency', flags.latency, 0, 2000, 5);
    const jitter = numberFlag('jitter', flags.jitter, 0, 2000, 0);
    if (jitter > latency)
      throw new KitError('KIT_ERR_USAGE', `--jitter is at most the latency (${latency} ms); got '${flags.jitter}'`);
    return {
      rtts: [...new Set([0, Math.min(1, latency), latency])],
      jitterMs: jitter,
      lossPercent: numberFlag('loss', flags.loss, 0, 50, 5),
      bytesPerS: (numberFlag('bandwidth', flags.bandwidth, 0, 1000, 32, true) * 1e6) / 8,
      useKernel: !flags['no-kernel'],
      rttRequests: flags.quick ? 30 : 60,
      lossRequests: flags.quick ? 400 : 800,
      exportMb: flags.quick ? 2 : 4,
    };
  },
  run,
  report: { render, shape, hints, notShown, measures, predictions, examples },
});

await runIfEntry(import.meta, experiment);
