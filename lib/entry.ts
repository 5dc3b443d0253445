/**
 * How the kit's scripts start: a module exports its command's `main(argv, io)`, which resolves
 * with an exit code (lib/errors.ts EXIT) and writes only to `io`; it runs when the module is the
 * one started (`npx tsx measure/compare.ts a.txt`), and a test or another script can import it and
 * run it in-process with its output collected.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { helpText, parseFlags, type CommandSpec, type FlagSpecs, type ParsedFlags } from './cli.ts';
import { describeError, EXIT, exitCodeFor } from './errors.ts';

/** Where a command writes: the terminal, or strings in a test. */
export interface Io {
  stdout: { write(s: string): unknown; isTTY?: boolean };
  stderr: { write(s: string): unknown; isTTY?: boolean };
  /** Where typed answers come from (--predict); the process's standard input when absent. */
  stdin?: NodeJS.ReadableStream;
}

export type Main = (argv: string[], io: Io) => Promise<number>;

/** The terminal's streams. */
export const TERMINAL: Io = { stdout: process.stdout, stderr: process.stderr };

/** True when `meta` is the module node was started with, not one imported by it. */
export function isEntry(meta: ImportMeta): boolean {
  const entry = process.argv[1] ? path.resolve(process.argv[1]) : '';
  return entry === fileURLToPath(meta.url);
}

/** Runs `main`; an error it throws becomes one coded line on stderr and its exit code. */
export async function runMain(main: Main, argv: string[], io: Io): Promise<number> {
  try {
    return await main(argv, io);
  } catch (err) {
    io.stderr.write(describeError(err) + '\n');
    return exitCodeFor(err);
  }
}

/** Runs `main` with the process's arguments and terminal when `meta` is the entry module. */
export async function runIfMain(meta: ImportMeta, main: Main): Promise<void> {
  if (isEntry(meta)) process.exitCode = await runMain(main, process.argv.slice(2), TERMINAL);
}

/** A command's flags and its other arguments, parsed (--help already answered). */
interface Parsed<S extends FlagSpecs> {
  flags: ParsedFlags<S>;
  positionals: string[];
}

/**
 * Parses `argv` by `spec`; for --help, writes the help to `io.stdout` and returns undefined (the
 * command then exits 0). A flag the spec does not know throws KIT_ERR_USAGE (lib/cli.ts).
 */
export function parseOrHelp<S extends FlagSpecs>(spec: CommandSpec<S>, argv: string[], io: Io): Parsed<S> | undefined {
  const parsed = parseFlags(spec, argv);
  if (!parsed.help) return parsed;
  io.stdout.write(helpText(spec));
  return undefined;
}

/** A command's main(argv, io): --help prints `spec`'s help and exits 0; anything else reaches `run` parsed. */
export function commandMain<S extends FlagSpecs>(
  spec: CommandSpec<S>,
  run: (parsed: Parsed<S>, io: Io) => Promise<number>,
): Main {
  return async (argv, io) => {
    const parsed = parseOrHelp(spec, argv, io);
    return parsed ? run(parsed, io) : EXIT.holds;
  };
}
