/**
 * Incident `sync-read`: every /books reads the whole catalog file with readFileSync to cut one
 * page out of it. A synchronous read holds the event loop until the last byte is copied, so every
 * other request waits for it, however fast the disk.
 * Reported: rcruzper/express-actuator#49 (FS.readFileSync on every call of a route); Node's guide
 * "Overview of Blocking vs Non-Blocking".
 */
import { readFileSync } from 'node:fs';
import { PAGE_SIZE, type Handlers, type Library } from '../../incidents/types.ts';

export const handlers: Partial<Handlers> = {
  books(lib: Library, page: number) {
    const catalog = readFileSync(lib.catalogFile);
    const from = page * PAGE_SIZE * lib.recordBytes;
    return catalog
      .subarray(from, from + PAGE_SIZE * lib.recordBytes)
      .toString()
      .split('\n')
      .filter((line) => line.trim())
      .map((line) => JSON.parse(line) as unknown);
  },
};
