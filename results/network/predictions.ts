/** The network experiment's measures and --predict questions (results/report/measures.ts, predictions.ts). Pure. */
import { measure, type Measure } from '../report/measures.ts';
import type { Question } from '../report/predictions.ts';
import { advantageMs, roundTrips, type NetworkResult } from './report.ts';

/** The round trips a request pays, keep-alive's advantage, loss's tail, the timeout's errors, the hedge's cost, the export's time. */
export function measures(r: NetworkResult): Measure[] {
  const top = Math.max(...r.rtt.map((x) => x.rttMs), 0);
  const five = r.loss.find((x) => x.connections === 'per-request' && x.lossPercent > 1);
  const noRetry = r.timeouts.find((t) => t.retries === 0);
  const honour = r.bandwidth.find((b) => b.backpressure);
  return [
    ...measure(
      'round-trips-per-request',
      'a connection per request: ms added per ms of round trip',
      '×',
      roundTrips(r, 'per-request'),
      { line: 'network  rtt  per-request  round-trips' },
    ),
    ...measure('keep-alive-saves', `keep-alive’s p50 advantage at ${top} ms of round trip`, 'ms', advantageMs(r, top), {
      line: 'network  rtt  keep-alive-advantage',
    }),
    ...measure(
      'p99-under-loss',
      `p99 of a connection per request at ${five?.lossPercent ?? 5} % loss`,
      'ms',
      five?.p99Ms,
      {
        line: `network  loss-${five?.lossPercent ?? 5}%  per-request  p99`,
        threshold: 200,
      },
    ),
    ...measure(
      'errors-timeout-below-rto',
      'keep-alive through loss, giving up after 100 ms with no retry: requests with no answer',
      '%',
      noRetry && (100 * noRetry.errors) / noRetry.requests,
      { line: 'network  timeout-below-rto  no-retry' },
    ),
    ...measure(
      'hedge-extra-load',
      'hedged after the p95: extra requests sent',
      '%',
      r.hedge && (100 * r.hedge.hedges) / r.hedge.requests,
      { line: 'network  hedged  extra-load', threshold: 25 },
    ),
    ...measure(
      'export-time-over-ideal',
      'the export’s time over its size divided by the bandwidth',
      '×',
      honour && honour.ms / ((1000 * honour.bytes) / honour.bytesPerS),
      { line: 'network  bandwidth  export-time' },
    ),
  ];
}

const WHERE = (section: string) => `lessons/12-network.md, "${section}"`;

export const predictions: Question[] = [
  {
    id: 'round-trips-per-request',
    ask: 'Each request opens its own connection, and the round trip to the replica goes from 0 to 5 ms. How much longer does a request take?',
    measure: 'round-trips-per-request',
    choices: [
      { label: 'about 5 ms: one round trip', to: 1.5 },
      { label: 'about 10 ms: two round trips', from: 1.5, to: 2.5 },
      { label: 'about 15 ms or more', from: 2.5 },
    ],
    explain:
      'The handshake (SYN, SYN-ACK) takes a round trip before the request can go, and the request and its answer take another. Keep-alive pays only the second.',
    lesson: WHERE('A round trip per connection'),
  },
  {
    id: 'p99-under-loss',
    ask: 'The link drops 5 % of the packets to the replica. On a link whose round trip is a fraction of a millisecond, what is the p99 of a connection per request?',
    measure: 'p99-under-loss',
    choices: [
      { label: 'a few ms: loss is only a few per cent', to: 20 },
      { label: 'tens of ms', from: 20, to: 200 },
      { label: 'hundreds of ms or a second', from: 200 },
    ],
    explain:
      'TCP waits a retransmission timeout before it sends a lost packet again: at least 200 ms on Linux, and 1 s for a lost SYN. About one request in ten loses one of its packets.',
    lesson: WHERE('Loss makes the tail'),
  },
  {
    id: 'hedge-extra-load',
    ask: 'Through the same loss, the client sends a second request when the first has had no answer after the p95 of a lossless run. How many extra requests does that cost?',
    measure: 'hedge-extra-load',
    choices: [
      { label: 'about 5 to 15 %', to: 25 },
      { label: 'about half again', from: 25, to: 75 },
      { label: 'about twice the load', from: 75 },
    ],
    explain:
      'A hedge goes only when the first attempt is later than the p95: the 5 % that are slowest anyway, and those whose packet was lost.',
    lesson: WHERE('Timeouts against the RTO, and hedged requests'),
  },
];
