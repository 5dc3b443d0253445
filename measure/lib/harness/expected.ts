/** Reading expected-output/<experiment>.txt (the file an experiment's shape is compared with). */
import { readFile } from 'node:fs/promises';
import { KitError } from '../../../lib/errors.ts';
import { parseExpected } from '../../../results/report/shape.ts';

/** Reads expected-output/<name>.txt; throws KIT_ERR_EXPECTED_MISSING if it is not there. */
export async function readExpected(file: string): Promise<string[]> {
  try {
    return parseExpected(await readFile(file, 'utf8'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new KitError(
        'KIT_ERR_EXPECTED_MISSING',
        `no expected shape file at ${file}`,
        'is this a complete checkout of the kit?',
      );
    }
    throw err;
  }
}

/**
 * The lines a --profile run adds to its shape, from `file` (expected-output/profile/<name>.txt):
 * none when the experiment has no such file, since most print no profile line.
 */
export async function readProfileExpected(file: string): Promise<string[]> {
  try {
    return parseExpected(await readFile(file, 'utf8'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}
