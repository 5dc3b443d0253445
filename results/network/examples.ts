/**
 * A network run as this machine measured it (example-run.ts) and, per shape line, a change that
 * fails it: test/unit/report-examples.test.ts checks each fails its own line and no other.
 */
import type { ReportExamples } from '../report/shape.ts';
import type { LossRow, NetworkResult, RttRow } from './report.ts';
import { HEALTHY } from './example-run.ts';

const rtt = (r: NetworkResult, ms: number, c: RttRow['connections']) =>
  r.rtt.find((x) => x.rttMs === ms && x.connections === c)!;
const loss = (r: NetworkResult, percent: number, c: LossRow['connections']) =>
  r.loss.find((x) => x.lossPercent === percent && x.connections === c)!;
const timeout = (r: NetworkResult, retries: 0 | 1) => r.timeouts.find((t) => t.retries === retries)!;
const bw = (r: NetworkResult, backpressure: boolean) => r.bandwidth.find((b) => b.backpressure === backpressure)!;

export const examples: ReportExamples<NetworkResult> = {
  healthy: () => structuredClone(HEALTHY),
  broken: {
    // A proxy that delays one direction only: keep-alive pays half a round trip.
    'network  rtt  keep-alive  round-trips': (r) =>
      void (rtt(r, 5, 'keep-alive').p50Ms = rtt(r, 0, 'keep-alive').p50Ms + 2.5),
    // A connection per request that pays three round trips (a handshake charged twice).
    'network  rtt  per-request  round-trips': (r) =>
      void (rtt(r, 5, 'per-request').p50Ms = rtt(r, 0, 'per-request').p50Ms + 15),
    // At 1 ms the connections per request were slower than at 5 ms: the advantage does not grow with the round trip.
    'network  rtt  keep-alive-advantage': (r) => void (rtt(r, 1, 'per-request').p50Ms = 20),
    // Loss that slows every request (a link whose every packet waits), not a few.
    'network  loss-1%  p50': (r) => void (loss(r, 1, 'per-request').p50Ms = 10),
    // No retransmission wait at all: the rule dropped nothing.
    'network  loss-1%  retransmission-waits': (r) => void (loss(r, 1, 'per-request').over200Ms = 0),
    'network  loss-5%  p50': (r) => void (loss(r, 5, 'per-request').p50Ms = 20),
    // A tail under the retransmission timeout: the lost packets came back sooner than TCP can resend.
    'network  loss-5%  per-request  p99': (r) => void (loss(r, 5, 'per-request').p99Ms = 150),
    'network  loss-5%  keep-alive  p99': (r) => void (loss(r, 5, 'keep-alive').p99Ms = 150),
    // No SYN lost: the rule did not match a connection's first packet.
    'network  loss-5%  per-request  lost-syn': (r) => void (loss(r, 5, 'per-request').over1s = 0),
    // A timeout longer than the retransmission timeout: the lost packets arrive in time.
    'network  timeout-below-rto  no-retry': (r) => void (timeout(r, 0).errors = 0),
    // A retry on the same (dead) connection: it fails as the first did.
    'network  timeout-below-rto  one-retry  errors': (r) => void (timeout(r, 1).errors = 40),
    'network  timeout-below-rto  one-retry  p99': (r) => void (timeout(r, 1).p99Ms = 250),
    // A hedge on the connection whose packet was lost: it waits behind it.
    'network  hedged  p99': (r) => void (r.hedge!.p99Ms = 250),
    // A hedge sent with every request.
    'network  hedged  extra-load': (r) => void (r.hedge!.hedges = r.hedge!.requests),
    // A server that sends slower than the link (a busy loop): twice the time.
    'network  bandwidth  export-time': (r) =>
      void (bw(r, true).ms = (2000 * bw(r, true).bytes) / bw(r, true).bytesPerS),
    'network  bandwidth  event-loop': (r) => void (bw(r, true).loopUtilization = 0.9),
    // An export that holds its whole body although it waits for 'drain'.
    'network  bandwidth  memory': (r) => void (bw(r, true).queuedMaxBytes = 2 * 1024 ** 2),
    'network  answers': (r) => void (r.wrongAnswers = 3),
  },
};
