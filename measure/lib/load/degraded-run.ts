/**
 * The `degraded` experiment's run (lesson 4), shared by measure/degraded.ts and
 * measure/sim-vs-lab.ts: 3 replicas; a hog keeps app3's event loop blocked by sending it
 * /stall?ms=30 directly (3 connections, bypassing the balancer; `busy` sends /slow-sync?ms=30);
 * meanwhile /fast goes through the balancer (6 connections) under each policy.
 *
 * The policies are measured in interleaved rounds, not one after another: each round gives every
 * policy one short slice (a settling part, then a measured part), in an order that rotates from
 * round to round, and a policy's numbers come from all its slices merged. Measured one after
 * another, whatever ran later ran faster: with least connections measured six times in a row, its
 * first run's p95 was 1.6-2.0x the later ones', and least connections (second) against two
 * choices (fourth) came out 1.5-2.6x apart at p95 in 6 of 6 runs, then 0.75-0.94x with their
 * places swapped. Interleaved, the machine's drift lands on every policy alike.
 *
 * With `path`, the rounds also measure the path outside the replicas: /fast through the same
 * balancer to the two healthy replicas only (app3 taken out by hand). `calibrate`, when given,
 * runs after the rounds with the hog still running (sim-vs-lab measures service times there).
 */
import { POLICIES, type Policy } from '../../../core/policies.ts';
import type { RunContext } from '../harness/experiment.ts';
import { quantilesMs, type LatencySummary } from '../../../results/report/latency.ts';
import { summarizeLoadTally } from '../machine/tally.ts';
import type { ServerProcess } from '../process/launch.ts';
import type { Lab } from '../process/lab.ts';
import { runLoad, sustainLoad } from './load.ts';
import type { Progress } from '../harness/progress.ts';
import { STEP_TRIES } from '../machine/steady.ts';
import { probeOk } from './probe.ts';
import type { TwoChoicesSampling } from '../../../servers/lib/balancer/upstreams.ts';
import { startBalancer, startReplicas, type BalancerKind, type Replica } from '../process/topology.ts';
import { DEGRADED_SPEC, type DegradedResult, type PolicyRun } from '../../../results/degraded/report.ts';
import { measureRounds, newSlot, type Slot } from './degraded-slots.ts';

export interface DegradedOptions {
  lb: BalancerKind;
  /** Rounds: each policy gets one slice per round. */
  runs: number;
  hog: keyof typeof HOGS;
  /** How power of two choices samples (the kit's balancer only; lesson 4, exercise 1). */
  twoChoices: TwoChoicesSampling;
}

export const {
  connections: CONNECTIONS,
  hogConnections: HOG_CONNECTIONS,
  hogMs: HOG_MS,
  rounds: ROUNDS,
} = DEGRADED_SPEC;
const { replicas: REPLICAS, warmupS: WARMUP_S, settleS: SETTLE_S } = DEGRADED_SPEC;
/**
 * How the hog blocks app3's event loop, 30 ms per request: `stall` sleeps the thread (no CPU),
 * `busy` busy-waits (a full core). The default is stall: on a 2-core machine a busy-waiting hog
 * takes a whole core from the balancer, the load generator and the healthy replicas, and measured
 * here that lifted the healthy path's p95 to 8-19 ms through the kit's balancer, within about
 * 10x of the blocked replica's. The lesson is the blocked event loop; --hog busy shows the rest.
 */
export const HOGS = { stall: `/stall?ms=${HOG_MS}`, busy: `/slow-sync?ms=${HOG_MS}` } as const;
// Each slice's first SETTLE_S after a policy switch is not measured: requests of the previous
// policy are still in flight on app3, and the clients open a fresh set of connections.
const sliceS = (quick: boolean) => DEGRADED_SPEC.sliceS[quick ? 'quick' : 'full'];

/** The path outside the replicas, measured in the same rounds (for sim-vs-lab). */
interface PathMeasurement {
  latency: LatencySummary;
  throughput: number;
  /** 1000 evenly spaced quantiles of its latency, ms. */
  quantilesMs: number[];
}

/**
 * Warms the whole path up first, through a balancer to the healthy replicas only: fresh processes
 * answer more slowly until V8 has compiled their hot paths, and warming the replicas alone,
 * straight, was not enough. The `shared` balancer (the kit's) takes the degraded replica, the
 * last, out meanwhile; with nginx a balancer of its own does it.
 */
async function warmUp(
  lab: Lab,
  progress: Progress,
  lb: BalancerKind,
  replicas: Replica[],
  shared: ServerProcess | undefined,
): Promise<void> {
  const degraded = replicas.at(-1)!;
  progress.step(
    `warm-up: /fast through the balancer to ${replicas
      .slice(0, -1)
      .map((r) => r.name)
      .join(' and ')} for ${WARMUP_S} s`,
  );
  const warm = shared ?? (await startBalancer(lab, lb, 'least-connections', replicas.slice(0, -1), 0));
  if (shared) await postTo(shared, `/__lb/down?upstream=${degraded.name}`);
  await runLoad({ url: `${warm.url}/fast`, connections: CONNECTIONS, durationS: WARMUP_S });
  if (shared) await postTo(shared, `/__lb/up?upstream=${degraded.name}`);
  else await lab.stop(warm);
}

/** POST `path` to the kit's balancer (its /__lb/ routes), checked. */
function postTo(balancer: ServerProcess, path: string): Promise<void> {
  return probeOk(`${balancer.url}${path}`, { method: 'POST' }).then(() => undefined);
}

/**
 * One slot per policy: on the `shared` balancer, which switches to the slot's policy before each
 * of its slices; or on that policy's own balancer (`byPolicy`, nginx). With `path`, also the path
 * slot: least connections to the healthy replicas only, the degraded one (the last) taken out.
 */
function makeSlots(
  replicas: Replica[],
  shared: ServerProcess | undefined,
  byPolicy: Map<Policy, ServerProcess>,
  path: boolean,
): { policySlots: Slot[]; pathSlot: Slot | undefined } {
  const degraded = replicas.at(-1)!;
  const post = (p: string) => postTo(shared!, p);
  const policySlots = POLICIES.map((policy) =>
    shared
      ? newSlot(
          policy,
          replicas,
          () => shared.url,
          () => post(`/__lb/policy?name=${policy}`),
        )
      : newSlot(policy, replicas, () => byPolicy.get(policy)!.url),
  );
  const pathSlot = path
    ? newSlot(
        'path',
        replicas,
        () => shared!.url,
        async () => {
          await post(`/__lb/down?upstream=${degraded.name}`);
          await post('/__lb/policy?name=least-connections');
        },
        () => post(`/__lb/up?upstream=${degraded.name}`),
      )
    : undefined;
  return { policySlots, pathSlot };
}

/**
 * Runs the degraded experiment (see the top of this file): starts the replicas, the hog and the
 * balancers, warms the path up, measures every slot in interleaved rounds, and returns the result,
 * the path's measurement (with `path`) and what `calibrate` returned.
 */
export async function runDegraded<C = undefined>(
  { lab, progress, options, quick, machine, port }: RunContext<DegradedOptions>,
  extra: { path?: boolean; calibrate?: (replicas: Replica[]) => Promise<C> } = {},
): Promise<{ result: DegradedResult; path: PathMeasurement | undefined; calibration: C | undefined }> {
  const durationS = sliceS(quick);
  const rounds = options.runs;
  progress.step(`starting ${REPLICAS} replicas`);
  const replicas = await startReplicas(lab, REPLICAS);
  const degraded = replicas.at(-1)!;
  const slots = POLICIES.length + (extra.path ? 1 : 0);
  // The hog runs for the whole experiment; it is bounded too, and stopped at the end.
  const hogBudgetS = WARMUP_S + rounds * slots * (SETTLE_S + durationS + 1) + 15;
  const hogRoute = HOGS[options.hog];
  const hog = sustainLoad(
    { url: `${degraded.url}${hogRoute}`, connections: HOG_CONNECTIONS, durationS: Math.min(120, hogBudgetS) },
    hogBudgetS * STEP_TRIES,
  );
  try {
    // The kit's balancer runs once and switches policy between slices (POST /__lb/policy): a
    // fresh Node process starts cold, and its JIT warm-up (measured: /fast through a fresh
    // balancer went 1000, 1400, 2700, 4100 req/s in its first four seconds) would land on one
    // policy. nginx, compiled ahead of time, runs once per policy, all of them side by side.
    const sampling = options.twoChoices === 'distinct' ? [] : ['--two-choices', options.twoChoices];
    const shared =
      options.lb === 'builtin'
        ? await startBalancer(lab, 'builtin', 'least-connections', replicas, port, true, sampling)
        : undefined;
    const byPolicy = new Map<Policy, ServerProcess>();
    // --port goes to the first of them (several cannot share it).
    if (!shared)
      for (const [i, policy] of POLICIES.entries())
        byPolicy.set(policy, await startBalancer(lab, options.lb, policy, replicas, i === 0 ? port : 0));

    await warmUp(lab, progress, options.lb, replicas, shared);

    const { policySlots, pathSlot } = makeSlots(replicas, shared, byPolicy, Boolean(extra.path));
    const all = pathSlot ? [...policySlots, pathSlot] : policySlots;
    await measureRounds(all, replicas, rounds, durationS, progress);
    const policies: PolicyRun[] = policySlots.map((s) => {
      const { throughput, latency: l } = summarizeLoadTally(s);
      return {
        policy: s.name,
        throughput,
        p50: l.p50,
        p95: l.p95,
        p99: l.p99,
        errors: s.errors,
        perReplica: s.perReplica,
        generatorCpu: s.generatorCpu,
      };
    });
    const path = pathSlot
      ? { ...summarizeLoadTally(pathSlot), quantilesMs: quantilesMs(pathSlot.histogram, 1000) }
      : undefined;
    const calibration = extra.calibrate ? await extra.calibrate(replicas) : undefined;
    const result: DegradedResult = {
      machine,
      balancer: options.lb,
      ...(options.twoChoices === 'with-replacement' ? { twoChoices: 'with-replacement' as const } : {}),
      degraded: degraded.name,
      hog: { route: hogRoute, connections: HOG_CONNECTIONS },
      load: { connections: CONNECTIONS, durationS, repetitions: rounds },
      policies,
    };
    return { result, path, calibration };
  } finally {
    await hog.stop();
  }
}
