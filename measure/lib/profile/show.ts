/**
 * What a --profile run prints once its servers have stopped: the cost of profiling on this
 * machine, then each process's heaviest functions (render.ts).
 */
import { colorEnabled } from '../../../results/report/format.ts';
import type { Io } from '../../../lib/entry.ts';
import { Lab } from '../process/lab.ts';
import type { Progress } from '../harness/progress.ts';
import { renderProfiles } from './render.ts';
import { costSentence, profilingCost } from './cost.ts';
import type { ProfileSession } from './session.ts';

/**
 * After a --profile run: what profiling costs on this machine, in a lab of its own (the run's is
 * closed; `adopt` hands it to the caller, so that Ctrl-C stops its replicas too), then the
 * profiles with that cost, on stderr.
 */
export async function showProfiles(
  profile: ProfileSession,
  progress: Progress,
  io: Io,
  adopt: (lab: Lab) => void,
): Promise<void> {
  const lab = new Lab();
  adopt(lab);
  lab.log = (l) => progress.note(l);
  const cost = await profilingCost(lab, progress);
  await lab.close();
  progress.done();
  io.stderr.write(
    '\n' + renderProfiles(profile.collect(), profile.dir, colorEnabled(io.stderr), costSentence(cost)) + '\n',
  );
}
