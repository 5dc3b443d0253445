/**
 * The files a student edits in a write-the-fix exercise (lessons 3, 7 and 9, and lesson 10's
 * incidents): copies of the kit's own, kept in exercises/ (.gitignore), so that a git pull of the
 * kit never touches them. NSL_EXERCISES_DIR puts them elsewhere (the tests use a temporary folder).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './paths.ts';

/** Where the student's copy named by `parts` lives: exercises/<parts>. */
export function exercisePath(...parts: string[]): string {
  return path.join(process.env.NSL_EXERCISES_DIR ?? path.join(ROOT, 'exercises'), ...parts);
}

/**
 * Copies `template` (a path from the project root) to `dest` unless `dest` exists, pointing each
 * relative import of a kit file back at the kit from the copy's folder. True when it copied.
 */
export function copyOnce(template: string, dest: string): boolean {
  if (existsSync(dest)) return false;
  mkdirSync(path.dirname(dest), { recursive: true });
  const from = path.dirname(path.join(ROOT, template));
  const text = readFileSync(path.join(ROOT, template), 'utf8').replace(
    /from '(\.{1,2}\/[^']+)'/g,
    (_m, rel: string) => {
      const again = path.relative(path.dirname(dest), path.resolve(from, rel)).split(path.sep).join('/');
      return `from '${again.startsWith('.') ? again : `./${again}`}'`;
    },
  );
  writeFileSync(dest, text);
  return true;
}
