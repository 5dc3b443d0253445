/**
 * Lesson 1 · stall: what a frozen server does to each kind of load generator's p99.
 *
 * Starts one replica and, three times over, sends it a light load (GET /fast) while the replica is
 * frozen with SIGSTOP for STALL_MS in the middle of the pass: a closed loop (autocannon, as fast as
 * the answers come), an open loop (measure/lib/load/open-loop.ts, RATE req/s timed from each
 * request's intended send time) and a closed loop with a rate (autocannon's overallRate). Each pass
 * reports p50, p99, max, the achieved rate, and how many of its samples saw the stall.
 */
import { performance } from 'node:perf_hooks';
import { defineCommand } from '../lib/cli.ts';
import { KitError } from '../lib/errors.ts';
import { COMMON_FLAGS, defineExperiment, runIfEntry, type RunContext } from './lib/harness/experiment.ts';
import { runLoad } from './lib/load/load.ts';
import { runOpenLoop } from './lib/load/open-loop.ts';
import type { ServerProcess } from './lib/process/launch.ts';
import { startReplicas } from './lib/process/topology.ts';
import { hints, render, shape, type LoopName, type StallPass, type StallResult } from '../results/stall/report.ts';
import { examples } from '../results/stall/examples.ts';
import { measures, predictions } from '../results/stall/predictions.ts';

const command = defineCommand({
  usage: 'npx tsx measure/stall.ts [flags]',
  summary:
    'Freezes one server (SIGSTOP) for 1 s in the middle of a light load, measured three ways: a closed loop, an open loop ' +
    'and a closed loop with a rate. Shows what each one’s p99 says about the stall, and how many samples each took during it.',
  flags: { ...COMMON_FLAGS },
  epilogue: 'Example: npx tsx measure/stall.ts --predict',
});

/** How long the server is frozen, ms: long enough to dwarf a light request, short enough for a lesson. */
const STALL_MS = 1000;
/**
 * The open loop's and the rated loop's rate, req/s: a light route on one core handles thousands,
 * so the server keeps up easily before and after the stall; and 4 connections' stuck requests are
 * under 1 % of the rated loop's samples (1 of 200 over 2 s), so its p99 shows what it took, not
 * the handful it kept waiting.
 */
const RATE = 400;
/** An answer ending this soon after the freeze was written before it, ms (see pass()). */
const EDGE_MS = 5;
/** Connections of every generator: each one's "about one sample per connection" is then 4. */
const CONNECTIONS = 4;

interface Options {
  durationS: number;
}

/** A generator's pass: it reports each answer (start and end, ms on performance.now()) as it comes. */
type Generate = (onAnswer: (startAt: number, endAt: number) => void) => Promise<Omit<StallPass, 'duringStall'>>;

/**
 * One pass: starts `generate`, freezes `proc` for STALL_MS in the middle of `durationS`, and counts
 * the answers `generate` reports (start and end, ms on performance.now()) that overlap the freeze.
 */
export async function pass(
  proc: ServerProcess,
  durationS: number,
  generate: Generate,
): Promise<{ pass: StallPass; stallMs: number }> {
  const answers: [number, number][] = [];
  const started = performance.now();
  let stoppedAt = 0;
  let wokeAt = 0;
  let wake: NodeJS.Timeout | undefined;
  const freeze = setTimeout(
    () => {
      stoppedAt = performance.now();
      proc.signal('SIGSTOP');
      wake = setTimeout(() => {
        proc.signal('SIGCONT');
        wokeAt = performance.now();
      }, STALL_MS);
    },
    (durationS * 1000 - STALL_MS) / 2,
  );
  let result: Omit<StallPass, 'duringStall'>;
  try {
    result = await generate((startAt, endAt) => answers.push([startAt, endAt]));
  } finally {
    clearTimeout(freeze);
    clearTimeout(wake);
    proc.signal('SIGCONT'); // never leave it frozen, whatever happened
    wokeAt ||= performance.now();
  }
  // An answer that ends within EDGE_MS of the freeze was already on its way: the server wrote it
  // before it stopped. Counted, it made a fast closed loop read two samples per connection.
  if (stoppedAt === 0)
    throw new KitError(
      'KIT_ERR_REQUEST',
      `the load ended after ${((performance.now() - started) / 1000).toFixed(1)} s, before the replica was frozen: nothing to measure`,
    );
  const duringStall = answers.filter(([s, e]) => s < wokeAt && e > stoppedAt + EDGE_MS).length;
  return { pass: { ...result, duringStall }, stallMs: wokeAt - stoppedAt };
}

/** A pass of autocannon: as fast as answered, or at `rate` (overallRate). */
function closedLoop(url: string, loop: LoopName, durationS: number, rate?: number): Generate {
  return async (onAnswer: (startAt: number, endAt: number) => void) => {
    const r = await runLoad({
      url,
      connections: CONNECTIONS,
      durationS,
      ...(rate ? { rate } : {}),
      onAnswer: (ms: number, status: number | undefined) => {
        if (status === undefined) return; // an error, not an answer (load.ts reports it as 0 ms)
        const end = performance.now();
        onAnswer(end - ms, end);
      },
    });
    return {
      loop,
      ...(rate ? { rate } : {}),
      connections: CONNECTIONS,
      answered: r.counts.completed,
      // autocannon's errors include its timeouts.
      errors: r.counts.errors + r.counts.non2xx,
      achievedRate: r.counts.completed / durationS,
      p50Ms: r.latency.p50,
      p99Ms: r.latency.p99,
      maxMs: r.latency.max,
      generatorCpu: r.generatorCpu,
    };
  };
}

/**
 * A pass of the kit's open loop at RATE. `timeFrom` `written` is coordinated omission put back,
 * for the test that shows the shape fails without the intended send time.
 */
export function openLoop(url: string, durationS: number, timeFrom: 'intended' | 'written' = 'intended'): Generate {
  return async (onAnswer: (startAt: number, endAt: number) => void) => {
    const r = await runOpenLoop({
      url,
      rate: RATE,
      durationS,
      connections: CONNECTIONS,
      timeFrom,
      onAnswer: (ms, _status, _intendedAt, endAt) => onAnswer(endAt - ms, endAt),
    });
    return {
      loop: 'open-loop' as const,
      rate: RATE,
      connections: CONNECTIONS,
      answered: r.answered,
      errors: r.errors + r.dropped,
      achievedRate: r.achievedRate,
      p50Ms: r.latency.p50,
      p99Ms: r.latency.p99,
      maxMs: r.latency.max,
      generatorCpu: r.generatorCpu,
      latenessP99Ms: r.lateness.p99,
      latenessMaxMs: r.lateness.max,
      generatorLimited: r.generatorLimited,
    };
  };
}

async function run({ lab, progress, options, port, machine }: RunContext<Options>): Promise<StallResult> {
  const { durationS } = options;
  progress.step('starting one replica');
  const [replica] = await startReplicas(lab, 1, ['--port', String(port)]);
  const url = `${replica!.url}/fast`;
  progress.step('warming up: 0.5 s of /fast on 4 connections');
  await runLoad({ url, connections: CONNECTIONS, durationS: 0.5 });
  const passes: StallPass[] = [];
  const stalls: number[] = [];
  const plan: [LoopName, string, Generate][] = [
    [
      'closed-loop',
      `autocannon, ${CONNECTIONS} connections as fast as answered`,
      closedLoop(url, 'closed-loop', durationS),
    ],
    ['open-loop', `the kit's open loop, ${RATE} req/s`, openLoop(url, durationS)],
    [
      'rated-closed-loop',
      `autocannon, ${CONNECTIONS} connections at ${RATE} req/s`,
      closedLoop(url, 'rated-closed-loop', durationS, RATE),
    ],
  ];
  for (const [, label, generate] of plan) {
    progress.step(`${label} for ${durationS} s, the server frozen for ${STALL_MS / 1000} s in the middle`);
    const { pass: p, stallMs } = await pass(replica!.proc, durationS, generate);
    passes.push(p);
    stalls.push(stallMs);
  }
  return { machine, stallMs: Math.round(Math.min(...stalls)), durationS, passes };
}

export const experiment = defineExperiment({
  name: 'stall',
  command,
  options: (flags) => ({ durationS: flags.quick ? 3 : 5 }),
  run,
  report: { render, shape, hints, measures, predictions, examples },
});

await runIfEntry(import.meta, experiment);
