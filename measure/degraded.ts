/**
 * Lesson 4 · degraded: one slow replica, four policies.
 *
 * Starts 3 replicas; a hog keeps replica app3's event loop blocked by sending it /stall?ms=30
 * directly (3 connections, bypassing the balancer; --hog busy sends /slow-sync?ms=30 instead). Meanwhile /fast goes through the balancer
 * (6 connections) under each policy, in interleaved rounds (6; 4 with --quick): every round gives
 * each policy one short slice, and a policy's numbers come from all its slices.
 */
import { defineCommand, intFlag } from '../lib/cli.ts';
import { KitError } from '../lib/errors.ts';
import { COMMON_FLAGS, defineExperiment, runIfEntry, type RunContext } from './lib/harness/experiment.ts';
import { ROUNDS, runDegraded, type DegradedOptions } from './lib/load/degraded-run.ts';
import { balancerKind, LB_FLAG } from './lib/process/topology.ts';
import { twoChoicesSampling } from '../servers/lib/balancer/upstreams.ts';
import { caveats, hints, render, shape } from '../results/degraded/report.ts';
import { measures, predictions } from '../results/degraded/predictions.ts';

const command = defineCommand({
  usage: 'npx tsx measure/degraded.ts [flags]',
  summary:
    'Keeps one of three replicas busy (its event loop blocked by a stream of 30 ms requests) and measures /fast through the ' +
    'balancer under each policy: throughput, p50, p95, p99, and how many requests each replica got.',
  flags: {
    ...COMMON_FLAGS,
    lb: LB_FLAG,
    runs: {
      type: 'string',
      valueName: 'n',
      description: `rounds: each policy is measured once per round, interleaved (default ${ROUNDS.full}; --quick ${ROUNDS.quick})`,
    },
    hog: {
      type: 'string',
      valueName: 'stall|busy',
      description: 'block app3 by sleeping (stall) or by burning CPU (busy)',
      default: 'stall',
    },
    'two-choices': {
      type: 'string',
      valueName: 'distinct|with-replacement',
      description: "how power of two choices samples its two replicas (the kit's balancer only; lesson 4, exercise 1)",
      default: 'distinct',
    },
  },
  epilogue:
    'Examples: npx tsx measure/degraded.ts --lb nginx\n          npx tsx measure/degraded.ts --two-choices with-replacement   (lesson 4, exercise 1)',
});

export const experiment = defineExperiment({
  name: 'degraded',
  command,
  options: (flags) => {
    const hog = String(flags.hog);
    if (hog !== 'stall' && hog !== 'busy') throw new KitError('KIT_ERR_USAGE', `--hog is stall or busy; got '${hog}'`);
    const lb = balancerKind(flags.lb);
    const twoChoices = twoChoicesSampling(flags['two-choices']);
    if (lb === 'nginx' && twoChoices !== 'distinct')
      throw new KitError(
        'KIT_ERR_USAGE',
        "--two-choices with-replacement needs the kit's balancer (--lb builtin): nginx's random two has no such setting",
      );
    return { lb, runs: intFlag('runs', flags.runs, 1, 20, flags.quick ? ROUNDS.quick : ROUNDS.full), hog, twoChoices };
  },
  run: async (ctx: RunContext<DegradedOptions>) => (await runDegraded(ctx)).result,
  report: { render, shape, hints, caveats, measures, predictions },
});

await runIfEntry(import.meta, experiment);
