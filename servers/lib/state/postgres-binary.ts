/**
 * Finds PostgreSQL's `initdb` and `postgres` for servers/postgres.ts (and for tests deciding
 * whether to skip). Debian and Ubuntu install them under /usr/lib/postgresql/<major>/bin, off the
 * PATH; Homebrew under its prefix, versioned formulae in opt/postgresql@<major>/bin; MacPorts in
 * /opt/local/lib/postgresql<major>/bin.
 */
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { KitError } from '../../../lib/errors.ts';

interface PostgresBinaries {
  initdb: string;
  postgres: string;
}

/** Versioned folders under `parent` matching `pattern` (major version in group 1), newest first. */
function versioned(parent: string, pattern: RegExp, tail: string): string[] {
  try {
    return readdirSync(parent)
      .map((name) => ({ name, major: Number(pattern.exec(name)?.[1] ?? NaN) }))
      .filter((d) => Number.isFinite(d.major))
      .sort((a, b) => b.major - a.major)
      .map((d) => path.join(parent, d.name, tail));
  } catch {
    return [];
  }
}

/**
 * Where to look after the PATH, below `root` (a test passes a folder of its own): Debian's
 * versioned folders, Homebrew's, and MacPorts' /opt/local/lib/postgresql<major>/bin.
 */
export function postgresDirs(root = '/'): string[] {
  const at = (d: string) => path.join(root, d);
  return [
    ...versioned(at('/usr/lib/postgresql'), /^(\d+)$/, 'bin'),
    at('/opt/homebrew/bin'),
    at('/usr/local/bin'),
    ...versioned(at('/opt/homebrew/opt'), /^postgresql@(\d+)$/, 'bin'),
    ...versioned(at('/usr/local/opt'), /^postgresql@(\d+)$/, 'bin'),
    ...versioned(at('/opt/local/lib'), /^postgresql(\d+)$/, 'bin'),
  ];
}

/** The first folder with both binaries, or throws KIT_ERR_POSTGRES_MISSING with how to install them. */
export function findPostgres(
  env: NodeJS.ProcessEnv = process.env,
  extraDirs: readonly string[] = postgresDirs(),
): PostgresBinaries {
  for (const dir of [...(env.PATH ?? '').split(path.delimiter).filter(Boolean), ...extraDirs]) {
    const initdb = path.join(dir, 'initdb');
    const postgres = path.join(dir, 'postgres');
    if (existsSync(initdb) && existsSync(postgres)) return { initdb, postgres };
  }
  throw new KitError(
    'KIT_ERR_POSTGRES_MISSING',
    "PostgreSQL's initdb and postgres were not found (looked on PATH, in /usr/lib/postgresql/*/bin, Homebrew's and MacPorts' folders)",
    'install it (Debian/Ubuntu: sudo apt-get install postgresql; macOS: brew install postgresql@16, or sudo port install postgresql16-server), or leave out --db postgres: SQLite, the default, needs no server',
  );
}
