/**
 * --save: a run's --json document written to a file as well, whatever the terminal shows, so a
 * student can hand in a lesson's runs (`make lesson-3 ARGS="--save runs/"`) for the class roll-up
 * (measure/rollup.ts). Its folder is made, and checked, before the run starts.
 */
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { KitError } from '../../../lib/errors.ts';

/**
 * Where --save `value` puts experiment `name`'s JSON: a name ending in ".json" is the file itself;
 * anything else is a folder, which gets `<folder>/<name>.json` (so `--save runs/ann` means the same
 * for one experiment as for a lesson). Makes the folder; throws KIT_ERR_USAGE when it cannot be
 * made or the file would replace a folder.
 */
export function savePath(value: string, name: string): string {
  if (value.trim() === '') throw new KitError('KIT_ERR_USAGE', '--save needs a file or a folder (e.g. --save runs/)');
  const isFolder = !/\.json$/i.test(value) || isDirectory(value);
  const file = isFolder ? path.join(value, `${name}.json`) : value;
  try {
    mkdirSync(path.dirname(file), { recursive: true });
  } catch (err) {
    throw new KitError(
      'KIT_ERR_USAGE',
      `--save: cannot make the folder ${path.dirname(file)} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
      'pick a folder you can write to',
    );
  }
  if (isDirectory(file))
    throw new KitError(
      'KIT_ERR_USAGE',
      `--save: ${file} is a folder`,
      'name a file ending in .json, or another folder',
    );
  return file;
}

function isDirectory(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** Writes the document; a failure here is reported, the run's verdict stands. */
export function writeSaved(file: string, json: string): string | undefined {
  try {
    writeFileSync(file, json);
    return undefined;
  } catch (err) {
    return `--save: could not write ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`;
  }
}
