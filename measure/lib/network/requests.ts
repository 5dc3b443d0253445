/**
 * Lesson 12's client: a bounded number of GET requests from a few connections at once, each
 * connection sending its next request when the last is answered (a closed loop), over keep-alive or
 * a new connection per request, with an optional timeout, retry after it, or hedge. It plays the
 * part a balancer plays towards its replicas: the side of the link that waits.
 *
 * Plain node:http, so that what a request pays is visible: with `agent: false` each request opens
 * its own TCP connection (SYN, SYN-ACK, then the request) and closes it; with a keep-alive Agent
 * the connections stay open and a request pays one round trip. A request that times out is
 * destroyed, and with it its connection, so a retry opens a new one.
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { markLoad } from '../load/windows.ts';

export type Connections = 'keep-alive' | 'per-request';

export interface RequestPlan {
  /** http://host:port of the link (the toxic proxy). */
  origin: string;
  path: string;
  /** How many requests, in all. */
  requests: number;
  /** How many at once (each a closed loop). */
  concurrency: number;
  connections: Connections;
  /** An attempt still unanswered after this long is abandoned (its connection destroyed), ms. */
  timeoutMs?: number;
  /** Attempts after the first, each on a timeout (needs timeoutMs). */
  retries?: number;
  /**
   * Each of the `concurrency` loops starts a request at most once per this many ms (a think time),
   * so that the batch does not run the machine at its capacity: on 2 cores, 8 loops with none kept
   * both busy, their lossless p95 was 5 ms, and hedges after it, adding load, hedged 32 %; and a
   * connection per request, with 4 ms, still had a lossless p50 of 7 ms, above its p50 with loss.
   */
  gapMs?: number;
  /** A second attempt, on another connection, when the first is unanswered after this long, ms; the first answer wins. */
  hedgeAfterMs?: number;
}

export interface RequestTally {
  /** Each answered request's time, from its first attempt to its answer's last byte, ms (sorted). */
  latenciesMs: number[];
  /** Requests with no answer: every attempt timed out or failed. */
  errors: number;
  /** Attempts sent, hedges and retries included. */
  attempts: number;
  /** Hedges sent. */
  hedges: number;
  /** Answers that were not 200, or whose body was not the route's. */
  wrong: number;
}

/** The nearest-rank percentile `p` (0 to 100) of sorted `xs`, or NaN when empty. */
export function percentile(xs: readonly number[], p: number): number {
  if (!xs.length) return NaN;
  return xs[Math.min(xs.length - 1, Math.max(0, Math.ceil((p / 100) * xs.length) - 1))]!;
}

interface Attempt {
  done: Promise<{ ok: boolean; body: string } | undefined>;
  abort: () => void;
}

/** One GET; resolves to its status and body, or undefined once aborted or failed. */
function attempt(origin: string, path: string, agent: http.Agent | false): Attempt {
  let req: http.ClientRequest | undefined;
  const done = new Promise<{ ok: boolean; body: string } | undefined>((resolve) => {
    req = http.get(`${origin}${path}`, { agent, headers: agent ? {} : { connection: 'close' } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ ok: res.statusCode === 200, body }));
      res.on('error', () => resolve(undefined));
      res.on('aborted', () => resolve(undefined));
    });
    req.on('error', () => resolve(undefined));
    req.on('close', () => resolve(undefined)); // after 'end' this is a no-op
  });
  return { done, abort: () => req?.destroy() };
}

/** Resolves after `ms` unless `cancel` is called first (then never). */
function after(ms: number): { wait: Promise<void>; cancel: () => void } {
  let timer: NodeJS.Timeout | undefined;
  const wait = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  return { wait, cancel: () => clearTimeout(timer) };
}

/**
 * One request of `plan`: its attempts (a retry on `spare`'s open connections), each raced against
 * its hedge and its timeout; tallied in `tally`, its answer checked by `expect`.
 */
async function oneRequest(
  plan: RequestPlan,
  main: http.Agent | false,
  spare: http.Agent | false,
  tally: RequestTally,
  expect: (body: string) => boolean,
): Promise<void> {
  const began = performance.now();
  for (let tries = 0; tries <= (plan.retries ?? 0); tries++) {
    // A retry goes on the other pool's open connections: the first attempt's was destroyed with
    // it, and a new one would pay a handshake that loss can delay by a second.
    const first = attempt(plan.origin, plan.path, tries === 0 ? main : spare);
    tally.attempts++;
    const racers = [first.done];
    const losers = [first];
    const hedge = plan.hedgeAfterMs !== undefined ? after(plan.hedgeAfterMs) : undefined;
    if (hedge)
      racers.push(
        hedge.wait.then(() => {
          tally.hedges++;
          tally.attempts++;
          const h = attempt(plan.origin, plan.path, spare);
          losers.push(h);
          return h.done;
        }),
      );
    const timeout = plan.timeoutMs !== undefined ? after(plan.timeoutMs) : undefined;
    // The first answer that came, or undefined: every attempt failed or the time ran out.
    const answered = new Promise<{ ok: boolean; body: string } | undefined>((resolve) => {
      let pending = racers.length;
      for (const r of racers)
        r.then((a) => {
          if (a) resolve(a);
          else if (--pending === 0) resolve(undefined);
        });
      timeout?.wait.then(() => resolve(undefined));
    });
    const got = await answered;
    hedge?.cancel();
    timeout?.cancel();
    if (got) {
      // The slower attempt is left to finish (its answer is dropped): destroying it would make its
      // connection's next request open a new one, and pay a handshake that loss can delay.
      if (!got.ok || !expect(got.body)) tally.wrong++;
      tally.latenciesMs.push(performance.now() - began);
      return;
    }
    for (const l of losers) l.abort();
  }
  tally.errors++;
}

/**
 * Sends `plan.requests` requests and tallies them. `expect` checks an answer's body. Over
 * keep-alive, twice `concurrency` connections of each pool are opened first, untimed, and then
 * `ready()` is awaited (the caller turns the loss on there), so that the timed requests find their
 * connections open. The hedges and the retries use a pool of their own, so that neither is queued
 * behind the lost packet its first attempt waits on.
 */
export async function sendRequests(
  plan: RequestPlan,
  expect: (body: string) => boolean,
  ready: () => Promise<void> = async () => {},
): Promise<RequestTally> {
  const keep = plan.connections === 'keep-alive';
  // No cap on sockets: an attempt left waiting on a lost packet keeps its connection for 200 ms or
  // more, and with a cap (16 here, at first) the requests after it queued in the agent for a free
  // one, passed the hedge's delay there, and were hedged too: 68 % of them.
  const main = keep ? new http.Agent({ keepAlive: true }) : false;
  const hedgePool = keep ? new http.Agent({ keepAlive: true }) : false;
  const tally: RequestTally = { latenciesMs: [], errors: 0, attempts: 0, hedges: 0, wrong: 0 };
  let next = 0;

  const pools: (http.Agent | false)[] = keep ? [main, hedgePool] : [];
  for (const pool of pools)
    await Promise.all(Array.from({ length: plan.concurrency * 2 }, () => attempt(plan.origin, plan.path, pool).done));
  await ready();

  const loop = async (): Promise<void> => {
    while (next < plan.requests) {
      next++;
      const began = performance.now();
      await oneRequest(plan, main, hedgePool, tally, expect);
      const rest = (plan.gapMs ?? 0) - (performance.now() - began);
      if (rest > 0 && next < plan.requests) await new Promise((r) => setTimeout(r, rest));
    }
  };
  const all = Promise.all(Array.from({ length: plan.concurrency }, loop));
  markLoad(all);
  try {
    await all;
  } finally {
    if (main) main.destroy();
    if (hedgePool) hedgePool.destroy();
  }
  tally.latenciesMs.sort((a, b) => a - b);
  return tally;
}
