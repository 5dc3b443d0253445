/**
 * The reference fix of incident `cache` (../cache.ts): pages are kept by page number, which is all
 * that decides what a page holds, and at most MAX_PAGES of them, the least recently used leaving
 * first (a Map iterates in insertion order, so re-inserting on a hit keeps the order).
 */
import { PAGE_SIZE, type Handlers, type Library } from '../../../incidents/types.ts';

/** Pages kept at most: a few MB. */
const MAX_PAGES = 500;
const pages = new Map<number, string>();

export const handlers: Partial<Handlers> = {
  books(lib: Library, page: number) {
    let rendered = pages.get(page);
    if (rendered === undefined) {
      rendered = JSON.stringify(lib.books.slice(page * PAGE_SIZE, (page + 1) * PAGE_SIZE));
      if (pages.size >= MAX_PAGES) pages.delete(pages.keys().next().value!);
    } else {
      pages.delete(page);
    }
    pages.set(page, rendered);
    return JSON.parse(rendered) as unknown;
  },
};
