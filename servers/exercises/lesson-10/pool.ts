/**
 * Incident `pool`: every /export compresses the whole catalog again with gzip at level 9. zlib's
 * asynchronous calls run on libuv's thread pool, four threads by default, so a few exports at once
 * fill it and every file read the server makes (the covers) waits behind them, while the event
 * loop itself sits idle.
 * Reported: nodejs/help#4290 (zlib.gzip limited by UV_THREADPOOL_SIZE's 4 threads), nodejs/node#17047
 * (one large fs.readFile occupying a pool thread); Node's docs list the APIs that use the pool
 * (nodejs/node#14995).
 */
import { gzip } from 'node:zlib';
import { promisify } from 'node:util';
import type { Handlers, Library } from '../../incidents/types.ts';

const gzipped = promisify(gzip);

export const handlers: Partial<Handlers> = {
  exportCatalog(lib: Library) {
    return gzipped(lib.catalogJson, { level: 9 });
  },
};
