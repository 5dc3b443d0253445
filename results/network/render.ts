/** The `network` experiment's tables (lesson 12): one per finding, as a student reads them. Pure. */
import { fmtMs, machineCaption, makeChalk, makeTable, textThenNumbers } from '../report/format.ts';
import { advantageMs, roundTrips, type NetworkResult } from './report.ts';

const NOT_SHOWN = (why: string | undefined) => `not shown: ${why ?? 'not run'} (nftables)`;
const pct = (n: number, of: number) => (of ? `${((100 * n) / of).toFixed(1)} %` : '–');
const conn = (c: string) => (c === 'keep-alive' ? 'keep-alive' : 'a connection per request');
const mib = (b: number) => `${(b / 1024 ** 2).toFixed(b < 1024 ** 2 ? 2 : 1)} MiB`;

function rttTable(r: NetworkResult): string {
  const t = makeTable(['round trip', 'connections', 'p50', 'p99', 'keep-alive saves (p50)'], textThenNumbers(2, 5));
  for (const x of r.rtt) {
    const adv = advantageMs(r, x.rttMs);
    t.push([
      fmtMs(x.rttMs),
      conn(x.connections),
      fmtMs(x.p50Ms),
      fmtMs(x.p99Ms),
      x.connections === 'per-request' && adv !== undefined ? fmtMs(adv) : '',
    ]);
  }
  return t.toString();
}

function lossTable(r: NetworkResult): string {
  const t = makeTable(
    ['loss', 'connections', 'requests', 'p50', 'p99', '≥ 200 ms', '≥ 1 s', 'errors'],
    textThenNumbers(2, 8),
  );
  if (!r.loss.length) return NOT_SHOWN(r.kernelMissing);
  for (const x of r.loss)
    t.push([
      `${x.lossPercent} %`,
      `${conn(x.connections)}, ${x.concurrency} at once`,
      String(x.requests),
      fmtMs(x.p50Ms),
      fmtMs(x.p99Ms),
      `${x.over200Ms} (${pct(x.over200Ms, x.requests)})`,
      `${x.over1s} (${pct(x.over1s, x.requests)})`,
      String(x.errors),
    ]);
  return t.toString();
}

function timeoutTable(r: NetworkResult): string {
  const t = makeTable(
    ['client', 'requests', 'no answer', 'attempts per request', 'p99 of the answered'],
    textThenNumbers(1, 5),
  );
  if (!r.timeouts.length && !r.hedge) return NOT_SHOWN(r.kernelMissing);
  const plain = r.loss.find((x) => x.connections === 'keep-alive' && x.lossPercent === r.hedge?.lossPercent);
  if (plain)
    t.push(['waits as long as it takes', String(plain.requests), String(plain.errors), '1.00', fmtMs(plain.p99Ms)]);
  for (const x of r.timeouts)
    t.push([
      `gives up after ${fmtMs(x.timeoutMs)}, ${x.retries ? 'then one retry' : 'no retry'}`,
      String(x.requests),
      `${x.errors} (${pct(x.errors, x.requests)})`,
      (x.attempts / x.requests).toFixed(2),
      fmtMs(x.p99Ms),
    ]);
  if (r.hedge)
    t.push([
      `hedges after ${fmtMs(r.hedge.afterMs)} (the p95 with no loss)`,
      String(r.hedge.requests),
      String(r.hedge.errors),
      (r.hedge.attempts / r.hedge.requests).toFixed(2),
      fmtMs(r.hedge.p99Ms),
    ]);
  return t.toString();
}

function bandwidthTable(r: NetworkResult): string {
  const t = makeTable(
    ['export', 'size', 'took', 'size ÷ bandwidth', 'event loop busy', 'held in memory, most'],
    textThenNumbers(1, 6),
  );
  for (const b of r.bandwidth)
    t.push([
      b.backpressure ? 'honouring backpressure' : 'ignoring backpressure',
      mib(b.bytes),
      fmtMs(b.ms),
      fmtMs((1000 * b.bytes) / b.bytesPerS),
      `${Math.round(b.loopUtilization * 100)} %`,
      mib(b.queuedMaxBytes),
    ]);
  return t.toString();
}

export function render(r: NetworkResult, color: boolean, caption = machineCaption(r.machine)): string {
  const c = makeChalk(color);
  const loss = r.loss.find((x) => x.lossPercent > 1)?.lossPercent ?? 5;
  const b = r.bandwidth[0];
  const ka = roundTrips(r, 'keep-alive');
  const pr = roundTrips(r, 'per-request');
  return [
    c.bold('Lesson 12 · network: a replica behind a real link'),
    c.dim(
      (r.link === 'namespace'
        ? 'a network namespace across a veth link: loss from nftables, rate from tbf, latency from the toxic proxy'
        : `the toxic proxy alone, on loopback (${r.kernelMissing})`) + ` · ${caption}`,
    ),
    '',
    c.bold('a. Round trips: one request at a time'),
    rttTable(r),
    ka !== undefined && pr !== undefined
      ? c.dim(
          `  each ms of round trip added ${ka.toFixed(2)} ms with keep-alive and ${pr.toFixed(2)} ms with a connection per request`,
        )
      : '',
    '',
    c.bold('b. Loss: eight requests at a time, packets to the replica dropped at random'),
    lossTable(r),
    '',
    c.bold(
      `c and d. Through ${loss} % loss over keep-alive: a timeout under the 200 ms retransmission timeout, and a hedge`,
    ),
    timeoutTable(r),
    '',
    c.bold(
      `e. Bandwidth: lesson 9's export through ${b ? Math.round((b.bytesPerS * 8) / 1e6) : '?'} Mbit/s (${b?.limitedBy === 'tbf' ? 'tbf on the link' : "the proxy's limit"})`,
    ),
    bandwidthTable(r),
    '',
    r.wrongAnswers ? c.red(`${r.wrongAnswers} answers were not the replica's.`) : 'Every answer was the replica’s.',
  ].join('\n');
}
