/**
 * Starts a lesson server as a child process and waits for its ready line (never a sleep).
 *
 * The child runs the server's bundle (measure/lib/process/bundle.ts), or `node --import tsx
 * servers/<name>.ts` where there is none (never through the tsx CLI, which would put a second
 * process in between), as the leader of its own process group, with LAB_LIFELINE=stdin so it
 * exits by itself if this process dies without stopping it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { KitError, type KitErrorCode } from '../../../lib/errors.ts';
import { READY_PATTERN } from '../../../lib/ready.ts';
import { loopReportArgs, serverBuild, serverCommand } from './bundle.ts';
import { ROOT } from '../harness/paths.ts';
import { signalGroup, terminateGroup } from '../../../lib/terminate.ts';

export interface LaunchSpec {
  /** Server script under servers/, without .ts: 'loan', 'cluster'. */
  server: string;
  /** An absolute script path to run instead of servers/<server>.ts (tests use stand-ins). */
  script?: string;
  args?: string[];
  /** Added to this process's environment (e.g. UV_THREADPOOL_SIZE). */
  env?: Record<string, string>;
  /** Options for Node itself, before the script (--cpu-prof: a cluster's workers inherit them). */
  nodeArgs?: string[];
  /** Open an IPC channel to the child (the cluster primary takes commands over it). */
  ipc?: boolean;
  /**
   * A folder for the event-loop report (servers/lib/serve/loop-report.ts): the server, and every
   * worker it forks, writes how busy its loop was there, four times a second.
   */
  loopReportDir?: string;
  /** How long to wait for the ready line, in ms (default 20 000: tsx compiles on first start). */
  readyTimeoutMs?: number;
  /**
   * Runs the server inside a network namespace (lesson 12): `wrap` turns the Node command line into
   * the one that enters it (NetLab.wrap: `ip netns exec`, which replaces itself with Node, so the
   * pid and process group are still the server's). A server that listens on the namespace's own
   * loopback cannot be reached from here: its `url` then throws.
   */
  netns?: { name: string; wrap: (command: string, args: string[]) => [string, string[]] };
}

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A running server: where it listens, what it printed, and how to stop it. */
export class ServerProcess {
  readonly name: string;
  readonly child: ChildProcess;
  /** Every stdout line so far, in order. */
  readonly lines: string[] = [];
  /** The last stderr lines (at most 40), for error messages. */
  readonly stderrTail: string[] = [];
  /** Resolves when the child has exited. */
  readonly exited: Promise<Exit>;
  /** Resolves when the child has exited and its stdout is fully read (every line is in `lines`). */
  readonly closed: Promise<Exit>;
  port = 0;
  /** The address it listens on, from its ready line: 127.0.0.1, or a kit namespace's own. */
  host = '127.0.0.1';
  /** The namespace it runs in, when it runs in one (LaunchSpec.netns). */
  netns: string | undefined;
  private exit: Exit | undefined;
  private readonly lineWaiters = new Set<() => void>();
  private readonly messages: unknown[] = [];

  constructor(name: string, child: ChildProcess) {
    this.name = name;
    this.child = child;
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.exit = { code, signal };
        this.wake();
        resolve(this.exit);
      });
    });
    this.closed = new Promise((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      this.lines.push(line);
      this.wake();
    });
    createInterface({ input: child.stderr! }).on('line', (line) => {
      this.stderrTail.push(line);
      if (this.stderrTail.length > 40) this.stderrTail.shift();
    });
    child.on('message', (msg) => {
      this.messages.push(msg);
      this.wake();
    });
  }

  /** The leader's pid (also its process group id). */
  get pid(): number {
    return this.child.pid!;
  }

  /**
   * Sends `signal` to the server's whole process group (a frozen or killed server is all of its
   * processes), or to the leader alone (a signal it handles itself, like SIGUSR1). False if gone.
   */
  signal(signal: NodeJS.Signals, target: 'group' | 'leader' = 'group'): boolean {
    if (target === 'group') return signalGroup(this.pid, signal);
    try {
      return process.kill(this.pid, signal);
    } catch {
      return false;
    }
  }

  /**
   * `http://<host>:<port>`. Throws for a server on a namespace's loopback: that address is the
   * namespace's own, and here it would reach whatever listens on this machine's.
   */
  get url(): string {
    if (this.netns && this.host === '127.0.0.1')
      throw new KitError(
        'KIT_ERR_USAGE',
        `${this.name} listens on the loopback of namespace ${this.netns}, which this process cannot reach`,
      );
    return `http://${this.host}:${this.port}`;
  }

  /** True once the child has exited. */
  get hasExited(): boolean {
    return this.exit !== undefined;
  }

  private wake(): void {
    for (const w of [...this.lineWaiters]) w();
  }

  /**
   * Waits for a condition re-checked on every stdout line, IPC message and exit, with a deadline.
   * Rejects KIT_ERR_WAIT_TIMEOUT naming `what`, or KIT_ERR_EXITED_EARLY if the child exits first.
   */
  private waitFor<T>(what: string, check: () => T | undefined, timeoutMs: number): Promise<T> {
    return new Promise((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const done = () => {
        this.lineWaiters.delete(poll);
        clearTimeout(timer);
      };
      const poll = () => {
        const found = check();
        if (found !== undefined) {
          done();
          resolve(found);
        } else if (this.exit) {
          done();
          reject(this.exitedError(what));
        }
      };
      timer = setTimeout(() => {
        done();
        reject(
          new KitError('KIT_ERR_WAIT_TIMEOUT', `${this.name} (pid ${this.pid}): waited ${timeoutMs} ms for ${what}`),
        );
      }, timeoutMs);
      this.lineWaiters.add(poll);
      poll();
    });
  }

  /** Waits for a stdout line matching `pattern` at index `from` or later (take `lines.length` before acting). */
  waitForLine(pattern: RegExp, timeoutMs: number, from = 0): Promise<RegExpExecArray> {
    return this.waitFor(
      `a line matching ${pattern}`,
      () => {
        for (let i = from; i < this.lines.length; i++) {
          const m = pattern.exec(this.lines[i]!);
          if (m) return m;
        }
        return undefined;
      },
      timeoutMs,
    );
  }

  /** Sends an IPC message (the server must have been launched with `ipc: true`). */
  send(message: object): void {
    this.child.send(message);
  }

  /** Waits for an IPC message for which `match` is true, received at index `from` or later. */
  waitForMessage<T>(match: (m: any) => m is T, timeoutMs: number, from = 0): Promise<T> {
    return this.waitFor('an IPC message', () => this.messages.slice(from).find(match), timeoutMs);
  }

  /** IPC messages received at index `from` or later, in order. */
  messagesFrom(from = 0): unknown[] {
    return this.messages.slice(from);
  }

  /** How many IPC messages arrived so far (pass as `from` to wait for a later one). */
  get messageCount(): number {
    return this.messages.length;
  }

  private exitedError(what: string): KitError {
    // A lesson server says why it could not start in one coded line: pass that on as it is.
    const coded = this.stderrTail.map((l) => /^error (KIT_ERR_[A-Z_]+): (.*)$/.exec(l)).find((m) => m);
    if (coded && !this.port) return new KitError(coded[1] as KitErrorCode, `${this.name} could not start: ${coded[2]}`);
    const how = this.exit?.signal ? `was killed by ${this.exit.signal}` : `exited with code ${this.exit?.code}`;
    const said = this.stderrTail
      .filter((l) => l.trim())
      .slice(-3)
      .join(' | ');
    return new KitError(
      'KIT_ERR_EXITED_EARLY',
      `${this.name} ${how} while the harness waited for ${what}${said ? `; it said: ${said}` : ''}`,
    );
  }

  /** SIGTERM to the server's process group, SIGKILL after `graceMs`. Safe to call twice. */
  async stop(graceMs = 2000): Promise<'graceful' | 'killed'> {
    return terminateGroup(this.pid, this.exited, graceMs);
  }
}

/**
 * Spawns `servers/<spec.server>.ts` and resolves once its ready line is printed.
 * `onSpawn` is called at once with the process, so the caller can register it for cleanup before
 * the wait (a Ctrl-C during start-up must still stop it).
 * Rejects KIT_ERR_EXITED_EARLY (e.g. port in use; the message quotes the server's error line) or
 * KIT_ERR_READY_TIMEOUT.
 */
export async function launch(spec: LaunchSpec, onSpawn: (p: ServerProcess) => void = () => {}): Promise<ServerProcess> {
  const build = spec.script ? undefined : await serverBuild();
  const command = spec.script ? ['--import', 'tsx', spec.script] : serverCommand(spec.server, build);
  const report = spec.loopReportDir ? loopReportArgs(build) : [];
  const nodeArgs = [...(spec.nodeArgs ?? []), ...report, ...command, ...(spec.args ?? [])];
  const [file, args] = spec.netns ? spec.netns.wrap(process.execPath, nodeArgs) : [process.execPath, nodeArgs];
  const child = spawn(file, args, {
    cwd: ROOT,
    detached: true,
    stdio: ['pipe', 'pipe', 'pipe', ...(spec.ipc ? (['ipc'] as const) : [])],
    env: {
      ...process.env,
      ...spec.env,
      LAB_LIFELINE: 'stdin',
      ...(spec.loopReportDir ? { NSL_LOOP_REPORT_DIR: spec.loopReportDir } : {}),
    },
  });
  const proc = new ServerProcess(spec.server, child);
  proc.netns = spec.netns?.name;
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', reject);
  });
  onSpawn(proc);
  const timeout = spec.readyTimeoutMs ?? 20_000;
  try {
    const m = await proc.waitForLine(READY_PATTERN, timeout);
    proc.host = m[2]!;
    proc.port = Number(m[3]);
  } catch (err) {
    if (err instanceof KitError && err.code === 'KIT_ERR_WAIT_TIMEOUT') {
      throw new KitError(
        'KIT_ERR_READY_TIMEOUT',
        `${spec.server} (pid ${proc.pid}) printed no ready line within ${timeout} ms`,
        'is the machine very busy? try again, or start it by hand (npx tsx servers/' +
          spec.server +
          '.ts --port 0) to see what it says',
      );
    }
    throw err;
  }
  return proc;
}
