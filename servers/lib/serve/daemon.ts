/**
 * A program the kit runs for a lesson (nginx, redis-server, PostgreSQL), under the kit's process
 * contract: it is this server's child; the kit's ready line is printed once the program answers;
 * SIGTERM, SIGINT or a lost launcher stop it in two steps (its own clean shutdown, then SIGKILL);
 * and if it exits on its own, the error says why in its own words, or names a taken port as
 * KIT_ERR_PORT_IN_USE. servers/nginx.ts, redis.ts and postgres.ts each give what is theirs: the
 * command, the signal, how to tell that it answers, and where its words are.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { KitError, type KitErrorCode } from '../../../lib/errors.ts';
import { formatReady } from '../../../lib/ready.ts';
import { stopChild } from '../../../lib/terminate.ts';
import { exitWithLauncher } from './lifeline.ts';
import { failStartup } from './main.ts';
import { portInUse } from './http.ts';

interface DaemonSpec {
  /** The name in the ready line and in errors: 'nginx', 'redis', 'postgres'. */
  name: string;
  /** How errors name the program: 'nginx', 'redis-server'. */
  program: string;
  command: string;
  args: string[];
  /** Spawn options: which streams to pipe, and the uid and gid to run as. */
  options: SpawnOptions;
  /** Its loopback port. */
  port: number;
  /** The signal for its own clean shutdown. */
  stopSignal: NodeJS.Signals;
  /** How long that shutdown may take before SIGKILL, ms. */
  graceMs: number;
  /** The error code of a failed start: KIT_ERR_NGINX_FAILED, KIT_ERR_STORE. */
  errorCode: KitErrorCode;
  /** What it said last (its stderr's tail, a log), for an error; empty when it said nothing. */
  said(): string;
  /** How an error quotes what it said (default: the words after a colon). */
  quote?(said: string): string;
  /** True when what it said means its port was taken. */
  portTaken: RegExp;
  /** Resolves once this program answers on its port; rejects with the reason it does not. */
  answers(child: ChildProcess): Promise<void>;
  /** Lines printed before the ready line (PostgreSQL's url). */
  readyLines?: string[];
  /** Runs when it has exited, before this server exits (remove its folder, flush its log). */
  onExit?(): void;
}

/**
 * Starts `spec`'s program and resolves once it answers and the ready line is printed. A start that
 * fails stops the program and rejects with `errorCode` and the program's words; an exit of its own
 * is reported by failStartup (exit 3). Returns the stop function, which is idempotent.
 */
export async function runDaemon(spec: DaemonSpec): Promise<() => void> {
  const quote = spec.quote ?? ((said: string) => `: ${said}`);
  const child = spawn(spec.command, spec.args, spec.options);
  // running; stopping (asked to: exit 0 once it is gone); or failed to start (the caller reports it).
  let state: 'running' | 'stopping' | 'failed' = 'running';
  const stop = () => {
    if (state !== 'running') return;
    state = 'stopping';
    void stopChild(child, spec.stopSignal, spec.graceMs);
  };
  child.once('exit', (code, signal) => {
    const said = spec.said();
    spec.onExit?.();
    if (state === 'failed') return;
    if (state === 'stopping') process.exit(0);
    failStartup(
      spec.portTaken.test(said)
        ? portInUse(spec.port)
        : new KitError(spec.errorCode, `${spec.program} exited (${signal ?? `code ${code}`})${quote(said)}`),
    );
  });
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  exitWithLauncher(stop);
  try {
    await spec.answers(child);
  } catch (err) {
    if (child.exitCode === null && child.signalCode === null) {
      state = 'failed';
      const said = spec.said();
      await stopChild(child, spec.stopSignal, spec.graceMs); // nothing left running when the start fails
      throw new KitError(spec.errorCode, `${spec.program} did not start: ${(err as Error).message}${quote(said)}`);
    }
    return stop; // the 'exit' handler reports it
  }
  for (const line of [...(spec.readyLines ?? []), formatReady(spec.name, spec.port, process.pid)])
    process.stdout.write(line + '\n');
  return stop;
}
