/**
 * What every node:cluster primary of the kit needs and no lesson is about: round robin on every
 * platform, the port a new worker asks for, a restart budget with a backoff (so a worker that
 * crashes at start-up cannot become a fork loop), killing a worker for an experiment, stopping
 * every worker, and obeying the launcher (its IPC commands, SIGTERM/SIGINT, a lost lifeline).
 * servers/cluster.ts (lesson 3) keeps its own fork, 'listening' and 'exit' handlers in view and
 * calls these; servers/lib/cluster/supervisor.ts builds lessons 6 to 8's primary on them.
 */
import cluster, { type Worker } from 'node:cluster';
import type http from 'node:http';
import { describeError, exitCodeFor, KitError } from '../../../lib/errors.ts';
import { stopChild } from '../../../lib/terminate.ts';
import type { LauncherCommand, PrimaryEvent, WorkerMessage } from './messages.ts';
import { portInUse } from '../serve/http.ts';
import { exitWithLauncher } from '../serve/lifeline.ts';
import { failStartup, serve } from '../serve/main.ts';

/** How far back the restart budget counts deaths, ms. */
const BUDGET_WINDOW_MS = 30_000;
/** How long stopping workers get to drain before SIGKILL, ms. */
const SHUTDOWN_GRACE_MS = 2000;
/** The longest backoff before replacing a worker that died before it listened, ms. */
const MAX_BACKOFF_MS = 3000;
/**
 * The code a worker exits with when its port is taken: a signal between a worker and its primary
 * only (the primary has said so already), apart from every code a worker that crashes exits with.
 */
const EXIT_PORT_IN_USE = 75;

/** A death the primary may answer with a replacement: who died, how, and how long to wait first, ms. */
interface Death {
  pid: number | undefined;
  how: string;
  delayMs: number;
}

export class WorkerKeeper {
  /** Ids of workers that reached 'listening' and are alive. */
  readonly listening = new Set<number>();
  shuttingDown = false;
  /** Ids of workers that ever reached 'listening'. */
  protected readonly listened = new Set<number>();
  private readonly deaths: number[] = []; // times of unexpected deaths, for the budget
  private startupCrashes = 0;
  private exitCode = 0;
  private boundPort: number | undefined;

  /** `port`: the port asked for (0: any); `budget`: unexpected deaths allowed within 30 s. */
  constructor(
    protected readonly port: number,
    private readonly budget: number,
  ) {
    // Round robin on every platform: Node's default is SCHED_RR everywhere but Windows, where it
    // is SCHED_NONE (the OS hands connections out, unevenly), and NODE_CLUSTER_SCHED_POLICY=none
    // would choose it too. Lesson 3's 4/4/4 split is round robin's.
    cluster.schedulingPolicy = cluster.SCHED_RR;
    cluster.setupPrimary({ stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    cluster.on('fork', (w) => this.quietWhenGone(w));
    cluster.on('listening', (w, address) => this.noteListening(w, address.port));
    cluster.on('message', (w, msg: WorkerMessage) => {
      if (msg?.type === 'port-in-use' && !this.shuttingDown) {
        const err = portInUse(msg.port);
        process.stderr.write(describeError(err) + '\n');
        this.shutdown(exitCodeFor(err));
      }
    });
  }

  /** A line on stdout (the launcher reads it). */
  say(line: string): void {
    process.stdout.write(line + '\n');
  }

  /** An event for the launcher, if there is one (a primary started by hand has no IPC channel). */
  tell(e: PrimaryEvent): void {
    process.send?.(e);
  }

  /**
   * Workers that have not exited. node:cluster keeps a worker in cluster.workers until both its
   * 'exit' and its IPC 'disconnect' have happened, and 'exit' may come first: counted then, the last
   * worker of a shutdown was still "living" at its own 'exit', and the primary never exited on
   * purpose (its event loop ran dry and it ended with 0).
   */
  living(): Worker[] {
    return Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined && !w.isDead());
  }

  /**
   * The port a new worker listens on. The primary shares one socket per requested address, and
   * closes it when its last worker is gone. So while a worker listens, a new one asks for the same
   * port as the others did (0 included); when none is left, it asks for the port that was bound, or
   * with --port 0 it would come back on a different random port.
   */
  workerPort(): number {
    return this.listening.size > 0 ? this.port : (this.boundPort ?? this.port);
  }

  /** Workers that ever listened, replacements included: the ready line waits for enough of them. */
  get everListened(): number {
    return this.listened.size;
  }

  /** SIGKILLs the worker with `pid` (the oldest without one): it dies like any crash. */
  killWorker(pid?: number): void {
    const target = pid === undefined ? this.living()[0] : this.living().find((w) => w.process.pid === pid);
    if (!target) {
      this.tell({ event: 'kill-failed', pid, reason: 'no such worker' });
      return;
    }
    target.process.kill('SIGKILL');
    this.tell({ event: 'worker-killed', pid: target.process.pid! });
  }

  /** Stops every worker (SIGTERM, SIGKILL after a grace period) and exits with `code` once they are gone. */
  shutdown(code: number): void {
    if (this.shuttingDown) return;
    this.shuttingDown = true;
    this.exitCode = code;
    const left = this.living();
    if (left.length === 0) process.exit(this.exitCode);
    for (const w of left) this.beforeStop(w);
    for (const w of left) void stopChild(w.process, 'SIGTERM', SHUTDOWN_GRACE_MS);
  }

  /**
   * Obeys the launcher: `kill-worker` over IPC or SIGUSR2 (the oldest worker) kill one; SIGTERM,
   * SIGINT, a closed IPC channel or a lost lifeline stop them all and exit 0. `other` gets any
   * other command.
   */
  obeyLauncher(other: (cmd: LauncherCommand) => void = () => {}): void {
    const stop = () => this.shutdown(0);
    process.on('message', (msg: LauncherCommand) => {
      if (msg?.cmd === 'kill-worker') this.killWorker(msg.pid);
      else if (msg) other(msg);
    });
    process.on('SIGUSR2', () => this.killWorker());
    process.on('disconnect', stop); // the launcher's IPC channel closed: it is gone
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
    exitWithLauncher(stop);
  }

  /**
   * What a worker's exit means. Undefined when nothing more is to be done: the primary is stopping
   * (and exits once the last worker is gone), the worker's port was taken (already reported), or
   * the deaths went past the budget (the primary is now stopping). Otherwise the death, with the
   * backoff before its replacement: 0 for a worker that had listened; 100 ms, 200 ms, ... for one
   * that died before it listened, which likely crashes at start-up.
   */
  death(worker: Worker, code: number, signal: string): Death | undefined {
    this.listening.delete(worker.id);
    if (this.shuttingDown) {
      if (this.living().length === 0) process.exit(this.exitCode);
      return undefined;
    }
    if (code === EXIT_PORT_IN_USE) return undefined; // the 'port-in-use' message already stops everything
    const pid = worker.process.pid;
    const how = signal ? `killed by ${signal}` : `exited with code ${code}`;
    if (this.overBudget(pid, how)) return undefined;
    const delayMs = this.listened.has(worker.id) ? 0 : Math.min(100 * 2 ** this.startupCrashes++, MAX_BACKOFF_MS);
    return { pid, how, delayMs };
  }

  /** Called for each worker before shutdown's SIGTERM (a paused worker must run again to drain). */
  protected beforeStop(_w: Worker): void {}

  private noteListening(worker: Worker, port: number): void {
    this.boundPort = port;
    this.listened.add(worker.id);
    this.listening.add(worker.id);
    this.startupCrashes = 0;
  }

  /**
   * A message to a worker that has just died (node:cluster's own reply to its listen request, or
   * ours) fails as an 'error' on the Worker (saysWorkerIsGone); unheard, it would crash the
   * primary with exit 1. The death itself is handled on 'exit'.
   */
  private quietWhenGone(w: Worker): void {
    w.on('error', (err: NodeJS.ErrnoException) => {
      if (!saysWorkerIsGone(err.code))
        process.stderr.write(`worker ${w.process.pid ?? '(not started)'}: ${err.message}\n`);
    });
  }

  /** Counts an unexpected death; past the budget, says so and shuts down. */
  private overBudget(pid: number | undefined, how: string): boolean {
    const now = Date.now();
    this.deaths.push(now);
    while (this.deaths.length && this.deaths[0]! < now - BUDGET_WINDOW_MS) this.deaths.shift();
    if (this.deaths.length <= this.budget) return false;
    const err = new KitError(
      'KIT_ERR_RESTART_BUDGET',
      `${this.deaths.length} worker deaths within ${BUDGET_WINDOW_MS / 1000} s (budget ${this.budget}); last: worker ${pid} ${how}`,
      "the primary stopped replacing workers and is exiting; look at the workers' errors above",
    );
    process.stderr.write(describeError(err) + '\n');
    this.shutdown(exitCodeFor(err));
    return true;
  }
}

/**
 * A worker listens on the port its primary gave it (LAB_WORKER_PORT) and drains on SIGTERM
 * (serve() in main.ts). Resolves once it listens. A taken port is told to the primary, which says
 * it once for all workers, and the worker exits with EXIT_PORT_IN_USE; any other failure to start
 * is printed and the worker exits 1.
 */
export async function serveWorker(server: http.Server): Promise<void> {
  const port = Number(process.env.LAB_WORKER_PORT);
  // Ctrl-C in a terminal reaches the whole process group; the primary decides when workers stop.
  process.on('SIGINT', () => {});
  try {
    await serve('cluster-worker', server, port, { announce: false });
  } catch (err) {
    if (err instanceof KitError && err.code === 'KIT_ERR_PORT_IN_USE') {
      process.send?.({ type: 'port-in-use', port } satisfies WorkerMessage, () => process.exit(EXIT_PORT_IN_USE));
      return new Promise(() => {}); // exiting: nothing more happens in this worker
    }
    failStartup(err);
  }
}

/**
 * True for the error a message to a worker that is gone fails with: ERR_IPC_CHANNEL_CLOSED once
 * Node knows the channel is closed, EPIPE when the worker's end closed first (seen when the
 * primary stopped every worker because one found the port taken, and answered another's listen
 * request as it exited).
 */
export function saysWorkerIsGone(code: string | undefined): boolean {
  return code === 'ERR_IPC_CHANNEL_CLOSED' || code === 'EPIPE';
}
