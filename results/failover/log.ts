/**
 * The failover experiment's second witness: the balancer's own access log (servers/lib/balancer/access-log.ts,
 * written by nginx and by the kit's balancer alike). It counts the requests tried on more than one
 * replica and those of a second or more, which the clients' counts must equal, and it shows what a
 * client never sees: a retried request's tries, each with its replica, status and time. Pure functions.
 */
import { parseAccessLine } from '../../servers/lib/balancer/access-log.ts';
import { line } from '../report/shape.ts';

/** What the balancer's access log said of one run's load. */
export interface RunLog {
  /** Requests whose answer reached the client. */
  answered: number;
  /** Of those, tried on more than one replica. */
  retried: number;
  /** Of those, with a request time of the slow threshold or more. */
  slow: number;
  /** The slowest retried request's line, as logged. */
  sample?: string;
  /** Replica names by address, to read the sample with. */
  names: Record<string, string>;
  /** Each retried request's first try, s. */
  firstTriesS?: number[];
}

/** Retried requests whose first try ran out the connect timeout, and those that ran out the response timeout (each within TRY_MATCH). */
export function timedOutTries(
  firstTriesS: readonly number[],
  t: { connectTimeoutMs: number; responseTimeoutMs: number },
): { connect: number; response: number } {
  const near = (s: number, ms: number) => s * 1000 >= ms * TRY_MATCH.low && s * 1000 <= ms * TRY_MATCH.high;
  let connect = 0;
  let response = 0;
  for (const s of firstTriesS) {
    const closerToConnect = Math.abs(s * 1000 - t.connectTimeoutMs) < Math.abs(s * 1000 - t.responseTimeoutMs);
    if (closerToConnect ? near(s, t.connectTimeoutMs) : near(s, t.responseTimeoutMs)) {
      if (closerToConnect) connect++;
      else response++;
    }
  }
  return { connect, response };
}

/** The clients' side: answers whose x-upstream-addr named more than one replica, and answers of the slow threshold or more. */
interface ClientCounts {
  retried: number;
  slow: number;
}

/** A retried line "matches the timeout" when its first try took this share of the response timeout (as the slow requests' rule). */
const TRY_MATCH = { low: 0.95, high: 1.4 } as const;

/**
 * The sample line's story in one token: a first try that ran out `expect.ms` (a timeout, 504),
 * then 200 from another replica: `<expect.label>-then-200`; `other` for any other retried line.
 */
function sampleVerdict(sample: string | undefined, expect: { label: string; ms: number }): string {
  const e = sample === undefined ? undefined : parseAccessLine(sample);
  if (!e || e.tries.length < 2) return 'none';
  const first = e.tries[0]!;
  const last = e.tries.at(-1)!;
  const ratio = ((first.timeS ?? 0) * 1000) / expect.ms;
  const timedOut = first.status === 504 && ratio >= TRY_MATCH.low && ratio <= TRY_MATCH.high;
  return timedOut && last.status === 200 && e.status === 200 ? `${expect.label}-then-200` : 'other';
}

/**
 * Shape lines for one run with retries: the log's counts against the clients', and, where the
 * fault makes tries wait out a timeout (`expect`), what its slowest retried line shows.
 */
export function logShape(
  name: string,
  log: RunLog | undefined,
  clients: ClientCounts,
  expect?: { label: string; ms: number },
): string[] {
  const same = (a: number | undefined, b: number) => (a === undefined ? 'no-log' : a === b ? 'equal' : 'different');
  const out = [
    line(name, 'log-retried-vs-clients', same(log?.retried, clients.retried)),
    line(name, 'log-slow-vs-clients', same(log?.slow, clients.slow)),
  ];
  if (expect) out.push(line(name, 'log-retried-line', log ? sampleVerdict(log.sample, expect) : 'no-log'));
  return out;
}

export const logHints: Record<string, string> = {
  'log-retried-vs-clients':
    'every request the balancer logged with two or more replicas should reach its client with both in x-upstream-addr; a difference means a retry the log missed, or a header the balancer did not set',
  'log-slow-vs-clients':
    "the balancer's request time and the client's differ by the loopback trip only, so the two counts of requests of a second or more should be equal",
  'log-retried-line':
    'a request held by the frozen (or vanished) replica should be logged with two tries: 504 after the response (or connect) timeout, then 200 from another replica',
};

/** The sample line, field by field, in words. */
export function explainSample(
  sample: string,
  names: Record<string, string>,
  timeouts: { connectTimeoutMs: number; responseTimeoutMs: number },
): string[] {
  const e = parseAccessLine(sample);
  if (!e) return [];
  const who = (addr: string) => names[addr] ?? addr;
  // nginx logs 504 for either timeout; the try's time tells which one ran out.
  const timeoutText = (timeS: number | undefined) => {
    const ms = (timeS ?? 0) * 1000;
    const connect = Math.abs(ms - timeouts.connectTimeoutMs) < Math.abs(ms - timeouts.responseTimeoutMs);
    return connect
      ? `no connection within the ${timeouts.connectTimeoutMs} ms connect timeout`
      : `no answer within the ${timeouts.responseTimeoutMs} ms response timeout`;
  };
  const tryText = e.tries.map((t) => {
    const what =
      t.status === 504
        ? `504, ${timeoutText(t.timeS)}`
        : t.status === 502
          ? '502, the connection failed or was reset'
          : String(t.status);
    return `${who(t.addr)}: ${what}`;
  });
  return [
    `  ${sample}`,
    `  ua  the replicas tried, in order: ${e.tries.map((t) => who(t.addr)).join(', then ')}`,
    `  us  each try's status: ${tryText.join('; ')}`,
    `  ut  each try's time: ${e.tries.map((t) => `${t.timeS === undefined ? '-' : t.timeS.toFixed(3)} s on ${who(t.addr)}`).join(', ')}`,
    `  rt  ${e.requestS.toFixed(3)} s in all, and the client got ${e.status}${e.status === 200 && e.tries.length > 1 ? ': the lost replica cost this request time, not an error' : ''}`,
  ];
}
