/**
 * Lesson 11 · overload: what a service does with more than it can serve.
 *
 * Starts lesson 11's service (servers/overload.ts: one worker, a queue in front of it) twice, once
 * with the kit's shedder, and measures its capacity with a closed loop. Then users come from an
 * open loop (measur./lib/overload/users.ts) at multiples of that capacity:
 *   a. with no timeout, at each multiple: the p99 and the queue in the first and last quarter;
 *   b. giving up after a timeout, above capacity: goodput, and the work done for users gone;
 *   d. the same against the shedder: goodput, the accepted p99, the 503s;
 *   c/e. a spike past capacity between two stretches below it, with users who do not retry, who
 *      retry at once, and who retry through a circuit breaker: how long until users are served again.
 * Between passes the service's queue is emptied (POST /__overload/reset), so each starts alike.
 */
import path from 'node:path';
import { defineCommand } from '../lib/cli.ts';
import { KitError } from '../lib/errors.ts';
import { COMMON_FLAGS, defineExperiment, runIfEntry, type RunContext } from './lib/harness/experiment.ts';
import { runLoad } from './lib/load/load.ts';
import { pass, spikeRun } from './lib/overload/passes.ts';
import { measureSteadily } from './lib/machine/steady.ts';
import type { ServerProcess } from './lib/process/launch.ts';
import { studentFix, SHED_EXERCISE } from './lib/exercise/specs.ts';
import { ROOT } from './lib/harness/paths.ts';
import { DEFAULT_BOUND_MS, MAX_BOUND_MS, MIN_BOUND_MS } from '../servers/lib/cpu/work-queue.ts';
import { hints, notShown } from '../results/overload/hints.ts';
import {
  shape,
  type OverloadPass,
  type OverloadResult,
  type SpikePlan,
  type SpikeRun,
} from '../results/overload/report.ts';
import { render } from '../results/overload/render.ts';
import { examples } from '../results/overload/examples.ts';
import { SPIKE_PLANS } from '../results/overload/spike.ts';
import { simulateSpikes } from '../sim/scenarios/overload.ts';
import { measures, predictions } from '../results/overload/predictions.ts';

const command = defineCommand({
  usage: 'npx tsx measure/overload.ts [flags]',
  summary:
    "Lesson 11: measures one service's capacity, then sends it users from an open loop at multiples of it. Shows the queue growing past capacity, timeouts that leave the service working for nobody, retries that keep it down after a spike, a shedder that keeps goodput near capacity, and a circuit breaker that lets it recover.",
  flags: {
    ...COMMON_FLAGS,
    rates: {
      type: 'string',
      valueName: 'list',
      description:
        'the loads to offer, as multiples of the measured capacity, comma-separated: 2 to 6 of them, each 0.1 to 3 (default 0.5,1,1.5,2)',
    },
    timeout: {
      type: 'string',
      valueName: 'ms',
      description: 'how long a user waits for an answer before giving up, 100 to 5000 (default 500)',
    },
    retries: {
      type: 'string',
      valueName: 'n',
      description: 'how many times a retrying user tries again after a timeout, 1 to 5 (default 2)',
    },
    bound: {
      type: 'string',
      valueName: 'ms',
      description: `the shedder's bound: the longest wait it lets a request in for, ${MIN_BOUND_MS} to ${MAX_BOUND_MS} (default ${DEFAULT_BOUND_MS})`,
    },
    mine: {
      type: 'boolean',
      description:
        "the lesson's exercise: the shedding rows run your exercises/lesson-11/shed.ts (copied on first use); its answers are checked first (every accepted request gets its hash, every refused one a 503 with Retry-After), then goodput and the accepted p99 must read like the kit's shedder's (expected-output/fixed/overload.txt)",
    },
  },
  epilogue: 'Example: npx tsx measure/overload.ts --predict\nTry your shedder: npx tsx measure/overload.ts --mine',
});

interface Options {
  multiples: number[];
  timeoutMs: number;
  retries: number;
  boundMs: number;
  /** With --mine: the student's copy of servers/exercises/lesson-11/shed.ts. */
  mine: string | undefined;
  /** Seconds of schedule: each pass of a, each of b and d. */
  queueS: number;
  timeoutS: number;
  shedS: number;
  spike: SpikePlan;
}

/**
 * The capacity step, lesson 1's way: a closed loop of this many connections for CAPACITY_S s, after
 * WARM_S s of the same on each service, untimed (it also gives each worker the 20 requests its time
 * per request is averaged over). Each pass sets its rate from the worker's own time per request (CapacityTracker).
 */
const CAPACITY_CONNECTIONS = 4;
const CAPACITY_S = 0.5;
const WARM_S = 0.3;

/** Parses --rates: 2 to 6 multiples of capacity, each 0.1 to 3; KIT_ERR_USAGE naming the flag. */
function multiplesFlag(raw: string | undefined): number[] {
  if (raw === undefined) return [0.5, 1, 1.5, 2];
  const parts = raw.split(',').map((s) => s.trim());
  const values = parts.map(Number);
  if (
    parts.length < 2 ||
    parts.length > 6 ||
    values.some((v, i) => !/^\d+(\.\d+)?$/.test(parts[i]!) || v < 0.1 || v > 3)
  )
    throw new KitError(
      'KIT_ERR_USAGE',
      `--rates is 2 to 6 multiples of capacity, each 0.1 to 3, comma-separated (like 0.5,1,1.5,2); got '${raw}'`,
    );
  return [...new Set(values)].sort((a, b) => a - b);
}

function intIn(name: string, raw: string | undefined, min: number, max: number, fallback: number): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || n < min || n > max)
    throw new KitError('KIT_ERR_USAGE', `--${name} is a whole number from ${min} to ${max}; got '${raw}'`);
  return n;
}

async function run(ctx: RunContext<Options>): Promise<OverloadResult> {
  const { lab, progress, options: o, machine } = ctx;
  progress.step('starting the service twice: without a shedder, and with ' + (o.mine ? 'yours' : "the kit's"));
  const shedder = o.mine ?? path.join(ROOT, SHED_EXERCISE.reference);
  const [plain, shedding] = await Promise.all([
    lab.start({ server: 'overload', args: ['--port', String(ctx.port)] }),
    lab.start({ server: 'overload', args: ['--port', '0', '--shedder', shedder, '--bound', String(o.boundMs)] }),
  ]);
  const closedLoop = (target: ServerProcess, durationS: number) =>
    runLoad({ url: `${target.url}/hash?id=1`, connections: CAPACITY_CONNECTIONS, durationS });
  progress.step(`warming both up, then measuring capacity: a closed loop of ${CAPACITY_CONNECTIONS} connections`);
  await closedLoop(shedding, WARM_S);
  await closedLoop(plain, WARM_S);
  const { value: capacity } = await measureSteadily(
    'capacity',
    async () => {
      const r = await closedLoop(plain, CAPACITY_S);
      if (r.counts.completed === 0)
        throw new KitError('KIT_ERR_REQUEST', 'the service answered nothing while its capacity was measured');
      return r.counts.completed / CAPACITY_S;
    },
    { progress },
  );
  progress.step(
    `capacity: ${Math.round(capacity)} req/s; each pass sets its rate from the worker's time per request as it begins`,
  );
  const steady = <T>(label: string, step: () => Promise<T>) =>
    measureSteadily(label, step, { progress }).then((r) => r.value);
  const passes: OverloadPass[] = [];
  if (!o.mine)
    for (const m of o.multiples) {
      progress.step(`a. ${m}× capacity for ${o.queueS} s, users who wait as long as it takes`);
      passes.push(await steady(`${m}× with no timeout`, () => pass(plain, 'queue', m, o.queueS, 60_000)));
    }
  for (const m of o.multiples.filter((x) => x > 1)) {
    progress.step(`b. ${m}× for ${o.timeoutS} s, users who give up after ${o.timeoutMs} ms`);
    passes.push(await steady(`${m}× with timeouts`, () => pass(plain, 'timeout', m, o.timeoutS, o.timeoutMs)));
    progress.step(`d. ${m}× for ${o.shedS} s against ${o.mine ? 'your' : "the kit's"} shedder`);
    passes.push(await steady(`${m}× with a shedder`, () => pass(shedding, 'shed', m, o.shedS, o.timeoutMs)));
  }
  const spikes: SpikeRun[] = [];
  if (!o.mine)
    for (const clients of ['no-retries', 'retries', 'breaker'] as const) {
      progress.step(`c. a spike, then ${o.spike.afterS} s below capacity: users with ${clients.replace('-', ' ')}`);
      spikes.push(await steady(`the spike, ${clients}`, () => spikeRun(plain, clients, o.spike, o)));
    }
  // The same spike in the simulator, with the service time the spike runs ran at.
  const model = spikes.length
    ? simulateSpikes({
        serviceMs: 1000 / (spikes.reduce((n, s) => n + s.capacity, 0) / spikes.length),
        timeoutMs: o.timeoutMs,
        retries: o.retries,
        plan: o.spike,
        seed: 1,
      }).runs
    : undefined;
  return {
    machine,
    capacity,
    serviceMs: 1000 / capacity,
    timeoutMs: o.timeoutMs,
    retries: o.retries,
    boundMs: o.boundMs,
    shedder: o.mine ? 'yours' : 'kit',
    passes,
    spikePlan: o.spike,
    spikes,
    ...(model ? { model } : {}),
  };
}

export const experiment = defineExperiment({
  name: 'overload',
  command,
  options: (flags): Options => ({
    multiples: multiplesFlag(flags.rates),
    timeoutMs: intIn('timeout', flags.timeout, 100, 5000, 500),
    retries: intIn('retries', flags.retries, 1, 5, 2),
    boundMs: intIn('bound', flags.bound, MIN_BOUND_MS, MAX_BOUND_MS, DEFAULT_BOUND_MS),
    mine: flags.mine ? studentFix(SHED_EXERCISE).file : undefined,
    queueS: flags.quick ? 1 : 3,
    timeoutS: flags.quick ? 1.5 : 3,
    shedS: flags.quick ? 1.5 : 3,
    spike: SPIKE_PLANS[flags.quick ? 'quick' : 'full'],
  }),
  run,
  report: { render, shape, hints, notShown, measures, predictions, examples },
  exercise: (o: Options) => (o.mine ? studentFix(SHED_EXERCISE) : undefined),
});

await runIfEntry(import.meta, experiment);
