/**
 * One run's profiling (--profile): every Node process the Lab starts is started with `--cpu-prof`
 * (a cluster's forked workers inherit it from process.execArgv), and writes its profile into one
 * folder when it exits. Each server gets a folder of its own, which its cluster workers share, so
 * a worker's profile is named after the server that forked it. The experiment names the windows
 * that matter (each half of the load, say) with window(); without them, every load the kit's
 * generators send (load/windows.ts) is a window. collect() then cuts every profile to them
 * (collect.ts).
 */
import path from 'node:path';
import { monotonicUs } from '../load/windows.ts';
import { collectProfiles, type ProcessProfile } from './collect.ts';
import type { Window } from '../../../results/report/cpuprofile.ts';

export class ProfileSession {
  /** Windows by label, in the order they were first opened; µs on the profiles' clock. */
  readonly windows = new Map<string, Window[]>();
  /** Server names by the pid the lab started them with. */
  readonly names = new Map<number, string>();
  /** Each server's own profile folder (under dir/raw) with its name: its workers write there too. */
  readonly folders = new Map<string, string>();
  /** The loads the kit's generators sent during the run (load/windows.ts), set by the harness. */
  loads: readonly Window[] = [];
  private collected: ProcessProfile[] | undefined;

  /** `dir`: where the profiles go; Node makes it when the first process exits. */
  constructor(readonly dir: string) {}

  /**
   * Node's options for a child (not NODE_OPTIONS, which refuses --cpu-prof): a cluster primary's
   * workers inherit them through process.execArgv, so they are profiled too.
   */
  nodeArgs(server: string): string[] {
    const folder = path.join(this.dir, 'raw', `${server}-${this.folders.size + 1}`);
    this.folders.set(folder, server);
    return ['--cpu-prof', `--cpu-prof-dir=${folder}`];
  }

  /** Runs `f`, and counts the time it takes as window `label` (a label may have several windows). */
  async window<T>(label: string, f: () => Promise<T>): Promise<T> {
    const fromUs = monotonicUs();
    try {
      return await f();
    } finally {
      const list = this.windows.get(label) ?? [];
      list.push({ fromUs, toUs: monotonicUs() });
      this.windows.set(label, list);
    }
  }

  /**
   * The profiles, cut to the windows (collectProfiles), read once: call it after the processes
   * have exited, since each writes its profile on exit.
   */
  collect(): ProcessProfile[] {
    const windows = this.windows.size
      ? this.windows
      : this.loads.length
        ? new Map([['load', this.loads]])
        : new Map([['run', this.run ? [this.run] : []]]);
    this.collected ??= collectProfiles(this.dir, this.folders, this.names, windows);
    return this.collected;
  }

  /** The whole run (set by the harness): the window of an experiment that names none of its own. */
  run: Window | undefined;
}
