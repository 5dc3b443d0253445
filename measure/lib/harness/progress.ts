/**
 * Progress on stderr, so stdout stays clean for --shape and --json. On a terminal one status line
 * is rewritten in place with the elapsed time, ticking every second during long steps; elsewhere
 * (CI, a pipe) each step is one plain line.
 */
import { performance } from 'node:perf_hooks';

interface ProgressStream {
  write(s: string): unknown;
  isTTY?: boolean;
}

export class Progress {
  private readonly stream: ProgressStream;
  private readonly started = performance.now();
  private current = '';
  private timer: NodeJS.Timeout | undefined;
  private readonly live: boolean;

  constructor(
    stream: ProgressStream = process.stderr,
    private readonly label = '',
  ) {
    this.stream = stream;
    this.live = Boolean(stream.isTTY);
  }

  private elapsed(): string {
    return `${((performance.now() - this.started) / 1000).toFixed(1)}s`;
  }

  private draw(): void {
    this.stream.write(`\r\x1b[2K${this.label}[${this.elapsed()}] ${this.current}`);
  }

  /** Shows what the run is doing now. */
  step(text: string): void {
    this.current = text;
    if (!this.live) {
      this.stream.write(`${this.label}[${this.elapsed()}] ${text}\n`);
      return;
    }
    this.draw();
    this.timer ??= setInterval(() => this.draw(), 1000);
    this.timer.unref();
  }

  /** A line that stays (a server started or stopped, a note). */
  note(text: string): void {
    if (this.live) this.stream.write('\r\x1b[2K');
    this.stream.write(`${this.label}[${this.elapsed()}] ${text}\n`);
    if (this.live && this.current) this.draw();
  }

  /** Clears the status line and stops ticking. */
  done(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    if (this.live) this.stream.write('\r\x1b[2K');
    this.current = '';
  }
}
