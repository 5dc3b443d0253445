/**
 * What an incident file gives the incident server (servers/incident.ts): the handlers of the
 * library service that an incident may replace. healthy.ts has them all; each incident file
 * plants a fault in one, and a student's fix is a copy of that file with the fault taken out.
 */
import type http from 'node:http';

/** One book as the catalog stores it and /books and /search answer it. */
export interface Book {
  id: number;
  title: string;
  author: string;
  year: number;
  /** A few dozen words: what a page of books weighs is mostly these. */
  summary: string;
}

/** The library the handlers serve from, made once at start-up. */
export interface Library {
  /** The catalog file: one JSON book per line, each line padded to RECORD_BYTES (incident.ts). */
  catalogFile: string;
  /** Bytes per line of the catalog file, newline included. */
  recordBytes: number;
  /** Every book, in memory. */
  books: Book[];
  /**
   * Every book's title in lower case, in the order of `books`, made once at start-up: a search
   * compares against these instead of lower-casing 40,000 titles per request, so that a healthy
   * search costs about a millisecond of the loop, not the 6 to 10 it took (Node 24, this machine).
   */
  lowerTitles: string[];
  /**
   * Every book as one JSON array in UTF-8, made once at start-up: what /export sends, compressed.
   * Bytes, not a string, so that compressing it starts on the thread pool at once (a string would
   * first be encoded on the event loop, 11 MB per call).
   */
  catalogJson: Buffer;
  /** A folder with one small cover file per book, `<id>.txt`. */
  coversDir: string;
}

/** The handlers an incident can replace. Each returns the answer's body; the server sends it. */
export interface Handlers {
  /** GET /books?page=N: one page of PAGE_SIZE books. `url` is the whole request URL. */
  books(lib: Library, page: number, url: URL): Promise<unknown> | unknown;
  /** GET /search?title=...: the books whose title contains `title`, after checking it is a title. */
  search(lib: Library, title: string): Promise<unknown> | unknown;
  /** GET /export: the whole catalog, gzip-compressed. */
  exportCatalog(lib: Library): Promise<Buffer>;
  /** Settings on the HTTP server before it listens (timeouts, say). */
  configure(server: http.Server): void;
  /**
   * What the server does on SIGTERM: stop taking requests, finish the ones in flight, and exit.
   * `exit` ends the process with code 0.
   */
  stopOnSignal(server: http.Server, exit: () => void): void;
}

/** Books per page of /books. */
export const PAGE_SIZE = 20;
