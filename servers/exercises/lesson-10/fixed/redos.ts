/**
 * The reference fix of incident `redos` (../redos.ts): a title is checked with a character class
 * and a length bound, which a regular expression engine checks in one pass, with no nested
 * repetition to backtrack through.
 */
import { PAGE_SIZE, type Handlers, type Library } from '../../../incidents/types.ts';

/** A title: letters, digits, spaces and common punctuation, at most 200 characters. */
const TITLE = /^[\p{L}\p{N} .,:;'!?&()-]{1,200}$/u;

export const handlers: Partial<Handlers> = {
  search(lib: Library, title: string) {
    if (!TITLE.test(title)) return { error: 'not a title' };
    const wanted = title.toLowerCase();
    const found = [];
    for (let i = 0; i < lib.books.length && found.length < PAGE_SIZE; i++)
      if (lib.lowerTitles[i]!.includes(wanted)) found.push(lib.books[i]);
    return found;
  },
};
