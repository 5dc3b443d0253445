/** The `network` experiment's likely causes per line, and why the kernel's lines were not shown. Pure. */
import type { NetworkResult } from './report.ts';

export function notShown(r: NetworkResult): string[] {
  return r.kernelMissing
    ? [
        `the loss, timeout and hedge rows: ${r.kernelMissing} (a network namespace, with nftables to drop packets); the rate limit came from the toxic proxy instead of tbf`,
      ]
    : [];
}

export const hints: Record<string, string> = {
  'network  rtt  keep-alive':
    'over keep-alive a request pays one round trip: more means the proxy held chunks longer than its setting (a busy machine delays its timers)',
  'network  rtt  per-request':
    'a new connection waits one round trip for its handshake before the request goes: did each request really open its own connection (agent: false)?',
  'network  rtt  keep-alive-advantage':
    'the handshake costs a round trip, so keep-alive saves more the longer it is; a flat advantage means both kinds paid the same number of round trips',
  'network  loss-1%':
    'a lost packet waits for TCP to send it again: at least 200 ms on Linux, 1 s for a SYN; p50 stays put because most requests lose nothing',
  'network  loss-5%':
    'a lost packet waits for TCP to send it again: at least 200 ms on Linux, 1 s for a SYN; more connections do not help, each request can lose its own',
  'network  timeout-below-rto':
    'a timeout shorter than the retransmission timeout gives up on a request whose packet was only late; a retry on another connection usually gets through',
  'network  hedged':
    'a hedge goes on another connection once the first attempt is later than the p95: it costs about 5 % more requests and skips a lost packet',
  'network  bandwidth':
    'a narrow link sets the transfer time, not the server: with backpressure the server waits (idle) for the socket, and holds a chunk or two; ignoring it, it holds what the link has not taken',
  'network  answers': 'an answer that is not the replica’s JSON: a proxy that reordered or dropped bytes',
};
