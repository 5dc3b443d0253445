/**
 * The incident server's handlers with no fault planted: a plain page of books, and for the other
 * handlers the reference fixes (fixed/), so that a healthy service and a fixed one are the same code.
 */
import { PAGE_SIZE, type Handlers, type Library } from './types.ts';
import { handlers as redosFix } from '../exercises/lesson-10/fixed/redos.ts';
import { handlers as poolFix } from '../exercises/lesson-10/fixed/pool.ts';
import { handlers as shutdownFix } from '../exercises/lesson-10/fixed/shutdown.ts';

export const handlers: Handlers = {
  books: (lib: Library, page: number) => lib.books.slice(page * PAGE_SIZE, (page + 1) * PAGE_SIZE),
  search: redosFix.search!,
  exportCatalog: poolFix.exportCatalog!,
  // Node's default keepAliveTimeout (5 s) outlasts the balancers' 4 s: they close idle connections first.
  configure: () => {},
  stopOnSignal: shutdownFix.stopOnSignal!,
};
