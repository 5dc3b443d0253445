/**
 * Runs one simulated scenario of the lab and prints it in the matching experiment's table format
 * (`npx tsx sim/run.ts --scenario degraded`), or its Result as JSON (--json). The same --seed gives
 * the same tables and JSON, exactly (only the wall time line differs). Exit 0, 2 on a usage error,
 * 130/143 when interrupted.
 */
import { performance } from 'node:perf_hooks';
import { defineCommand, intFlag } from '../lib/cli.ts';
import { EXIT, KitError } from '../lib/errors.ts';
import { commandMain, runIfMain } from '../lib/entry.ts';
import { colorEnabled, makeChalk } from '../results/report/format.ts';
import { SCENARIOS, scenarioNamed } from './scenarios/index.ts';
import type { ScenarioOptions } from './scenarios/common.ts';

const command = defineCommand({
  usage:
    'npx tsx sim/run.ts --scenario <name> [--seed <n>] [--loop turns|fifo] [--json] [--requests <n>] [--stale-ms <ms>] [--window-s <s>] [--tolerance <fraction>]',
  summary:
    "Simulates one of the lab's scenarios (clients, balancer, replicas as queues; the balancer's own picking and failover code) in about a second " +
    '(the 100-replica stale scenario: about 15 s), ' +
    `and prints it as the matching experiment does. Scenarios: ${SCENARIOS.map((s) => `${s.name} (${s.summary})`).join('; ')}.`,
  flags: {
    scenario: { type: 'string', valueName: 'name', description: `one of ${SCENARIOS.map((s) => s.name).join(', ')}` },
    seed: {
      type: 'string',
      valueName: 'n',
      description: 'random seed, 0 to 2147483647: the same seed gives the same run',
      default: '1',
    },
    json: { type: 'boolean', description: "print the result as JSON (the mirrored experiment's Result type)" },
    requests: {
      type: 'string',
      valueName: 'n',
      description:
        'requests per run for the stale scenario, 1,000 to 10,000,000 (default 1,000,000; about 1.7 s of wall time per million)',
    },
    'stale-ms': {
      type: 'string',
      valueName: 'ms',
      description: "how old the balancer's load information is in the stale scenario, 1 to 10,000 ms (default 50)",
    },
    'window-s': {
      type: 'string',
      valueName: 's',
      description: "the autoscale scenario's scale-down stabilization window, 0 to 60 s (default 10)",
    },
    tolerance: {
      type: 'string',
      valueName: 'fraction',
      description: "the autoscale scenario's tolerance around the target, 0 to 0.5 (default 0.1)",
    },
    loop: {
      type: 'string',
      valueName: 'turns|fifo',
      description:
        "how a replica's event loop orders waiting requests: in turns as Node does, or first come, first served",
      default: 'turns',
    },
  },
  epilogue:
    'Example: npx tsx sim/run.ts --scenario degraded\n         npx tsx sim/run.ts --scenario stale --requests 200000 --stale-ms 5\nCompare with the lab: npx tsx measure/sim-vs-lab.ts',
});

/** The command; throws KIT_ERR_USAGE. */
export const main = commandMain(command, async (parsed, io) => {
  const { scenario, seed, loop, requests, staleMs, hpa } = runOptions(parsed.flags);
  const began = performance.now();
  const progress = (step: string) => io.stderr.write(`${step}\n`);
  // A long scenario yields between its simulations: stop there on a signal sent to this process.
  // The listeners go when the run ends, so that main() run again in one process adds none.
  const onSignal = { SIGINT: () => process.exit(EXIT.sigint), SIGTERM: () => process.exit(EXIT.sigterm) };
  for (const [signal, exit] of Object.entries(onSignal)) process.once(signal, exit);
  let run: Awaited<ReturnType<typeof scenario.run>>;
  try {
    run = await scenario.run({
      seed,
      loop,
      progress,
      ...(requests !== undefined ? { requests } : {}),
      ...(staleMs !== undefined ? { staleMs } : {}),
      ...(hpa ? { hpa } : {}),
    });
    await new Promise((resolve) => setTimeout(resolve, 0)); // a signal that came during the last simulation ends it here, before any output
  } finally {
    for (const [signal, exit] of Object.entries(onSignal)) process.off(signal, exit);
  }
  const wallMs = performance.now() - began;
  if (parsed.flags.json) {
    io.stdout.write(
      JSON.stringify(
        {
          scenario: scenario.name,
          mirrors: scenario.mirrors ?? null,
          seed,
          loop,
          totals: run.totals,
          result: run.result,
        },
        null,
        2,
      ) + '\n',
    );
    return 0;
  }
  const c = makeChalk(colorEnabled(io.stdout));
  io.stdout.write(run.render(colorEnabled(io.stdout)) + '\n');
  const { requests: n, runs } = run.totals;
  io.stdout.write(
    c.dim(
      `simulated ${n.toLocaleString('en-US')} requests in ${runs} run(s) in ${(wallMs / 1000).toFixed(2)} s of wall time` +
        (scenario.mirrors ? `; the lab: npx tsx measure/${scenario.mirrors}.ts` : ''),
    ) + '\n',
  );
  return 0;
});

await runIfMain(import.meta, main);

/** The scenario and its options from the flags, checked; KIT_ERR_USAGE naming the flag otherwise. */
function runOptions(flags: Record<string, string | boolean | undefined>) {
  const name = flags.scenario as string | undefined;
  if (!name)
    throw new KitError(
      'KIT_ERR_USAGE',
      'which scenario? --scenario is missing',
      `pick one of ${SCENARIOS.map((s) => s.name).join(', ')}`,
    );
  const scenario = scenarioNamed(name);
  if (!scenario)
    throw new KitError(
      'KIT_ERR_USAGE',
      `no scenario '${name}'`,
      `pick one of ${SCENARIOS.map((s) => s.name).join(', ')}`,
    );
  const seed = intFlag('seed', flags.seed as string, 0, 2 ** 31 - 1, 1);
  const requests =
    flags.requests === undefined
      ? undefined
      : intFlag('requests', flags.requests as string, 1000, 10_000_000, 1_000_000);
  const staleText = flags['stale-ms'] as string | undefined;
  if (staleText !== undefined && scenario.name !== 'stale')
    throw new KitError('KIT_ERR_USAGE', `--stale-ms is for the stale scenario, not ${scenario.name}`);
  const staleMs = staleText === undefined ? undefined : intFlag('stale-ms', staleText, 1, 10_000, 50);
  const hpa = hpaOverrides(
    flags['window-s'] as string | undefined,
    flags.tolerance as string | undefined,
    scenario.name,
  );
  const loop = String(flags.loop);
  if (loop !== 'turns' && loop !== 'fifo')
    throw new KitError('KIT_ERR_USAGE', `--loop is turns or fifo; got '${loop}'`);
  return { scenario, seed, loop: loop as 'turns' | 'fifo', requests, staleMs, hpa };
}

/** --window-s and --tolerance, checked, for the autoscale scenario only; KIT_ERR_USAGE otherwise. */
function hpaOverrides(
  windowText: string | undefined,
  toleranceText: string | undefined,
  scenario: string,
): ScenarioOptions['hpa'] {
  if (windowText === undefined && toleranceText === undefined) return undefined;
  if (scenario !== 'autoscale')
    throw new KitError('KIT_ERR_USAGE', `--window-s and --tolerance are for the autoscale scenario, not ${scenario}`);
  const tolerance = toleranceText === undefined ? undefined : Number(toleranceText);
  if (tolerance !== undefined && !(toleranceText!.trim() !== '' && tolerance >= 0 && tolerance <= 0.5))
    throw new KitError('KIT_ERR_USAGE', `--tolerance must be a fraction from 0 to 0.5; got '${toleranceText}'`);
  return {
    ...(windowText !== undefined ? { windowMs: 1000 * intFlag('window-s', windowText, 0, 60, 10) } : {}),
    ...(tolerance !== undefined ? { tolerance } : {}),
  };
}
