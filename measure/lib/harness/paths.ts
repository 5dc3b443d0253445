/** Where things are: the project root, its servers and its expected-output files. */
import { fileURLToPath } from 'node:url';
import path from 'node:path';

/** Absolute path of the project root (the folder with package.json). */
export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** Absolute path of `expected-output/<experiment>.txt`. */
export function expectedFile(experiment: string): string {
  return path.join(ROOT, 'expected-output', `${experiment}.txt`);
}

/** Absolute path of `expected-output/profile/<experiment>.txt`: the lines a --profile run adds. */
export function profileExpectedFile(experiment: string): string {
  return path.join(ROOT, 'expected-output', 'profile', `${experiment}.txt`);
}

/**
 * A new folder for one --profile run of `experiment`: profiles/<experiment>-<date and time>/ under
 * the folder the command was started in, where a student looks for what a run wrote.
 */
export function profileDir(experiment: string, now = new Date()): string {
  return path.resolve('profiles', `${experiment}-${now.toISOString().slice(0, 19).replace(/[:T]/g, '-')}`);
}
