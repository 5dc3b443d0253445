/**
 * Every coded error of the kit, in one place (the fastify/undici pattern): each has a stable
 * `code` that tests assert on, and a message that says what was expected and what was found.
 * Library code throws these; only entry scripts print them and exit.
 */

export type KitErrorCode =
  | 'KIT_ERR_USAGE' // a flag or argument is wrong; entry scripts exit 2
  | 'KIT_ERR_PORT_IN_USE' // the port a server was asked to listen on is taken
  | 'KIT_ERR_BAD_COST' // a scrypt cost that is not a valid N,r,p or needs absurd memory
  | 'KIT_ERR_NODE_TOO_OLD' // the kit needs Node >= 20
  | 'KIT_ERR_READY_TIMEOUT' // a launched server did not print its ready line before the deadline
  | 'KIT_ERR_EXITED_EARLY' // a launched server exited before it was ready
  | 'KIT_ERR_REQUEST' // a probe request failed (connection refused, reset, timed out)
  | 'KIT_ERR_UNEXPECTED_STATUS' // a probe got a status the experiment cannot work with
  | 'KIT_ERR_EXPECTED_MISSING' // expected-output/<name>.txt is missing
  | 'KIT_ERR_WAIT_TIMEOUT' // waiting for a condition (a line, a pid to be gone) ran past its deadline
  | 'KIT_ERR_RESTART_BUDGET' // cluster workers kept dying; the primary gave up replacing them
  | 'KIT_ERR_NGINX_MISSING' // --lb nginx, but no nginx binary was found
  | 'KIT_ERR_NGINX_FAILED' // nginx did not start (its error log says why)
  | 'KIT_ERR_REDIS_MISSING' // a Redis run, but no redis-server binary was found
  | 'KIT_ERR_STORE' // the state store (SQLite file, Redis server) cannot be used
  | 'KIT_ERR_NATIVE_BUILD'; // better-sqlite3 was compiled for another Node.js and could not be rebuilt

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

/** Exit code an entry script uses for a given error: 2 for usage mistakes (a bad flag or cost), 1 otherwise. */
export function exitCodeFor(err: unknown): number {
  return err instanceof KitError && (err.code === 'KIT_ERR_USAGE' || err.code === 'KIT_ERR_BAD_COST') ? 2 : 1;
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
