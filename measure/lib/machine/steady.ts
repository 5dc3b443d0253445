/**
 * A measurement step taken again when, while it ran, other programs or other virtual machines on
 * the host (steal) took CPU the finding assumes is the kit's. Such a step measures the neighbour,
 * not the lesson's mechanism: on this 2-vCPU VM a steal burst of about 0.5 cores turned a 1 ms
 * proxy into a 2 ms one and stopped the I/O-bound route's throughput from growing with
 * connections. The step is repeated a bounded number of times and the least disturbed try is
 * kept; each repeat is said in the progress output, so a student sees the noise and its cause.
 * Without /proc (macOS) the CPU comes from os.cpus() and ps (measure/lib/machine/contention.ts), with no steal.
 */
import { busiestPrograms, formatPrograms, otherCpu, takeSnapshot, type BusyProgram } from './contention.ts';
import type { Progress } from '../harness/progress.ts';

/**
 * Other programs' and other VMs' CPU during a step, in cores' worth, from which the step is taken
 * again. An idle 2-vCPU VM here shows 0.00–0.05 over a step of a second; the run-level note starts
 * at 0.25 of steal (results/report/format.ts BUSY_STEAL_CORES), so a step this disturbed is always one a
 * note would blame.
 */
export const STEP_BUSY_CORES = 0.2;

/** Tries of one step at most; the least disturbed is kept when none was quiet. */
export const STEP_TRIES = 3;

/**
 * How many recent tries the steady part of the disturbance is read from. A browser tab or a video
 * call takes a steady share of a core that no repeat can wait out: with 0.25 of a core taken
 * throughout, every step of lesson 1 was measured three times (112 s instead of about 45). So a
 * try counts as disturbed only when it took `busyCores` more than the least of the recent tries
 * (the floor), which stays 0 on an idle machine; the run's caveat still says the machine was busy.
 */
const FLOOR_TRIES = 6;

/** The disturbance of recent tries (cores' worth), oldest first; one per process by default. */
export class DisturbanceHistory {
  private readonly seen: number[] = [];

  /**
   * The steady part: the least of the recent tries, once two were seen and when it is at least
   * STEADY_FLOOR_CORES; else 0, so an idle machine's 0.00-0.05 leaves the threshold where it was.
   */
  floor(): number {
    const least = this.seen.length >= 2 ? Math.min(...this.seen) : 0;
    return least >= STEADY_FLOOR_CORES ? least : 0;
  }

  add(busy: number): void {
    this.seen.push(busy);
    if (this.seen.length > FLOOR_TRIES) this.seen.shift();
  }
}

/** The least steady load that raises the floor, cores' worth: half of STEP_BUSY_CORES, twice an idle machine's noise. */
const STEADY_FLOOR_CORES = 0.1;

const PROCESS_HISTORY = new DisturbanceHistory();

interface SteadyOptions {
  /** Where repeats are said (optional). */
  progress?: Pick<Progress, 'note'>;
  /** Cores' worth from which a try counts as disturbed (default STEP_BUSY_CORES). */
  busyCores?: number;
  tries?: number;
  /** Where the CPU of other programs is read (a test passes a fake; the default reads /proc). */
  disturbance?: () => () => Disturbance | undefined;
  /** Recent tries, for the floor (default: this process's). */
  history?: DisturbanceHistory;
}

/** The step's value, how many tries it took, and how disturbed the kept try was (cores' worth; undefined without /proc). */
interface SteadyResult<T> {
  value: T;
  tries: number;
  busyCores: number | undefined;
}

/** What disturbed one try, cores' worth: other programs' processes, and other virtual machines (steal). */
interface Disturbance {
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
    return before && after
      ? { ...otherCpu(before, after, { reaped: false }), programs: busiestPrograms(before, after) }
      : undefined;
  };
}

/**
 * Runs `step` until one try is quiet (other programs' CPU under `busyCores` above the floor of
 * recent tries, see FLOOR_TRIES) or `tries` are used. Errors from `step` propagate at once (a
 * failure is not noise).
 */
export async function measureSteadily<T>(
  label: string,
  step: () => Promise<T>,
  o: SteadyOptions = {},
): Promise<SteadyResult<T>> {
  const limit = o.busyCores ?? STEP_BUSY_CORES;
  const tries = o.tries ?? STEP_TRIES;
  let best: SteadyResult<T> | undefined;
  const history = o.history ?? PROCESS_HISTORY;
  for (let attempt = 1; attempt <= tries; attempt++) {
    const since = (o.disturbance ?? watchOthers)();
    const value = await step();
    const seen = since();
    const busy = seen && Math.round((seen.otherCores + seen.stealCores) * 100) / 100;
    if (!best || (busy ?? 0) < (best.busyCores ?? 0)) best = { value, tries: attempt, busyCores: busy };
    best.tries = attempt;
    const floor = history.floor();
    if (busy !== undefined) history.add(busy);
    if (!seen || busy! < floor + limit) break;
    const next =
      attempt < tries
        ? `measuring it again (try ${attempt + 1} of ${tries})`
        : `keeping the least disturbed of ${tries} tries (${best.busyCores!.toFixed(2)} cores)`;
    const who = seen.programs?.length ? ` (the busiest: ${formatPrograms(seen.programs)})` : '';
    o.progress?.note(
      `${label}: other programs took ${seen.otherCores.toFixed(2)} of the cores during it${who} and other virtual machines ${seen.stealCores.toFixed(2)} (steal); ${next}`,
    );
  }
  return best!;
}
