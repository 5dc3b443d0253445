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
  /** The value may be left out (the script reads a bare flag itself): --help shows `[value]`. */
  valueOptional?: boolean;
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
  const rows = Object.entries({
    help: { type: 'boolean', description: 'show this help and exit' } as FlagSpec,
    ...spec.flags,
  }).map(([name, f]) => {
    const value = f.valueName ?? 'value';
    const left = `  ${f.short ? `-${f.short}, ` : ''}--${name}${f.type === 'string' ? (f.valueOptional ? ` [${value}]` : ` <${value}>`) : ''}`;
    const def = f.default !== undefined && f.default !== false ? ` (default: ${String(f.default)})` : '';
    return [left, f.description + def] as const;
  });
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
    options[name] = {
      type: f.type,
      ...(f.short ? { short: f.short } : {}),
      ...(f.default !== undefined ? { default: f.default } : {}),
    };
  }
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options, strict: true, allowPositionals: Boolean(spec.positionals) });
  } catch (err) {
    // parseArgs explains over several lines (e.g. how to pass a value that starts with '-').
    const message = (err as Error).message
      .split('\n')
      .map((l) => l.trim().replace(/\.$/, ''))
      .filter(Boolean)
      .join('; ');
    const unknown = /^Unknown option '--([^'=]+)/.exec((err as Error).message)?.[1];
    const near = unknown === undefined ? undefined : nearestFlag(unknown, Object.keys(options));
    throw new KitError(
      'KIT_ERR_USAGE',
      message,
      near ? `did you mean --${near}? (--help lists the flags)` : `run with --help to see the flags`,
    );
  }
  if (parsed.values.help) return { help: true };
  return { help: false, flags: parsed.values as ParsedFlags<S>, positionals: parsed.positionals };
}

/** Edits (insert, delete, replace, or swap two neighbours) that turn `a` into `b`. */
function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The flag a mistyped `name` most likely meant: the one fewest edits away, if that is at most 2
 * and fewer than half of the name (so `--quik` finds --quick, but `--x` finds nothing).
 */
export function nearestFlag(name: string, flags: readonly string[]): string | undefined {
  let best: { flag: string; d: number } | undefined;
  for (const flag of flags) {
    const d = editDistance(name, flag);
    if (!best || d < best.d) best = { flag, d };
  }
  return best && best.d <= 2 && best.d < name.length / 2 ? best.flag : undefined;
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
