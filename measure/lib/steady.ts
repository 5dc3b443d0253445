/**
 * A measurement step taken again when, while it ran, other programs or other virtual machines on
 * the host (steal) took CPU the finding assumes is the kit's. Such a step measures the neighbour,
 * not the lesson's mechanism: on this 2-vCPU VM a steal burst of about 0.5 cores turned a 1 ms
 * proxy into a 2 ms one and stopped the I/O-bound route's throughput from growing with
 * connections. The step is repeated a bounded number of times and the least disturbed try is
 * kept; each repeat is said in the progress output, so a student sees the noise and its cause.
 * Without /proc (macOS) the CPU comes from os.cpus() and ps (measure/lib/contention.ts), with no steal.
 */
import { busiestPrograms, formatPrograms, otherCpu, takeSnapshot, type BusyProgram } from './contention.ts';
import type { Progress } from './progress.ts';

/**
 * Other programs' and other VMs' CPU during a step, in cores' worth, from which the step is taken
 * again. An idle 2-vCPU VM here shows 0.00–0.05 over a step of a second; the run-level note starts
 * at 0.25 of steal (results/format.ts BUSY_STEAL_CORES), so a step this disturbed is always one a
 * note would blame.
 */
export const STEP_BUSY_CORES = 0.2;

/** Tries of one step at most; the least disturbed is kept when none was quiet. */
export const STEP_TRIES = 3;

export interface SteadyOptions {
  /** Where repeats are said (optional). */
  progress?: Pick<Progress, 'note'>;
  /** Cores' worth from which a try counts as disturbed (default STEP_BUSY_CORES). */
  busyCores?: number;
  tries?: number;
  /** Where the CPU of other programs is read (a test passes a fake; the default reads /proc). */
  disturbance?: () => () => Disturbance | undefined;
}

/** The step's value, how many tries it took, and how disturbed the kept try was (cores' worth; undefined without /proc). */
export interface SteadyResult<T> {
  value: T;
  tries: number;
  busyCores: number | undefined;
}

/** What disturbed one try, cores' worth: other programs' processes, and other virtual machines (steal). */
export interface Disturbance {
  otherCores: number;
  stealCores: number;
  /** The busiest other programs during the try, when known. */
  programs?: BusyProgram[];
}

/** Starts watching other programs' CPU; the returned function gives what they took since then. */
function watchOthers(): () => Disturbance | undefined {
  const before = takeSnapshot();
  return () => {
    const after = takeSnapshot();
    return before && after ? { ...otherCpu(before, after, { reaped: false }), programs: busiestPrograms(before, after) } : undefined;
  };
}

/**
 * Runs `step` until one try is quiet (other programs' CPU under `busyCores`) or `tries` are used.
 * Errors from `step` propagate at once (a failure is not noise).
 */
export async function measureSteadily<T>(label: string, step: () => Promise<T>, o: SteadyOptions = {}): Promise<SteadyResult<T>> {
  const limit = o.busyCores ?? STEP_BUSY_CORES;
  const tries = o.tries ?? STEP_TRIES;
  let best: SteadyResult<T> | undefined;
  for (let attempt = 1; attempt <= tries; attempt++) {
    const since = (o.disturbance ?? watchOthers)();
    const value = await step();
    const seen = since();
    const busy = seen && Math.round((seen.otherCores + seen.stealCores) * 100) / 100;
    if (!best || (busy ?? 0) < (best.busyCores ?? 0)) best = { value, tries: attempt, busyCores: busy };
    best.tries = attempt;
    if (!seen || busy! < limit) break;
    const next = attempt < tries ? `measuring it again (try ${attempt + 1} of ${tries})` : `keeping the least disturbed of ${tries} tries (${best.busyCores!.toFixed(2)} cores)`;
    const who = seen.programs?.length ? ` (the busiest: ${formatPrograms(seen.programs)})` : '';
    o.progress?.note(`${label}: other programs took ${seen.otherCores.toFixed(2)} of the cores during it${who} and other virtual machines ${seen.stealCores.toFixed(2)} (steal); ${next}`);
  }
  return best!;
}
