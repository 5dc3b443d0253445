/**
 * Lessons 6 to 8's cluster primary (servers/managed-cluster.ts), on the WorkerKeeper that every
 * primary of the kit shares (keeper.ts: round robin, the restart budget, stopping, the
 * launcher's commands): forking workers, printing the ready line once the first ones listen,
 * replacing a worker that died, retiring workers on purpose (a rolling restart, a scale-down; they
 * are not replaced), and delivering each worker's CPU quota. The events it sends its launcher are
 * declared in messages.ts.
 */
import cluster, { type Worker } from 'node:cluster';
import { formatReady } from '../../../lib/ready.ts';
import type { WorkerMessage } from './messages.ts';
import { WorkerKeeper } from './keeper.ts';
import type { QuotaDelivery } from './quota.ts';

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

export class Supervisor extends WorkerKeeper {
  readonly retiring = new Set<number>(); // worker ids stopped on purpose: not replaced
  /** A rolling restart is going on (the autoscaler waits). */
  rolling = false;
  private readonly replaces = new Map<number, number>(); // worker id -> pid of the worker it replaces
  private readyPrinted = false;

  constructor(private readonly o: SupervisorOptions) {
    super(o.port, o.budget);
    cluster.on('listening', (worker, address) => this.onListening(worker, address.port));
    cluster.on('message', (worker, msg: WorkerMessage) => this.onMessage(worker, msg));
    cluster.on('exit', (worker, code, signal) => this.onExit(worker, code, signal));
    process.on('exit', () => o.quota.cleanup(this.living()));
  }

  /** Forks a worker (`replacing`: the pid of the one it stands in for). */
  fork(replacing?: number): Worker {
    const w = cluster.fork({ ...this.o.workerEnv, LAB_WORKER_PORT: String(this.workerPort()) });
    if (replacing !== undefined) this.replaces.set(w.id, replacing);
    this.o.quota.forked(w.id);
    return w;
  }

  /** Stops a worker on purpose: it drains (SIGTERM, serve() in ../serve/main.ts) and is not replaced. */
  retire(w: Worker): void {
    this.retiring.add(w.id);
    this.o.quota.resume(w);
    w.process.kill('SIGTERM');
  }

  protected override beforeStop(w: Worker): void {
    this.o.quota.resume(w);
  }

  private onListening(worker: Worker, port: number): void {
    this.o.quota.listening(worker, (l) => this.say(l));
    const old = this.replaces.get(worker.id);
    if (old !== undefined) {
      this.say(`worker ${worker.process.pid} listening, replacing ${old}`);
      this.tell({ event: 'worker-replaced', old, pid: worker.process.pid! });
    }
    if (!this.readyPrinted && this.everListened >= this.o.initial) {
      this.readyPrinted = true;
      this.say(formatReady('cluster', port, process.pid));
    }
  }

  private onMessage(worker: Worker, msg: WorkerMessage): void {
    if (msg?.type === 'cpu') this.o.quota.report(worker.id, msg);
    else if (msg?.type === 'pause')
      this.o.quota.pause(worker, msg.ms, !this.shuttingDown && !this.retiring.has(worker.id), (l) => this.say(l));
  }

  private onExit(worker: Worker, code: number, signal: string): void {
    this.o.quota.exited(worker.id);
    if (this.retiring.delete(worker.id) && !this.shuttingDown) {
      this.listening.delete(worker.id);
      this.say(`worker ${worker.process.pid} retired (${signal ? `killed by ${signal}` : `exit code ${code}`})`);
      return;
    }
    const death = this.death(worker, code, signal);
    if (!death) return;
    if (this.o.autoscaled) {
      // The autoscaler owns the count: its next sync forks what is missing (at least min), so a
      // replacement here as well could take the count past max.
      this.say(`worker ${death.pid} ${death.how}; the autoscaler will start what is needed`);
      return;
    }
    this.say(
      `worker ${death.pid} ${death.how}; starting a replacement${death.delayMs ? ` in ${death.delayMs} ms` : ''}`,
    );
    setTimeout(() => {
      if (!this.shuttingDown) this.fork(death.pid);
    }, death.delayMs);
  }
}
