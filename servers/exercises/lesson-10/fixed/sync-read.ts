/**
 * The reference fix of incident `sync-read` (../sync-read.ts): the catalog file is read once, the
 * first time a page is asked for, with the asynchronous read (on the thread pool), and every
 * page is cut from the copy in memory.
 */
import { readFile } from 'node:fs/promises';
import { PAGE_SIZE, type Handlers, type Library } from '../../../incidents/types.ts';

let catalog: Promise<Buffer> | undefined;

export const handlers: Partial<Handlers> = {
  async books(lib: Library, page: number) {
    catalog ??= readFile(lib.catalogFile);
    const from = page * PAGE_SIZE * lib.recordBytes;
    return (await catalog)
      .subarray(from, from + PAGE_SIZE * lib.recordBytes)
      .toString()
      .split('\n')
      .filter((line) => line.trim())
      .map((line) => JSON.parse(line) as unknown);
  },
};
