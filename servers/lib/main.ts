/**
 * The start-up and shutdown steps every lesson server shares: parse flags (with --help), listen
 * on loopback, print the ready line, stop on SIGTERM/SIGINT or when the launcher is gone, and
 * turn a start-up error into one line on stderr and a non-zero exit.
 */
import type http from 'node:http';
import { describeError, exitCodeFor, assertNodeVersion } from '../../lib/errors.ts';
import { helpText, parseFlags, type CommandSpec, type FlagSpecs, type ParsedFlags } from '../../lib/cli.ts';
import { formatReady } from '../../lib/ready.ts';
import { exitWithLauncher } from './lifeline.ts';
import { listen } from './http.ts';

/**
 * A server's flags from its command line; with --help, prints the help and exits 0.
 * Throws KIT_ERR_USAGE for a bad flag (the caller's failStartup turns it into exit code 2).
 */
export function serverFlags<S extends FlagSpecs>(spec: CommandSpec<S>): ParsedFlags<S> {
  const parsed = parseFlags(spec, process.argv.slice(2));
  if (parsed.help) {
    process.stdout.write(helpText(spec));
    process.exit(0);
  }
  return parsed.flags;
}

/** Prints a start-up error as one line (plus a hint line) on stderr and exits 1 (2 for usage). */
export function failStartup(err: unknown): never {
  process.stderr.write(describeError(err) + '\n');
  process.exit(exitCodeFor(err));
}

export interface ServeOptions {
  /** How long in-flight requests may take to finish after a stop signal, in ms (default 2000). */
  graceMs?: number;
  /**
   * false for a cluster worker: no ready line (the primary prints one for the whole cluster), no
   * launcher lifeline (a worker exits when its IPC channel to the primary closes) and no SIGINT
   * handler (the primary decides when workers stop).
   */
  announce?: boolean;
  /** Called once when a stop begins, before the server stops accepting (e.g. to report unhealthy). */
  onStop?: () => void;
}

/**
 * Listens, prints the ready line, and wires shutdown: on SIGTERM, SIGINT or a lost launcher the
 * server stops accepting, closes idle keep-alive connections (Node >= 19 does this in close()),
 * and exits; connections still busy after `graceMs` are closed by force.
 */
export async function serve(name: string, server: http.Server, port: number, opts: ServeOptions = {}): Promise<number> {
  const { graceMs = 2000, announce = true, onStop } = opts;
  assertNodeVersion();
  const bound = await listen(server, port);
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    onStop?.();
    server.close(() => process.exit(0));
    setTimeout(() => {
      server.closeAllConnections();
      process.exit(0);
    }, graceMs).unref();
  };
  process.once('SIGTERM', stop);
  if (!announce) return bound;
  process.once('SIGINT', stop);
  exitWithLauncher(stop);
  process.stdout.write(formatReady(name, bound, process.pid) + '\n');
  return bound;
}
