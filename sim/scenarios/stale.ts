/**
 * Beyond one machine, on paper: 100 replicas, 1 million requests (open loop, Poisson, at 90 % of
 * their capacity, exponential service of 10 ms), each policy with live load information and with
 * load information 50 ms old (the balancer sees each replica's requests in flight as they were at
 * the last refresh, as a balancer does that learns load from periodic reports, or one of many
 * balancers that each see only their own traffic).
 *
 * Least connections sends every request of a refresh period to the replicas that looked least
 * loaded at its start, so they all herd onto a few replicas; two random choices spread the same
 * requests over many pairs and hold. Mitzenmacher, "How Useful Is Old Information?" (IEEE TPDS
 * 11(1), 2000) shows this for the supermarket model; the simulation shows it with the balancer's
 * own pickers.
 */
import { POLICIES } from '../../core/policies.ts';
import { fmtMs, makeChalk, makeTable, textThenNumbers } from '../../results/report/format.ts';
import { exp } from '../dist.ts';
import { simulate, type SimResult } from '../engine.ts';
import { DEFAULT_LOOP, loopWords, totalsOf, type Scenario, type ScenarioOptions } from './common.ts';

/** A p99 this many times the best with the same load information shows in red. */
const RED_FACTOR = 2;

export const STALE = { replicas: 100, serviceMs: 10, load: 0.9, staleMs: 50, requests: 1_000_000 } as const;

export interface StaleRow {
  policy: string;
  staleMs: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  /** The busiest replica's time-averaged queue (waiting and in service). */
  worstMeanQueue: number;
}

export const stale: Scenario = {
  name: 'stale',
  summary:
    '100 replicas and 1 million requests per run: least connections herds on stale load information, power of two choices holds',
  async run({ seed, requests, loop, progress, staleMs: age }) {
    const n = requests ?? STALE.requests;
    const old = age ?? STALE.staleMs;
    const ratePerS = (STALE.load * STALE.replicas * 1000) / STALE.serviceMs;
    const sims: SimResult[] = [];
    const rows: StaleRow[] = [];
    for (const staleMs of [0, old]) {
      for (const policy of POLICIES) {
        progress?.(
          `[${rows.length + 1}/${2 * POLICIES.length}] ${policy}, load information ${staleMs ? `${staleMs} ms old` : 'live'}: ${n.toLocaleString('en-US')} requests`,
        );
        await new Promise((resolve) => setTimeout(resolve, 0)); // lets a Ctrl-C in between runs
        const s = simulate({
          seed,
          loop: loop ?? DEFAULT_LOOP,
          replicas: STALE.replicas,
          policy,
          staleMs,
          clients: { kind: 'open', ratePerS },
          service: exp(STALE.serviceMs),
          maxRequests: n,
          // Long enough for every request to be sent and answered; a tenth of it is warm-up.
          durationMs: Math.ceil(((n / ratePerS) * 1000 * 1.1) / 1000) * 1000 + 5000,
          warmupMs: Math.round((n / ratePerS) * 100),
        });
        sims.push(s);
        rows.push({
          policy,
          staleMs,
          p50: s.latency.p50,
          p95: s.latency.p95,
          p99: s.latency.p99,
          max: s.latency.max,
          worstMeanQueue: Math.max(...s.replicas.map((r) => r.meanQueue)),
        });
      }
    }
    const result = { ...STALE, staleMs: old, requests: n, ratePerS, seed, rows };
    return { result, render: (color) => renderStale(rows, n, ratePerS, seed, loop, color), totals: totalsOf(sims) };
  },
};

function renderStale(
  rows: StaleRow[],
  n: number,
  ratePerS: number,
  seed: number,
  loop: ScenarioOptions['loop'],
  color: boolean,
): string {
  const c = makeChalk(color);
  const head = ['policy', 'load information', 'p50', 'p95', 'p99', 'max', 'busiest queue'];
  const table = makeTable(head, textThenNumbers(2, head.length));
  const best = (staleMs: number) => Math.min(...rows.filter((r) => r.staleMs === staleMs).map((r) => r.p99));
  for (const r of rows) {
    const p99 = r.p99 >= RED_FACTOR * best(r.staleMs) ? c.red(fmtMs(r.p99)) : c.green(fmtMs(r.p99));
    table.push([
      r.policy,
      r.staleMs ? `${r.staleMs} ms old` : 'live',
      fmtMs(r.p50),
      fmtMs(r.p95),
      p99,
      fmtMs(r.max),
      r.worstMeanQueue.toFixed(1),
    ]);
  }
  return [
    c.bold(
      `Beyond one machine: ${STALE.replicas} replicas, ${n.toLocaleString('en-US')} requests per policy, live and stale load information`,
    ),
    c.dim(
      `open loop at ${Math.round(ratePerS).toLocaleString('en-US')} req/s (${STALE.load * 100} % of capacity), service ${STALE.serviceMs} ms on average (exponential) · simulated (seed ${seed}; ${loopWords(loop)})`,
    ),
    table.toString(),
    `busiest queue: the most loaded replica's mean number of requests (waiting and in service). A p99 in red is at least ${RED_FACTOR}× the best with the same load information. ` +
      "With stale counts, least connections sends a whole refresh period's requests to the replicas that looked idle.",
  ].join('\n');
}
