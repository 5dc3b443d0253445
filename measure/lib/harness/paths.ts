/** Where things are: the project root, its servers and its expected-output files. */
import { fileURLToPath } from 'node:url';
import path from 'node:path';

/** Absolute path of the project root (the folder with package.json). */
export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** Absolute path of `expected-output/<experiment>.txt`. */
export function expectedFile(experiment: string): string {
  return path.join(ROOT, 'expected-output', `${experiment}.txt`);
}
