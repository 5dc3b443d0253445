/**
 * Command-line parsing for every script and server, on top of `node:util` parseArgs.
 *
 * A script declares its flags once (name, type, default, one-line description); this module turns
 * that into parsing with unknown-flag errors (KIT_ERR_USAGE, exit 2) and a `--help` text, so every
 * script's help looks the same.
 */
import { parseArgs } from 'node:util';
import { KitError } from './errors.ts';

export interface FlagSpec {
  type: 'string' | 'boolean';
  /** One line for --help. */
  description: string;
  /** Shown in --help as `<value>`; only for string flags. */
  valueName?: string;
  default?: string | boolean;
  short?: string;
}

export type FlagSpecs = Record<string, FlagSpec>;

export type ParsedFlags<S extends FlagSpecs> = {
  [K in keyof S]: S[K]['type'] extends 'boolean' ? boolean : string | undefined;
};

export interface CommandSpec<S extends FlagSpecs> {
  /** How to run it, e.g. `npx tsx measure/blocking.ts [flags]`. */
  usage: string;
  /** A paragraph on what it does. */
  summary: string;
  flags: S;
  /** Extra lines at the end of --help (examples, environment variables). */
  epilogue?: string;
  /** Arguments that are not flags are allowed (file names, say); they come back as `positionals`. */
  positionals?: boolean;
}

/** The help text for a command: usage, summary, one line per flag, epilogue. */
export function helpText<S extends FlagSpecs>(spec: CommandSpec<S>): string {
  const rows = Object.entries({ help: { type: 'boolean', description: 'show this help and exit' } as FlagSpec, ...spec.flags }).map(
    ([name, f]) => {
      const left = `  ${f.short ? `-${f.short}, ` : ''}--${name}${f.type === 'string' ? ` <${f.valueName ?? 'value'}>` : ''}`;
      const def = f.default !== undefined && f.default !== false ? ` (default: ${String(f.default)})` : '';
      return [left, f.description + def] as const;
    },
  );
  const width = Math.max(...rows.map(([l]) => l.length)) + 2;
  const lines = [`Usage: ${spec.usage}`, '', spec.summary, '', 'Flags:', ...rows.map(([l, r]) => l.padEnd(width) + r)];
  if (spec.epilogue) lines.push('', spec.epilogue);
  return lines.join('\n') + '\n';
}

/**
 * Parses `argv` (without node and script) against the spec.
 * Returns `{ help: true }` when --help is given; throws KIT_ERR_USAGE on an unknown flag, a
 * missing value or a stray positional argument.
 */
export function parseFlags<S extends FlagSpecs>(
  spec: CommandSpec<S>,
  argv: string[],
): { help: true } | { help: false; flags: ParsedFlags<S>; positionals: string[] } {
  const options: Record<string, { type: 'string' | 'boolean'; short?: string; default?: string | boolean }> = {
    help: { type: 'boolean', short: 'h' },
  };
  for (const [name, f] of Object.entries(spec.flags)) {
    options[name] = { type: f.type, ...(f.short ? { short: f.short } : {}), ...(f.default !== undefined ? { default: f.default } : {}) };
  }
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options, strict: true, allowPositionals: Boolean(spec.positionals) });
  } catch (err) {
    // parseArgs explains over several lines (e.g. how to pass a value that starts with '-').
    const message = (err as Error).message.split('\n').map((l) => l.trim().replace(/\.$/, '')).filter(Boolean).join('; ');
    throw new KitError('KIT_ERR_USAGE', message, `run with --help to see the flags`);
  }
  if (parsed.values.help) return { help: true };
  return { help: false, flags: parsed.values as ParsedFlags<S>, positionals: parsed.positionals };
}

/** Parses an integer flag within [min, max]; throws KIT_ERR_USAGE naming the flag otherwise. */
export function intFlag(name: string, raw: string | undefined, min: number, max: number, fallback: number): number {
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw.trim())) {
    throw new KitError('KIT_ERR_USAGE', `--${name} must be a whole number from ${min} to ${max}; got '${raw}'`);
  }
  const n = Number(raw);
  if (n < min || n > max) {
    throw new KitError('KIT_ERR_USAGE', `--${name} must be from ${min} to ${max}; got ${n}`);
  }
  return n;
}

/** Declares a command; keeps the literal flag types so parsed flags are typed per flag. */
export function defineCommand<const S extends FlagSpecs>(spec: CommandSpec<S>): CommandSpec<S> {
  return spec;
}
