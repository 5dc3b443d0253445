/**
 * A Lab owns every server one run starts and guarantees they all end: when the run finishes,
 * when it fails, and when it is interrupted (SIGINT from Ctrl-C, SIGTERM). As a last resort, a
 * synchronous 'exit' hook SIGKILLs whatever is still registered.
 * Entry scripts create one Lab per run; helpers receive it, so no module holds mutable state.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { KitError } from '../../../lib/errors.ts';
import { launch, type LaunchSpec, type ServerProcess } from './launch.ts';
import { signalGroup } from '../../../lib/terminate.ts';
import type { ProfileSession } from '../profile/session.ts';
import type { LoopWatch } from '../profile/loops.ts';

export class Lab {
  private readonly running = new Set<ServerProcess>();
  private readonly tempDirs: string[] = [];
  private readonly afterStop: (() => Promise<void>)[] = [];
  private closing: Promise<void> | undefined;
  private readonly onExit = () => {
    for (const p of this.running) signalGroup(p.pid, 'SIGKILL');
  };
  /** Called with a line whenever a server starts or stops (the progress reporter shows it). */
  log: (line: string) => void = () => {};
  /** With --profile: every server is started under the CPU profiler, and named for its profile. */
  profile: ProfileSession | undefined;
  /** Every server (and its cluster workers) reports its event loop to this watch's folder (profile/loops.ts). */
  loops: LoopWatch | undefined;

  constructor() {
    process.on('exit', this.onExit);
  }

  /** Launches a server (see launch()) and registers it for cleanup before waiting for readiness. */
  async start(spec: LaunchSpec): Promise<ServerProcess> {
    if (this.closing) throw new KitError('KIT_ERR_USAGE', 'the lab is closing; no new servers');
    const profiled = {
      ...spec,
      ...(this.profile ? { nodeArgs: [...(spec.nodeArgs ?? []), ...this.profile.nodeArgs(spec.server)] } : {}),
      ...(this.loops ? { loopReportDir: this.loops.dir } : {}),
    };
    const proc = await launch(profiled, (p) => {
      this.profile?.names.set(p.pid, spec.server);
      this.running.add(p);
      p.exited.then(() => this.running.delete(p));
    });
    this.log(`started ${spec.server} pid=${proc.pid} port=${proc.port}`);
    return proc;
  }

  /** Stops one server (two-step termination; `graceMs` 0 kills at once) and forgets it. */
  async stop(proc: ServerProcess, graceMs = 2000): Promise<void> {
    await proc.stop(graceMs);
    this.running.delete(proc);
    this.log(`stopped ${proc.name} pid=${proc.pid}`);
  }

  /** A new temporary directory, removed by close() (after the servers using it are stopped). */
  tempDir(label: string): string {
    const dir = mkdtempSync(path.join(os.tmpdir(), `nsl-${label}-`));
    this.tempDirs.push(dir);
    return dir;
  }

  /**
   * Runs `undo` once every server has stopped, when the lab closes (after the run, on a failure, on
   * Ctrl-C): for what the servers ran in, such as lesson 12's network namespaces. Newest first.
   */
  afterServersStop(undo: () => Promise<void>): void {
    this.afterStop.unshift(undo);
  }

  /** Servers still running. */
  get size(): number {
    return this.running.size;
  }

  /** Stops every server, newest first. Idempotent; later calls wait for the first. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      const all = [...this.running].reverse();
      await Promise.all(all.map((p) => p.stop()));
      this.running.clear();
      for (const undo of this.afterStop.splice(0)) await undo().catch(() => {});
      for (const dir of this.tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
      process.off('exit', this.onExit);
    })();
    return this.closing;
  }
}
