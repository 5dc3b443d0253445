/**
 * Simulated `autoscale` (lesson 8): closed-loop users against one worker, then against workers
 * the cluster primary's own controller (core/hpa.ts decide(), lesson defaults) adds and
 * retires. The model of the lab's workload, stated so it can be argued with:
 *   - each worker has 0.25 core, so a request's time on its event loop is its CPU time × 4;
 *   - a user's requests cost 1.1 ms of CPU on average (exponential), with 65 ms of think time on
 *     average between them: about the lab's 34 requests per 2.2 s pause and iteration. 1.1 ms is
 *     calibrated to the lab, where 10 users kept one worker at about 60 % of its quota (lesson 8);
 *   - a new worker takes 1 s to start (tsx compiling, measured about that unthrottled).
 * node:cluster hands connections round robin; the users open a new connection per iteration, so
 * the balancer here is round robin too.
 */
import { DEFAULT_HPA, DEFAULT_SYNC_MS, type HpaConfig } from '../../core/hpa.ts';
import { fmtMs, fmtRate, makeChalk, makeTable, textThenNumbers } from '../../results/report/format.ts';
import { exp } from '../dist.ts';
import { simulate, type SimConfig, type SimResult } from '../engine.ts';
import { DEFAULT_LOOP, loopWords, totalsOf, type Scenario, type ScenarioOptions } from './common.ts';

const QUOTA = 0.25;
const CPU_MS = 1.1;
const THINK_MS = 65;
const STARTUP_MS = 1000;
const LOAD_S = 30;
const AFTER_S = 15;

export interface SimAutoscaleRow {
  scenario: string;
  requests: number;
  peakRps: number;
  steadyRps: number;
  p95: number;
  steadyP95: number;
  errors: number;
  maxWorkers: number;
  workerSeconds: number;
  /** Live workers at each second, load and after. */
  workers: number[];
  /** s after the load ended until one worker was left (undefined: not within the run). */
  backToMinS?: number;
}

const SCENARIOS = [
  { scenario: '1 worker, 10 users', users: 10, autoscale: false },
  { scenario: '1 worker, 40 users', users: 40, autoscale: false },
  { scenario: 'autoscaled, 40 users', users: 40, autoscale: true },
  { scenario: 'autoscaled, 80 users', users: 80, autoscale: true },
];

export const autoscale: Scenario = {
  name: 'autoscale',
  mirrors: 'autoscale',
  summary: 'closed-loop users on one worker, then on workers an HPA-style controller adds and retires',
  run({ seed, loop, hpa: overrides }) {
    const hpa = { ...DEFAULT_HPA, min: 1, max: 8, ...overrides };
    const sims: SimResult[] = [];
    const rows = SCENARIOS.map((s): SimAutoscaleRow => {
      const config: SimConfig = {
        seed,
        loop: loop ?? DEFAULT_LOOP,
        replicas: 1,
        policy: 'round-robin',
        clients: { kind: 'closed', count: s.users, think: exp(THINK_MS) },
        service: exp(CPU_MS / QUOTA),
        loadMs: LOAD_S * 1000,
        durationMs: (LOAD_S + (s.autoscale ? AFTER_S : 0)) * 1000,
        timeline: true,
        ...(s.autoscale ? { autoscale: { hpa, syncMs: DEFAULT_SYNC_MS, startupMs: STARTUP_MS } } : {}),
      };
      const whole = simulate(config);
      // The same run (same seed), recording only its second half: the steady state.
      const steady = simulate({ ...config, warmupMs: (LOAD_S * 1000) / 2 });
      sims.push(whole, steady);
      const perSecond = whole.timeline!.slice(0, LOAD_S).map((x) => x.completed);
      const workers = whole.series.replicas;
      const backAt = workers.findIndex((w, i) => i >= LOAD_S && w === 1);
      return {
        scenario: s.scenario,
        requests: whole.counts.completed,
        peakRps: Math.max(...perSecond),
        steadyRps: (steady.counts.completed * 1000) / (LOAD_S * 500),
        p95: whole.latency.p95,
        steadyP95: steady.latency.p95,
        errors: whole.counts.failed,
        maxWorkers: Math.max(...workers),
        workerSeconds: workers.slice(0, LOAD_S).reduce((a, b) => a + b, 0),
        workers,
        ...(s.autoscale && backAt >= 0 ? { backToMinS: backAt - LOAD_S } : {}),
      };
    });
    const result = {
      quota: QUOTA,
      cpuMsPerRequest: CPU_MS,
      thinkMs: THINK_MS,
      loadS: LOAD_S,
      hpa: { ...hpa, syncMs: DEFAULT_SYNC_MS },
      seed,
      rows,
    };
    return { result, render: (color) => renderAutoscale(rows, seed, loop, color, hpa), totals: totalsOf(sims) };
  },
};

/** Seconds of the load at which the count rose after it had already fallen once: flapping. */
export function upAfterDown(workers: readonly number[], loadS: number): number {
  let fell = false;
  let n = 0;
  for (let i = 1; i < Math.min(workers.length, loadS); i++) {
    if (workers[i]! < workers[i - 1]!) fell = true;
    else if (workers[i]! > workers[i - 1]! && fell) n++;
  }
  return n;
}

function renderAutoscale(
  rows: SimAutoscaleRow[],
  seed: number,
  loop: ScenarioOptions['loop'],
  color: boolean,
  hpa: HpaConfig,
): string {
  const c = makeChalk(color);
  const head = [
    'scenario',
    'requests',
    'peak req/s',
    'steady req/s',
    'p95',
    'steady p95',
    'errors',
    'max workers',
    'worker·s',
  ];
  const table = makeTable(head, textThenNumbers(1, head.length));
  for (const r of rows) {
    table.push([
      r.scenario,
      r.requests.toLocaleString('en-US'),
      fmtRate(r.peakRps),
      fmtRate(r.steadyRps),
      fmtMs(r.p95),
      fmtMs(r.steadyP95),
      String(r.errors),
      String(r.maxWorkers),
      String(Math.round(r.workerSeconds)),
    ]);
  }
  const lines = rows
    .filter((r) => r.maxWorkers > 1)
    .map(
      (r) =>
        `  ${r.scenario}: ${r.workers.join(' ')}${r.backToMinS !== undefined ? ` (back to 1 worker ${r.backToMinS} s after the load)` : ''}; scale-ups after a scale-down during the load: ${upAfterDown(r.workers, LOAD_S)}`,
    );
  return [
    c.bold(
      'Lesson 8 · autoscaling, simulated: closed-loop users on one worker, then on workers the HPA-style controller adds and retires',
    ),
    c.dim(
      `${LOAD_S} s of load; each worker 0.25 core; requests ${CPU_MS} ms of CPU on average, ${THINK_MS} ms of think time between them; controller: target ${hpa.target * 100} %, tolerance ${hpa.tolerance}, sync ${DEFAULT_SYNC_MS / 1000} s, window ${hpa.windowMs / 1000} s · simulated (seed ${seed}; ${loopWords(loop)})`,
    ),
    table.toString(),
    'Workers at each second (the load ends at second ' + LOAD_S + '):',
    ...lines,
  ].join('\n');
}
