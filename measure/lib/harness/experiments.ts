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
  if (!EXPERIMENTS.includes(name)) throw new KitError('KIT_ERR_USAGE', `no experiment '${name}'; the experiments are ${EXPERIMENTS.join(', ')}`);
  const mod = (await import(`../../${name}.ts`)) as { experiment: Experiment<FlagSpecs, unknown, unknown> };
  return mod.experiment;
}
