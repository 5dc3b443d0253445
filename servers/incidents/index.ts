/**
 * The incidents the incident server can plant, by name: each replaces one of healthy.ts's
 * handlers with the faulty one from its file, which names the report it comes from.
 */
import type { Handlers } from './types.ts';
import { handlers as redos } from '../exercises/lesson-10/redos.ts';
import { handlers as pool } from '../exercises/lesson-10/pool.ts';
import { handlers as keepalive } from '../exercises/lesson-10/keepalive.ts';
import { handlers as shutdown } from '../exercises/lesson-10/shutdown.ts';
import { handlers as cache } from '../exercises/lesson-10/cache.ts';
import { handlers as syncRead } from '../exercises/lesson-10/sync-read.ts';

export const INCIDENTS: Record<string, Partial<Handlers>> = {
  redos,
  pool,
  keepalive,
  shutdown,
  cache,
  'sync-read': syncRead,
};
