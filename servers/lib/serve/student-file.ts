/**
 * The student's file of a write-the-fix exercise (lessons 3, 7, 9 and 10): a server imports it by
 * path and takes one named export. The file is TypeScript. esbuild compiles it, with the kit files
 * it imports, into one module under node_modules/.cache/nsl/student/, which is imported and then
 * removed (its source map stays beside it for an hour, so that --profile names the student's lines,
 * measure/lib/profile/collect.ts): a bundled server (and each of a cluster's workers) then starts without tsx's loader,
 * which cost a 4-worker cluster 1.5 s of its 2.5 s start here. Packages stay imports, found in the
 * kit's node_modules as the student's own file would find them. Where esbuild cannot run, the
 * server itself runs through tsx (measure/lib/process/bundle.ts), which imports the file as it is.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { KitError } from '../../../lib/errors.ts';
import { ROOT } from '../../../lib/native.ts';

/** Where the compiled modules go for the moment of their import. */
const OUT_DIR = path.join(ROOT, 'node_modules', '.cache', 'nsl', 'student');
/** A compiled module older than this was left by a process killed while importing it: removed, ms. */
const STALE_MS = 3_600_000;

/**
 * esbuild's first error, the place first as a compiler says it: `line 3, column 10: …` in the
 * student's own file (`full`), `<file>:3:10: …` in a file it imports.
 */
function esbuildMessage(err: unknown, full: string): string | undefined {
  const first = (err as { errors?: { text: string; location?: { file: string; line: number; column: number } }[] })
    .errors?.[0];
  if (!first) return undefined;
  const at = first.location;
  if (!at) return first.text;
  // esbuild names the file relative to its working folder, the process's.
  if (path.resolve(at.file) === full) return `line ${at.line}, column ${at.column + 1}: ${first.text}`;
  return `${at.file}:${at.line}:${at.column + 1}: ${first.text}`;
}

/** The first line of a failed import's message: tsx opens its compile errors with "Transform failed". */
function importMessage(err: unknown): string {
  const lines = String((err as Error)?.message ?? err)
    .split('\n')
    .filter((l) => l.trim() !== '');
  return /^Transform failed/.test(lines[0] ?? '') && lines[1] ? lines[1] : (lines[0] ?? String(err));
}

/** Removes compiled modules that a killed process left behind. */
function sweep(): void {
  for (const f of readdirSync(OUT_DIR)) {
    const p = path.join(OUT_DIR, f);
    try {
      if (Date.now() - statSync(p).mtimeMs > STALE_MS) rmSync(p, { force: true });
    } catch {
      // another process removed it first
    }
  }
}

/**
 * The URL to import `full` from: a module esbuild made of it, or undefined when esbuild is not
 * there (the file is then imported as it is, through tsx). A compile error is KIT_ERR_USAGE naming
 * the place.
 */
async function compile(full: string, shown: string): Promise<{ url: string; remove(): void } | undefined> {
  let esbuild: typeof import('esbuild');
  try {
    esbuild = await import('esbuild');
  } catch {
    return undefined;
  }
  mkdirSync(OUT_DIR, { recursive: true });
  sweep();
  const out = path.join(OUT_DIR, `${process.pid}-${randomBytes(4).toString('hex')}-${path.basename(full, '.ts')}.mjs`);
  try {
    await esbuild.build({
      entryPoints: [full],
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      packages: 'external',
      outfile: out,
      sourcemap: 'external',
      // The student's code sees its own file's URL, wherever the compiled module is.
      define: { 'import.meta.url': JSON.stringify(pathToFileURL(full).href) },
      logLevel: 'silent',
    });
  } catch (err) {
    throw new KitError('KIT_ERR_USAGE', `${shown} does not load: ${esbuildMessage(err, full) ?? importMessage(err)}`);
  } finally {
    await esbuild.stop();
  }
  return { url: pathToFileURL(out).href, remove: () => rmSync(out, { force: true }) };
}

/**
 * Export `name` of `file`, checked to be of type `kind` (a function, or an object). KIT_ERR_USAGE
 * when the file is missing, does not load (a syntax error, say: the message names the line), or
 * has no such export.
 */
export async function importFromStudentFile<T>(file: string, name: string, kind: 'function' | 'object'): Promise<T> {
  const full = path.resolve(file);
  if (!existsSync(full)) throw new KitError('KIT_ERR_USAGE', `no file at ${file}`);
  const built = await compile(full, file);
  let mod: Record<string, unknown>;
  try {
    mod = (await import(built?.url ?? pathToFileURL(full).href)) as Record<string, unknown>;
  } catch (err) {
    throw new KitError('KIT_ERR_USAGE', `${file} does not load: ${importMessage(err)}`);
  } finally {
    built?.remove();
  }
  const value = mod[name];
  if (typeof value !== kind || value === null)
    throw new KitError('KIT_ERR_USAGE', `${file} exports no ${name} ${kind === 'function' ? 'function' : 'object'}`);
  return value as T;
}
