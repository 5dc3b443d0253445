/**
 * The incidents the incident server can plant, by name: each replaces one of healthy.ts's
 * handlers with the faulty one from its file, which names the report it comes from.
 */
import type { Handlers } from './types.ts';
import { handlers as redos } from './redos.ts';
import { handlers as pool } from './pool.ts';
import { handlers as keepalive } from './keepalive.ts';
import { handlers as shutdown } from './shutdown.ts';
import { handlers as cache } from './cache.ts';
import { handlers as syncRead } from './sync-read.ts';

export const INCIDENTS: Record<string, Partial<Handlers>> = {
  redos,
  pool,
  keepalive,
  shutdown,
  cache,
  'sync-read': syncRead,
};
