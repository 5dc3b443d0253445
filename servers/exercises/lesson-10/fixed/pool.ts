/**
 * The reference fix of incident `pool` (../pool.ts): the catalog does not change while the server
 * runs, so it is compressed once, and every /export sends the same bytes without touching the
 * thread pool. (Raising UV_THREADPOOL_SIZE would only give the compressions more threads to fill.)
 */
import { gzip } from 'node:zlib';
import { promisify } from 'node:util';
import type { Handlers, Library } from '../../../incidents/types.ts';

let compressed: Promise<Buffer> | undefined;

export const handlers: Partial<Handlers> = {
  exportCatalog(lib: Library) {
    compressed ??= promisify(gzip)(lib.catalogJson, { level: 9 });
    return compressed;
  },
};
