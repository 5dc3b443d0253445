/**
 * Every coded error of the kit, in one place (the fastify/undici pattern): each has a stable
 * `code` that tests assert on, an exit code kept next to it, and a message that says what was
 * expected and what was found. Library code throws these; only entry scripts print them and exit.
 */

/**
 * Exit codes, one table for every script and server of the kit (README, "Exit codes"): an
 * experiment's shape held (0) or did not (1), a usage mistake (2), a run (or a server's start)
 * that failed (3), a stop by Ctrl-C (130) or SIGTERM (143).
 */
export const EXIT = { holds: 0, doesNotHold: 1, usage: 2, failed: 3, sigint: 130, sigterm: 143 } as const;

/** Every error code, with the exit code an entry script ends with when it stops on one, and what it means. */
export const ERROR_CODES = {
  KIT_ERR_USAGE: { exit: EXIT.usage, what: 'a flag or argument is wrong' },
  KIT_ERR_BAD_COST: { exit: EXIT.usage, what: 'a scrypt cost that is not a valid N,r,p or needs absurd memory' },
  KIT_ERR_NODE_TOO_OLD: { exit: EXIT.failed, what: 'the kit needs Node.js 20 or newer' },
  KIT_ERR_PORT_IN_USE: { exit: EXIT.failed, what: 'the port a server was asked to listen on is taken' },
  KIT_ERR_READY_TIMEOUT: {
    exit: EXIT.failed,
    what: 'a launched server did not print its ready line before the deadline',
  },
  KIT_ERR_EXITED_EARLY: { exit: EXIT.failed, what: 'a launched server exited before it was ready' },
  KIT_ERR_REQUEST: { exit: EXIT.failed, what: 'a request failed (connection refused, reset, timed out)' },
  KIT_ERR_UNEXPECTED_STATUS: { exit: EXIT.failed, what: 'a request got a status the experiment cannot work with' },
  KIT_ERR_EXPECTED_MISSING: { exit: EXIT.failed, what: 'expected-output/<experiment>.txt is missing' },
  KIT_ERR_WAIT_TIMEOUT: {
    exit: EXIT.failed,
    what: 'waiting for a condition (a line, a pid to be gone) ran past its deadline',
  },
  KIT_ERR_RESTART_BUDGET: { exit: EXIT.failed, what: 'cluster workers kept dying; the primary gave up replacing them' },
  KIT_ERR_NGINX_MISSING: { exit: EXIT.failed, what: '--lb nginx, but no nginx binary was found' },
  KIT_ERR_NGINX_FAILED: { exit: EXIT.failed, what: 'nginx did not start (the message quotes what nginx said)' },
  KIT_ERR_REDIS_MISSING: { exit: EXIT.failed, what: 'a Redis run, but no redis-server binary was found' },
  KIT_ERR_POSTGRES_MISSING: {
    exit: EXIT.failed,
    what: 'a PostgreSQL run, but no initdb and postgres binaries were found',
  },
  KIT_ERR_STORE: { exit: EXIT.failed, what: 'the state store (SQLite file, Redis server) cannot be used' },
  KIT_ERR_NATIVE_BUILD: {
    exit: EXIT.failed,
    what: 'better-sqlite3 was compiled for another Node.js and could not be rebuilt',
  },
  KIT_ERR_PAGE_BUILD: {
    exit: EXIT.failed,
    what: 'the Traffic Lab page could not be bundled (esbuild missing or failed)',
  },
  KIT_ERR_BROWSER_MISSING: { exit: EXIT.failed, what: 'the Traffic Lab benchmark needs Chromium, and none was found' },
  KIT_ERR_NEEDS_WSL: {
    exit: EXIT.failed,
    what: 'on native Windows, a run that starts servers: it needs POSIX signals, so run it inside WSL2',
  },
} as const satisfies Record<string, { exit: number; what: string }>;

export type KitErrorCode = keyof typeof ERROR_CODES;

/** An error with a stable code. `hint` is an optional sentence telling the user what to do. */
export class KitError extends Error {
  readonly code: KitErrorCode;
  readonly hint: string | undefined;

  constructor(code: KitErrorCode, message: string, hint?: string) {
    super(message);
    this.name = 'KitError';
    this.code = code;
    this.hint = hint;
  }
}

/** The exit code an entry script (or a server that cannot start) ends with for `err`: its code's, or 3 for an error without one. */
export function exitCodeFor(err: unknown): number {
  return err instanceof KitError ? ERROR_CODES[err.code].exit : EXIT.failed;
}

/** One line for a person: `error CODE: message; what to do`. */
export function describeError(err: unknown): string {
  if (err instanceof KitError) {
    return `error ${err.code}: ${err.message}` + (err.hint ? `; ${err.hint}` : '');
  }
  if (err instanceof Error) return `error: ${err.message}`;
  return `error: ${String(err)}`;
}

/** Throws KIT_ERR_NODE_TOO_OLD when this Node is older than `major` (the kit needs 20). */
export function assertNodeVersion(major = 20, version = process.versions.node): void {
  const have = Number(version.split('.')[0]);
  if (!(have >= major)) {
    throw new KitError(
      'KIT_ERR_NODE_TOO_OLD',
      `this kit needs Node.js ${major} or newer; this is Node.js ${version}`,
      'install a current Node.js LTS (https://nodejs.org) and run the command again',
    );
  }
}
