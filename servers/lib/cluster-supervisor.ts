/**
 * The cluster primary's supervision of its workers (servers/cluster.ts): forking them, printing
 * the ready line once the first ones listen, replacing a worker that died (once per death, keyed
 * on 'exit') within a restart budget and with a backoff for workers that die before they listen,
 * so a crash at start-up cannot become a fork loop, and stopping them all. Workers it retires on
 * purpose (a rolling restart, a scale-down) are not replaced. The events it sends its launcher are
 * declared in cluster-messages.ts.
 */
import cluster, { type Worker } from 'node:cluster';
import { describeError, exitCodeFor, KitError } from '../../lib/errors.ts';
import { formatReady } from '../../lib/ready.ts';
import { stopChild } from '../../lib/terminate.ts';
import type { PrimaryEvent, WorkerMessage } from './cluster-messages.ts';
import type { QuotaDelivery } from './cluster-quota.ts';
import { portInUse } from './http.ts';

const BUDGET_WINDOW_MS = 30_000;
const SHUTDOWN_GRACE_MS = 2000;
/**
 * The code a worker exits with when its port is taken: a signal between a worker and its primary
 * only (the primary has said so already), apart from every code a worker that crashes exits with.
 */
export const EXIT_PORT_IN_USE = 75;

interface SupervisorOptions {
  /** The port asked for (0: any). */
  port: number;
  /** Workers that must listen before the ready line. */
  initial: number;
  /** Unexpected deaths allowed within 30 s. */
  budget: number;
  /** The environment every worker gets (LAB_WORKER_PORT is set per fork). */
  workerEnv: Record<string, string>;
  /** The autoscaler owns the count: a dead worker is not replaced here, its next sync forks what is missing. */
  autoscaled: boolean;
  quota: QuotaDelivery;
}

export class Supervisor {
  readonly retiring = new Set<number>(); // worker ids stopped on purpose: not replaced
  readonly listening = new Set<number>(); // ids that reached 'listening' and are alive
  shuttingDown = false;
  /** A rolling restart is going on (the autoscaler waits). */
  rolling = false;
  private readonly listened = new Set<number>(); // ids that ever reached 'listening'
  private readonly replaces = new Map<number, number>(); // worker id -> pid of the worker it replaces
  private readonly deaths: number[] = []; // times of unexpected deaths, for the budget
  private startupCrashes = 0;
  private readyPrinted = false;
  private exitCode = 0;
  private boundPort: number | undefined;

  constructor(private readonly o: SupervisorOptions) {
    // Round robin on every platform: Node's default is SCHED_RR everywhere but Windows, where it
    // is SCHED_NONE (the OS hands connections out, unevenly), and NODE_CLUSTER_SCHED_POLICY=none
    // would choose it too. Lesson 3's 4/4/4 split is round robin's.
    cluster.schedulingPolicy = cluster.SCHED_RR;
    cluster.setupPrimary({ stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    cluster.on('listening', (worker, address) => this.onListening(worker, address.port));
    cluster.on('message', (worker, msg: WorkerMessage) => this.onMessage(worker, msg));
    cluster.on('exit', (worker, code, signal) => this.onExit(worker, code, signal));
    process.on('exit', () => o.quota.cleanup(this.living()));
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

  /** Forks a worker (`replacing`: the pid of the one it stands in for). */
  fork(replacing?: number): Worker {
    // The primary shares one socket per requested address, and closes it when its last worker
    // is gone. So while a worker listens, a replacement asks for the same port as the others did
    // (0 included); when none is left, it asks for the port that was bound, or with --port 0 it
    // would come back on a different random port.
    const port = this.listening.size > 0 ? this.o.port : (this.boundPort ?? this.o.port);
    const w = cluster.fork({ ...this.o.workerEnv, LAB_WORKER_PORT: String(port) });
    // A message to a worker that has just died (node:cluster's own reply to its listen request, or
    // ours) fails with ERR_IPC_CHANNEL_CLOSED as an 'error' on the Worker; unheard, it would crash
    // the primary with exit 1. The death itself is handled on 'exit'.
    w.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'ERR_IPC_CHANNEL_CLOSED') process.stderr.write(`worker ${w.process.pid ?? '(not started)'}: ${err.message}\n`);
    });
    if (replacing !== undefined) this.replaces.set(w.id, replacing);
    this.o.quota.forked(w.id);
    return w;
  }

  /** Stops a worker on purpose: it drains (SIGTERM, serve() in lib/main.ts) and is not replaced. */
  retire(w: Worker): void {
    this.retiring.add(w.id);
    this.o.quota.resume(w);
    w.process.kill('SIGTERM');
  }

  /** SIGKILLs the worker with `pid` (the oldest without one): it is replaced like any death. */
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
    for (const w of left) this.o.quota.resume(w);
    for (const w of left) void stopChild(w.process, 'SIGTERM', SHUTDOWN_GRACE_MS);
  }

  private onListening(worker: Worker, port: number): void {
    this.boundPort = port;
    this.listened.add(worker.id);
    this.listening.add(worker.id);
    this.o.quota.listening(worker, (l) => this.say(l));
    this.startupCrashes = 0;
    const old = this.replaces.get(worker.id);
    if (old !== undefined) {
      this.say(`worker ${worker.process.pid} listening, replacing ${old}`);
      this.tell({ event: 'worker-replaced', old, pid: worker.process.pid! });
    }
    if (!this.readyPrinted && this.listened.size >= this.o.initial) {
      this.readyPrinted = true;
      this.say(formatReady('cluster', port, process.pid));
    }
  }

  private onMessage(worker: Worker, msg: WorkerMessage): void {
    if (msg?.type === 'cpu') this.o.quota.report(worker.id, msg);
    else if (msg?.type === 'pause') this.o.quota.pause(worker, msg.ms, !this.shuttingDown && !this.retiring.has(worker.id), (l) => this.say(l));
    else if (msg?.type === 'port-in-use' && !this.shuttingDown) {
      const err = portInUse(msg.port);
      process.stderr.write(describeError(err) + '\n');
      this.shutdown(exitCodeFor(err));
    }
  }

  private onExit(worker: Worker, code: number, signal: string): void {
    this.listening.delete(worker.id);
    this.o.quota.exited(worker.id);
    if (this.retiring.delete(worker.id) && !this.shuttingDown) {
      this.say(`worker ${worker.process.pid} retired (${signal ? `killed by ${signal}` : `exit code ${code}`})`);
      return;
    }
    if (this.shuttingDown) {
      if (this.living().length === 0) process.exit(this.exitCode);
      return;
    }
    if (code === EXIT_PORT_IN_USE) return; // the 'port-in-use' message already stops everything
    const pid = worker.process.pid;
    const how = signal ? `killed by ${signal}` : `exited with code ${code}`;
    if (this.overBudget(pid, how)) return;
    if (this.o.autoscaled) {
      // The autoscaler owns the count: its next sync forks what is missing (at least min), so a
      // replacement here as well could take the count past max.
      this.say(`worker ${pid} ${how}; the autoscaler will start what is needed`);
      return;
    }
    // A worker that died before listening likely crashes at start-up: back off 100 ms, 200 ms, ...
    const delay = this.listened.has(worker.id) ? 0 : Math.min(100 * 2 ** this.startupCrashes++, 3000);
    this.say(`worker ${pid} ${how}; starting a replacement${delay ? ` in ${delay} ms` : ''}`);
    setTimeout(() => {
      if (!this.shuttingDown) this.fork(pid);
    }, delay);
  }

  /** Counts an unexpected death; past the budget, says so and shuts down. */
  private overBudget(pid: number | undefined, how: string): boolean {
    const now = Date.now();
    this.deaths.push(now);
    while (this.deaths.length && this.deaths[0]! < now - BUDGET_WINDOW_MS) this.deaths.shift();
    if (this.deaths.length <= this.o.budget) return false;
    const err = new KitError(
      'KIT_ERR_RESTART_BUDGET',
      `${this.deaths.length} worker deaths within ${BUDGET_WINDOW_MS / 1000} s (budget ${this.o.budget}); last: worker ${pid} ${how}`,
      'the primary stopped replacing workers and is exiting; look at the workers\' errors above',
    );
    process.stderr.write(describeError(err) + '\n');
    this.shutdown(exitCodeFor(err));
    return true;
  }
}
