/** Finds the redis-server binary for servers/redis.ts (and for tests deciding whether to skip). */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { KitError } from '../../../lib/errors.ts';

/**
 * Where redis-server lives when it is not on PATH, below `root` (a test passes a folder of its
 * own): Debian's, Homebrew's (Apple silicon and Intel) and MacPorts' /opt/local/bin.
 */
export function redisDirs(root = '/'): string[] {
  return ['/usr/bin', '/usr/sbin', '/usr/local/bin', '/opt/homebrew/bin', '/opt/local/bin'].map((d) =>
    path.join(root, d),
  );
}

/** The redis-server binary's path, or throws KIT_ERR_REDIS_MISSING with how to install it. */
export function findRedis(env: NodeJS.ProcessEnv = process.env, extraDirs: readonly string[] = redisDirs()): string {
  for (const dir of [...(env.PATH ?? '').split(path.delimiter).filter(Boolean), ...extraDirs]) {
    const candidate = path.join(dir, 'redis-server');
    if (existsSync(candidate)) return candidate;
  }
  throw new KitError(
    'KIT_ERR_REDIS_MISSING',
    'redis-server was not found (looked on PATH and in /usr/bin, /usr/local/bin, /opt/homebrew/bin, /opt/local/bin)',
    'install it (Debian/Ubuntu: sudo apt-get install redis-server; macOS: brew install redis, or sudo port install redis), or use --state sqlite, the default, which needs no server',
  );
}
