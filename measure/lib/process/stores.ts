/**
 * Lesson 7's stores for an experiment: where each one lives, started as needed. SQLite is a file in
 * the run's temp dir; Redis is a throwaway redis-server (servers/redis.ts), or REDIS_URL when set.
 * Without redis-server the Redis rows are not shown, and the run says how to install it.
 */
import path from 'node:path';
import { KitError } from '../../../lib/errors.ts';
import type { StoreKind } from '../../../servers/lib/state/stores.ts';
import type { Lab } from './lab.ts';

interface StoreSetup {
  /** Server flags that select the store (for servers/replica.ts and servers/managed-cluster.ts). */
  args: string[];
}

/** Redis for this run: REDIS_URL, or a redis-server the lab starts; undefined (with why) if there is none. */
export async function redisForRun(
  lab: Lab,
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ url?: string; missing?: string }> {
  if (env.REDIS_URL) return { url: env.REDIS_URL };
  try {
    const redis = await lab.start({ server: 'redis', args: ['--port', '0'] });
    return { url: `redis://127.0.0.1:${redis.port}` };
  } catch (err) {
    if (err instanceof KitError && err.code === 'KIT_ERR_REDIS_MISSING') {
      return {
        missing:
          'redis-server is not installed (Debian/Ubuntu: sudo apt-get install redis-server; macOS: brew install redis), so the Redis rows are not shown; SQLite, the default shared store, needs no server',
      };
    }
    throw err;
  }
}

let runs = 0;
/**
 * The flags that put a server on `kind`, fresh for each call so that configurations do not share
 * counts: a new SQLite file, or a new key prefix in Redis.
 */
export function storeArgs(lab: Lab, kind: StoreKind, redisUrl: string | undefined, label: string): StoreSetup {
  if (kind === 'memory') return { args: ['--state', 'memory'] };
  if (kind === 'sqlite')
    return { args: ['--state', 'sqlite', '--state-file', path.join(lab.tempDir(`state-${label}`), 'state.db')] };
  if (!redisUrl) throw new KitError('KIT_ERR_USAGE', 'no Redis for this run');
  return {
    args: ['--state', 'redis', '--redis-url', redisUrl, '--state-prefix', `nsl:${process.pid}:${++runs}:${label}:`],
  };
}
