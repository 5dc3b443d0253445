/**
 * The student's file of a write-the-fix exercise (lessons 3, 7, 9 and 10): a server imports it by
 * path and takes one named export. The file is TypeScript, so the server runs under tsx (the
 * experiment starts it with node --import tsx; cluster workers inherit that through execArgv).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { KitError } from '../../../lib/errors.ts';

/**
 * Export `name` of `file`, checked to be of type `kind` (a function, or an object). KIT_ERR_USAGE
 * when the file is missing, does not load (a syntax error, say: the message names the line), or
 * has no such export.
 */
export async function importFromStudentFile<T>(file: string, name: string, kind: 'function' | 'object'): Promise<T> {
  const full = path.resolve(file);
  if (!existsSync(full)) throw new KitError('KIT_ERR_USAGE', `no file at ${file}`);
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(full).href)) as Record<string, unknown>;
  } catch (err) {
    // tsx's compile errors open with "Transform failed with 1 error:"; the next line names the place.
    const lines = String((err as Error).message ?? err)
      .split('\n')
      .filter((l) => l.trim() !== '');
    const first = /^Transform failed/.test(lines[0] ?? '') && lines[1] ? lines[1] : lines[0];
    throw new KitError('KIT_ERR_USAGE', `${file} does not load: ${first}`);
  }
  const value = mod[name];
  if (typeof value !== kind || value === null)
    throw new KitError('KIT_ERR_USAGE', `${file} exports no ${name} ${kind === 'function' ? 'function' : 'object'}`);
  return value as T;
}
