/**
 * Incident `cache`: each page of /books is rendered once and kept, keyed by the whole URL. The
 * URL carries a session id, so almost every request adds an entry and none is ever removed: the
 * heap grows for as long as the server runs, and each garbage collection has more to go through.
 * Reported: imgproxy/imgproxy-node#10 (an unbounded Map cache that leaked memory in long-running
 * processes).
 */
import { PAGE_SIZE, type Handlers, type Library } from '../../incidents/types.ts';

/** Rendered pages by URL. */
const pages = new Map<string, string>();

export const handlers: Partial<Handlers> = {
  books(lib: Library, page: number, url: URL) {
    let rendered = pages.get(url.href);
    if (rendered === undefined) {
      rendered = JSON.stringify(lib.books.slice(page * PAGE_SIZE, (page + 1) * PAGE_SIZE));
      pages.set(url.href, rendered);
    }
    return JSON.parse(rendered) as unknown;
  },
};
