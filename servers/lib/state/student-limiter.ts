/**
 * Lesson 7's exercise inside the server: the loan limit counted by the student's `hit` (their copy
 * of servers/exercises/lesson-7/limiter.ts, given with --limiter), handed a Redis client of its own. Everything else
 * in the store (sessions, the loan counter) stays the kit's.
 */
import path from 'node:path';
import type { Redis } from 'ioredis';
import { HttpError } from '../serve/http.ts';
import { importFromStudentFile } from '../serve/student-file.ts';
import { connectRedis, type StateStore } from './stores.ts';

/** The exercise's function: servers/exercises/lesson-7/limiter.ts documents it. */
type StudentHit = (
  redis: Redis,
  key: string,
  limit: number,
  windowMs: number,
) => Promise<{ allowed: boolean; count: number }>;

/**
 * `store` with its `hit` replaced by the one in `file`, which counts under `<prefix>mine:<key>` in
 * the Redis server at `redisUrl`. A `hit` that throws, or resolves to anything but {allowed, count},
 * is a 500 naming the file. Closing the store closes the student's client too.
 */
export async function withStudentLimiter(
  store: StateStore,
  file: string,
  redisUrl: string,
  prefix: string,
): Promise<StateStore> {
  const hit = await importFromStudentFile<StudentHit>(file, 'hit', 'function');
  const redis = await connectRedis(redisUrl);
  return {
    ...store,
    async hit(key, limit, windowMs) {
      let r: Awaited<ReturnType<StudentHit>>;
      try {
        r = await hit(redis, `${prefix}mine:${key}`, limit, windowMs);
      } catch (err) {
        // The student's code threw (a misspelt command, say): name the file, not the store.
        throw new HttpError(
          500,
          `hit() in ${path.relative(process.cwd(), file)} threw: ${(err as Error)?.message ?? String(err)}`,
        );
      }
      if (typeof r?.allowed !== 'boolean' || !Number.isFinite(r?.count))
        throw new HttpError(500, `hit() in ${file} must resolve to {allowed: boolean, count: number}`);
      return r;
    },
    async close() {
      await redis.quit().catch(() => redis.disconnect());
      await store.close();
    },
  };
}
