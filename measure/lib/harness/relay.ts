/**
 * For scripts that run experiments as child processes (the lesson runner, fidelity): a stop
 * signal (Ctrl-C, SIGTERM) is passed on to the running child, which stops its servers and exits
 * (a terminal's Ctrl-C reaches it directly as well; it ignores the repeat), and `interrupted`
 * tells the script to start no more.
 */
import type { ChildProcess } from 'node:child_process';

export class SignalRelay {
  readonly running = new Set<ChildProcess>();
  interrupted = false;
  private readonly onSignal = (signal: NodeJS.Signals) => {
    this.interrupted = true;
    for (const child of this.running) child.kill(signal);
  };

  constructor() {
    process.on('SIGINT', this.onSignal);
    process.on('SIGTERM', this.onSignal);
  }

  /** Relays signals to `child` until it exits. */
  track(child: ChildProcess): void {
    this.running.add(child);
    child.once('exit', () => this.running.delete(child));
  }

  /** Stops listening for signals. */
  dispose(): void {
    process.off('SIGINT', this.onSignal);
    process.off('SIGTERM', this.onSignal);
  }
}
