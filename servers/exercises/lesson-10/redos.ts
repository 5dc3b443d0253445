/**
 * Incident `redos`: the search checks its title with a regular expression whose nested repetition
 * backtracks exponentially on a title that does not match, and the check runs on the event loop,
 * so one search with a character the check refuses (a pasted ellipsis, …) holds every other
 * request for tens of milliseconds. It allows what the healthy check allows (letters, digits,
 * spaces and common punctuation, 200 characters at most): only its time differs.
 * Reported: markedjs/marked#1070 (backtracking in a Markdown parser run on servers), nodejs/node#9337
 * (a URL pattern that hangs at 100 % CPU); Node's guide "Don't Block the Event Loop" (REDOS).
 */
import { PAGE_SIZE, type Handlers, type Library } from '../../incidents/types.ts';

/** A title: words of letters, digits and common punctuation, each followed by at most one space. */
const TITLE = /^([\p{L}\p{N}.,:;'!?&()-]+\s?)*$/u;

export const handlers: Partial<Handlers> = {
  search(lib: Library, title: string) {
    if (title.length > 200 || !TITLE.test(title)) return { error: 'not a title' };
    const wanted = title.toLowerCase();
    const found = [];
    for (let i = 0; i < lib.books.length && found.length < PAGE_SIZE; i++)
      if (lib.lowerTitles[i]!.includes(wanted)) found.push(lib.books[i]);
    return found;
  },
};
