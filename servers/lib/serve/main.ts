/**
 * The start-up steps every lesson server shares: parse flags (with --help), listen on loopback,
 * drain on SIGTERM/SIGINT or when the launcher is gone (drain.ts), print the ready line, and turn a
 * start-up error into one line on stderr and a non-zero exit.
 */
import type http from 'node:http';
import { describeError, exitCodeFor, assertNodeVersion } from '../../../lib/errors.ts';
import type { CommandSpec, FlagSpecs, ParsedFlags } from '../../../lib/cli.ts';
import { parseOrHelp, TERMINAL } from '../../../lib/entry.ts';
import { formatReady } from '../../../lib/ready.ts';
import { drainOnStop, type DrainOptions } from './drain.ts';
import { listen } from './http.ts';

/**
 * A server's flags from its command line; with --help, prints the help and exits 0.
 * Throws KIT_ERR_USAGE for a bad flag (the caller's failStartup turns it into exit code 2).
 */
export function serverFlags<S extends FlagSpecs>(spec: CommandSpec<S>): ParsedFlags<S> {
  const parsed = parseOrHelp(spec, process.argv.slice(2), TERMINAL);
  if (!parsed) process.exit(0);
  return parsed.flags;
}

/** Prints a start-up error as one line (plus a hint line) on stderr and exits 1 (2 for usage). */
export function failStartup(err: unknown): never {
  process.stderr.write(describeError(err) + '\n');
  process.exit(exitCodeFor(err));
}

interface ServeOptions extends DrainOptions {
  /** The listen backlog (default Node's 511). */
  backlog?: number;
}

/**
 * Listens on 127.0.0.1, drains on a stop signal (drain.ts), and prints the ready line (not for a
 * cluster worker, `announce: false`: the primary prints one for the whole cluster). Resolves with
 * the port it bound.
 */
export async function serve(name: string, server: http.Server, port: number, opts: ServeOptions = {}): Promise<number> {
  assertNodeVersion();
  drainOnStop(server, opts);
  const bound = await listen(server, port, opts.backlog);
  if (opts.announce !== false) process.stdout.write(formatReady(name, bound, process.pid) + '\n');
  return bound;
}
