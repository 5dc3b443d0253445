/**
 * The experiments by name (LESSONS names them): each measure/<name>.ts exports its experiment as
 * data, so the lesson runner and the tests run it in this process instead of starting another.
 */
import type { FlagSpecs } from '../../../lib/cli.ts';
import { KitError } from '../../../lib/errors.ts';
import type { Experiment } from './experiment.ts';
import { LESSONS } from './lessons.ts';

/** Every experiment's name, in lesson order. */
export const EXPERIMENTS = LESSONS.flatMap((l) => l.experiments);

/** Imports measure/<name>.ts and returns its experiment; KIT_ERR_USAGE for a name that is none. */
export async function loadExperiment(name: string): Promise<Experiment<FlagSpecs, unknown, unknown>> {
  if (!EXPERIMENTS.includes(name))
    throw new KitError('KIT_ERR_USAGE', `no experiment '${name}'; the experiments are ${EXPERIMENTS.join(', ')}`);
  const mod = (await import(`../../${name}.ts`)) as { experiment: Experiment<FlagSpecs, unknown, unknown> };
  return mod.experiment;
}

/**
 * The experiments among `names` that put a load balancer in front of replicas: those whose command
 * takes --lb (builtin or nginx). The lesson runner and fidelity pass them the --lb they were given.
 */
export async function balancedExperiments(names: readonly string[]): Promise<Set<string>> {
  const out = new Set<string>();
  for (const name of names) if ('lb' in (await loadExperiment(name)).command.flags) out.add(name);
  return out;
}
