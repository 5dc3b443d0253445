/**
 * Lesson 7's exercise, as the student starts it: the loan limit's counter, kept in this process's
 * memory. `npx tsx measure/rate-limit.ts --mine` copies this file to exercises/lesson-7/limiter.ts
 * (once) and runs a 4-worker cluster whose POST /loan asks the copy's `hit` whether a member is
 * within the limit (servers/managed-cluster.ts --state redis --limiter). Each worker counts on its
 * own here, so a member gets the limit from every worker. Change the copy so that every worker
 * counts in Redis, through the client it is given, and the member gets exactly the limit.
 */
import type { Redis } from 'ioredis';

/** Each key's window: how many hits it has had, and when it ends (ms since the epoch). */
const windows = new Map<string, { count: number; endsAt: number }>();

/**
 * Counts one hit on `key` and says whether it is within `limit` hits per window. A window opens at
 * the key's first hit and lasts `windowMs`; refused hits count too. `redis` is a connected ioredis
 * client of the cluster's Redis server, unused here; `key` is ready to use as a Redis key.
 */
export async function hit(
  redis: Redis,
  key: string,
  limit: number,
  windowMs: number,
): Promise<{ allowed: boolean; count: number }> {
  const now = Date.now();
  let w = windows.get(key);
  if (w === undefined || w.endsAt <= now) {
    w = { count: 0, endsAt: now + windowMs };
    windows.set(key, w);
  }
  w.count++;
  return { allowed: w.count <= limit, count: w.count };
}
