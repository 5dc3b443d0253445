/**
 * Lesson 3 · blocking: does a heavy request on the event loop make light requests wait?
 *
 * Starts the loan service, sends one heavy password check and, 50 ms later, four light `/books`
 * requests (each on its own connection); first with scrypt on the event loop, then on the thread
 * pool. Prints the durations and the server's event-loop delay, and checks the shape.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { defineCommand, intFlag } from '../lib/cli.ts';
import { COMMON_FLAGS, defineExperiment, runIfEntry, type RunContext } from './lib/harness/experiment.ts';
import { median } from '../results/report/latency.ts';
import { probeOk } from './lib/load/probe.ts';
import type { LoanServiceStats } from '../servers/contracts.ts';
import { formatCost, parseCost } from '../servers/lib/cpu/scrypt-cost.ts';
import { COST_FLAG, heavyCost } from './lib/harness/costs.ts';
import { studentFix, VERIFY_EXERCISE } from './lib/exercise/specs.ts';
import {
  caveats,
  hints,
  measures,
  render,
  shape,
  type BlockingBlock,
  type BlockingResult,
} from '../results/blocking/report.ts';
import { predictions } from '../results/blocking/predictions.ts';

const command = defineCommand({
  usage: 'npx tsx measure/blocking.ts [flags]',
  summary:
    'Sends one heavy password check (scrypt) and, 50 ms later, four light /books requests, each on its own ' +
    'connection: first with scrypt on the event loop (/member/verify-blocking), then on the thread pool ' +
    "(/member/verify-pooled). Shows how long the light requests took and the server's event-loop delay.",
  flags: {
    ...COMMON_FLAGS,
    cost: COST_FLAG,
    light: { type: 'string', valueName: 'n', description: 'how many light requests to send', default: '4' },
    offset: {
      type: 'string',
      valueName: 'ms',
      description: 'how long after the heavy request to send them',
      default: '50',
    },
    mine: {
      type: 'boolean',
      description:
        "the lesson's exercise: /member/verify-blocking hashes with your exercises/lesson-3/verify.ts (copied on first use); its answers to eight password checks are compared with the kit's check first, and once it no longer holds the event loop the blocking half reads like the pooled one (expected-output/fixed/blocking.txt)",
    },
  },
  epilogue: 'Example: npx tsx measure/blocking.ts --shape | diff - expected-output/blocking.txt',
});

/** Functions per half kept in the result from the loan service's profile, heaviest self time first. */
const PROFILE_TOP = 5;

interface Options {
  cost: string;
  light: number;
  offsetMs: number;
  /** With --mine: the student's copy of servers/exercises/lesson-3/verify.ts. */
  mine: string | undefined;
}

async function run({ lab, progress, options, port, machine, profile }: RunContext<Options>): Promise<BlockingResult> {
  progress.step('starting the loan service');
  const server = await lab.start({
    server: 'loan',
    args: ['--port', String(port), '--cost', options.cost, ...(options.mine ? ['--verify', options.mine] : [])],
  });
  for (let i = 0; i < 3; i++) await probeOk(`${server.url}/books`); // warm up: first requests pay for JIT and sockets
  // The yardstick for "answered at once": the same light requests, sent together, with nothing else running.
  progress.step(`${options.light} × /books with nothing else running (the yardstick)`);
  const idle: number[] = [];
  for (let round = 0; round < 3; round++) {
    const lights = await Promise.all(Array.from({ length: options.light }, () => probeOk(`${server.url}/books`)));
    idle.push(Math.max(...lights.map((l) => l.ms)));
  }

  const blocks: BlockingBlock[] = [];
  for (const [mode, route] of [
    ['blocking', 'verify-blocking'],
    ['pooled', 'verify-pooled'],
  ] as const) {
    progress.step(`one heavy /member/${route}, then ${options.light} × /books ${options.offsetMs} ms later`);
    await probeOk(`${server.url}/stats/reset`, { method: 'POST' });
    const half = async () => {
      const heavy = probeOk(`${server.url}/member/${route}`);
      await delay(options.offsetMs); // the experiment's design, not a readiness wait
      const lights = await Promise.all(Array.from({ length: options.light }, () => probeOk(`${server.url}/books`)));
      return { lights, heavyDone: await heavy };
    };
    const { lights, heavyDone } = profile ? await profile.window(mode, half) : await half();
    const stats = await probeOk<LoanServiceStats>(`${server.url}/stats`);
    blocks.push({
      mode,
      route,
      heavyMs: heavyDone.ms,
      lightMs: lights.map((l) => l.ms),
      eventLoopDelayMaxMs: stats.body.eventLoopDelay.maxMs,
      // Not under --profile: V8's CPU profiler makes an idle loop read 95 % utilized (measured here).
      ...(profile ? {} : { eventLoopUtilization: stats.body.eventLoopUtilization }),
    });
  }
  // The loan service writes its profile when it exits: stopped here, so that the result holds it.
  if (profile) await lab.stop(server);
  const loan = profile?.collect().find((p) => p.name === 'loan');
  return {
    machine,
    heavyCost: formatCost(parseCost(options.cost)),
    offsetMs: options.offsetMs,
    idleLightMs: median(idle),
    blocks,
    ...(profile
      ? {
          profile: {
            windows: (loan?.windows ?? []).map((w) => ({
              label: w.label,
              samples: w.samples,
              top: w.selfTimes.slice(0, PROFILE_TOP),
            })),
          },
        }
      : {}),
  };
}

export const experiment = defineExperiment({
  name: 'blocking',
  command,
  options: (flags) => ({
    cost: heavyCost(flags.cost, flags.quick),
    light: intFlag('light', flags.light, 1, 16, 4),
    offsetMs: intFlag('offset', flags.offset, 0, 1000, 50),
    mine: flags.mine ? studentFix(VERIFY_EXERCISE).file : undefined,
  }),
  run,
  report: { render, shape, hints, caveats, measures, predictions },
  exercise: (o: Options) => (o.mine ? studentFix(VERIFY_EXERCISE) : undefined),
});

await runIfEntry(import.meta, experiment);
