/**
 * The `degraded` experiment's run (lesson 4), shared by measure/degraded.ts and
 * measure/sim-vs-lab.ts: 3 replicas; a hog keeps app3's event loop blocked by sending it
 * /stall?ms=30 directly (3 connections, bypassing the balancer; `busy` sends /slow-sync?ms=30);
 * meanwhile /fast goes through the balancer (6 connections) under each policy: a warm-up, then
 * measured runs (their median). `calibrate`, when given, runs after the policies, with the hog
 * still running, on the same (by then warm) replicas: sim-vs-lab measures service times there.
 */
import { POLICIES } from '../../servers/lib/policies.ts';
import type { RunContext } from './experiment.ts';
import { median } from './latency.ts';
import { runLoad, startLoad, type LoadResult } from './load.ts';
import { servedByReplica, startBalancer, startReplicas, type BalancerKind, type Replica } from './topology.ts';
import type { DegradedResult, PolicyRun } from '../report/degraded.ts';

export interface DegradedOptions {
  lb: BalancerKind;
  runs: number;
  hog: keyof typeof HOGS;
}

export const REPLICAS = 3;
export const CONNECTIONS = 6;
/**
 * How the hog blocks app3's event loop, 30 ms per request: `stall` sleeps the thread (no CPU),
 * `busy` busy-waits (a full core). The default is stall: on a 2-core machine a busy-waiting hog
 * takes a whole core from the balancer, the load generator and the healthy replicas, and measured
 * here that lifted the healthy path's p95 to 8-19 ms through the built-in balancer, within about
 * 10x of the blocked replica's. The lesson is the blocked event loop; --hog busy shows the rest.
 */
export const HOGS = { stall: '/stall?ms=30', busy: '/slow-sync?ms=30' } as const;
export const HOG_MS = 30;
/** Seconds of load through a balancer to the healthy replicas before the policies are measured. */
export const WARMUP_S = 3;
export const HOG_CONNECTIONS = 3;

export async function runDegraded<C = undefined>(
  { lab, progress, options, quick, machine, port }: RunContext<DegradedOptions>,
  calibrate?: (replicas: Replica[]) => Promise<C>,
): Promise<{ result: DegradedResult; calibration: C | undefined }> {
  const durationS = quick ? 1 : 2;
  progress.step(`starting ${REPLICAS} replicas`);
  const replicas = await startReplicas(lab, REPLICAS);
  const degraded = replicas.at(-1)!;
  // The hog runs for the whole experiment; it is bounded too, and stopped at the end.
  const hogBudgetS = Math.min(120, POLICIES.length * (1 + options.runs * durationS) * 3 + 10 + WARMUP_S + (calibrate ? 10 : 0));
  const hogRoute = HOGS[options.hog];
  const hog = startLoad({ url: `${degraded.url}${hogRoute}`, connections: HOG_CONNECTIONS, durationS: hogBudgetS });
  try {
    // Warm up the whole path first, through a balancer to the healthy replicas. Fresh processes
    // answer more slowly until V8 has compiled their hot paths: measured here, /fast through the
    // balancer went 1000, 1400, 2700, 4100 req/s in its first four seconds. Without this, the
    // policy measured second (least connections) got about half the throughput of the one
    // measured last (two choices), a difference of run order, not of policy; warming the
    // replicas alone, straight, was not enough.
    progress.step(`warm-up: /fast through the balancer to ${replicas.slice(0, -1).map((r) => r.name).join(' and ')} for ${WARMUP_S} s`);
    const warm = await startBalancer(lab, options.lb, 'least-connections', replicas.slice(0, -1), port);
    await runLoad({ url: `${warm.url}/fast`, connections: CONNECTIONS, durationS: WARMUP_S });
    await lab.stop(warm);
    const policies: PolicyRun[] = [];
    for (const policy of POLICIES) {
      progress.step(`${policy}: warm-up`);
      const lb = await startBalancer(lab, options.lb, policy, replicas, port);
      await runLoad({ url: `${lb.url}/fast`, connections: CONNECTIONS, durationS: 1 });
      const before = await servedByReplica(replicas, '/fast');
      const runs: LoadResult[] = [];
      for (let i = 0; i < options.runs; i++) {
        progress.step(`${policy}: /fast with ${CONNECTIONS} connections for ${durationS} s (run ${i + 1} of ${options.runs})`);
        runs.push(await runLoad({ url: `${lb.url}/fast`, connections: CONNECTIONS, durationS }));
      }
      const after = await servedByReplica(replicas, '/fast');
      await lab.stop(lb);
      policies.push({
        policy,
        throughput: median(runs.map((r) => r.throughput)),
        p50: median(runs.map((r) => r.latency.p50)),
        p95: median(runs.map((r) => r.latency.p95)),
        p99: median(runs.map((r) => r.latency.p99)),
        errors: runs.reduce((n, r) => n + r.counts.errors + r.counts.non2xx, 0),
        perReplica: Object.fromEntries(replicas.map((r) => [r.name, after[r.name]! - before[r.name]!])),
        generatorCpu: Math.max(...runs.map((r) => r.generatorCpu)),
      });
    }
    // Measured after the policies, not before: fresh replicas answer more slowly for their first
    // seconds (JIT, lazy loading), and a path measured first was 1.5-2.3x slower at p95 than the
    // least-connections run that followed in 7 of 10 runs.
    const calibration = calibrate ? await calibrate(replicas) : undefined;
    const result: DegradedResult = {
      machine,
      balancer: options.lb,
      degraded: degraded.name,
      hog: { route: hogRoute, connections: HOG_CONNECTIONS },
      load: { connections: CONNECTIONS, durationS, repetitions: options.runs },
      policies,
    };
    return { result, calibration };
  } finally {
    hog.stop();
    await hog.result.catch(() => undefined);
  }
}
