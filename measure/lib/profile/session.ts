/**
 * One run's profiling (--profile): every Node process the Lab starts is started with `--cpu-prof`
 * (a cluster's forked workers inherit it from process.execArgv), and writes its profile into one
 * folder when it exits. The experiment names the windows that matter (the load, or each half of
 * it) with window(); collect() then cuts every profile to them (collect.ts).
 */
import { collectProfiles, type ProcessProfile } from './collect.ts';
import type { Window } from '../../../results/report/cpuprofile.ts';

/** The machine's monotonic clock in µs: the clock a CPU profile's startTime is on (results/report/cpuprofile.ts). */
export function profileClockUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

export class ProfileSession {
  /** Windows by label, in the order they were first opened; µs on the profiles' clock. */
  readonly windows = new Map<string, Window[]>();
  /** Server names by the pid the lab started them with. */
  readonly names = new Map<number, string>();
  private collected: ProcessProfile[] | undefined;

  /** `dir`: where the profiles go; Node makes it when the first process exits. */
  constructor(readonly dir: string) {}

  /**
   * Node's options for a child (not NODE_OPTIONS, which refuses --cpu-prof): a cluster primary's
   * workers inherit them through process.execArgv, so they are profiled too.
   */
  nodeArgs(): string[] {
    return ['--cpu-prof', `--cpu-prof-dir=${this.dir}`];
  }

  /** Runs `f`, and counts the time it takes as window `label` (a label may have several windows). */
  async window<T>(label: string, f: () => Promise<T>): Promise<T> {
    const fromUs = profileClockUs();
    try {
      return await f();
    } finally {
      const list = this.windows.get(label) ?? [];
      list.push({ fromUs, toUs: profileClockUs() });
      this.windows.set(label, list);
    }
  }

  /**
   * The profiles, cut to the windows (collectProfiles), read once: call it after the processes
   * have exited, since each writes its profile on exit.
   */
  collect(): ProcessProfile[] {
    const windows = this.windows.size ? this.windows : new Map([['run', this.run ? [this.run] : []]]);
    this.collected ??= collectProfiles(this.dir, this.names, windows);
    return this.collected;
  }

  /** The whole run (set by the harness): the window of an experiment that names none of its own. */
  run: Window | undefined;
}
