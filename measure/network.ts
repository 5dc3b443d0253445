/**
 * Lesson 12 · network: what the link between a balancer and its replicas does to requests.
 *
 * Puts a replica (servers/replica.ts) and lesson 9's export server (servers/stages.ts) behind a
 * toxic proxy each (measure/lib/network/path.ts): as root on Linux inside a network namespace whose
 * veth link really drops packets (nftables) and limits the rate (tbf), elsewhere on loopback. Then
 * this process, in the balancer's place, sends bounded batches of requests
 * (measure/lib/network/parts.ts, with the client of requests.ts):
 *   a. one at a time at 0, 1 and 5 ms of round trip, over keep-alive and a connection per request;
 *   b. eight at a time through 0, 1 and 5 % loss: p50, p99, and how many waited a retransmission;
 *   c. through the same 5 %, giving up after 100 ms (under the 200 ms retransmission timeout), with
 *      no retry and with one;
 *   d. through the same 5 %, with a hedge sent after the lossless p95;
 *   e. one large export through a 32 Mbit/s link, honouring backpressure and ignoring it.
 */
import { defineCommand } from '../lib/cli.ts';
import { KitError } from '../lib/errors.ts';
import { COMMON_FLAGS, defineExperiment, runIfEntry, type RunContext } from './lib/harness/experiment.ts';
import { NetworkPath } from './lib/network/path.ts';
import { NetworkParts, type PartSettings } from './lib/network/parts.ts';
import { shape, type NetworkResult } from '../results/network/report.ts';
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

interface Options extends PartSettings {
  useKernel: boolean;
}

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

async function run(ctx: RunContext<Options>): Promise<NetworkResult> {
  const { lab, progress, options: o, machine } = ctx;
  progress.step('starting a replica and an export server, each behind a toxic proxy');
  const path = await NetworkPath.open(lab, o.useKernel);
  progress.step(
    path.kernel
      ? 'the path crosses a veth link into a network namespace: loss (nftables) and bandwidth (tbf) are the kernel’s'
      : `no network namespace (${path.kernelMissing}): the toxic proxy alone, on loopback; the loss rows are not shown`,
  );
  const parts = new NetworkParts(path, o, progress);
  const rtt = await parts.rtt();
  const loss = path.kernel ? await parts.loss() : [];
  const timeouts = path.kernel ? await parts.timeouts() : [];
  const hedge = path.kernel ? await parts.hedge() : undefined;
  const bandwidth = await parts.bandwidth(lab);
  return {
    machine,
    link: path.kernel ? 'namespace' : 'proxy',
    ...(path.kernelMissing ? { kernelMissing: path.kernelMissing } : {}),
    rtt,
    loss,
    timeouts,
    ...(hedge ? { hedge } : {}),
    bandwidth,
    wrongAnswers: parts.wrong,
  };
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
