/**
 * The kit's one native module, better-sqlite3, against the Node.js that runs it.
 *
 * A native module is compiled for one Node.js ABI (`process.versions.modules`: 115 for Node 20, 127
 * for 22, 137 for 24, 147 for 26). A student who installs with one Node and then switches (nvm, fnm,
 * a Homebrew upgrade) gets ERR_DLOPEN_FAILED "compiled against NODE_MODULE_VERSION 115" at the
 * first SQLite open. The Makefile runs `check` before every lesson: it rebuilds better-sqlite3 for
 * the running Node, with that Node's own headers (npm may be set to build against another's), and
 * says so in one line; a server that still meets the mismatch throws KIT_ERR_NATIVE_BUILD.
 *
 * lib/native-cli.ts is the command the Makefile runs (record, check).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { KitError } from './errors.ts';

export const ROOT = fileURLToPath(new URL('../', import.meta.url));
const RECORD = path.join(ROOT, 'node_modules', '.nsl-native.json');

/** Which Node.js built node_modules (written after an install or a rebuild). */
interface NativeRecord {
  node: string;
  modules: string;
}

/** The install's record, or undefined (installed by hand, or before the kit kept one). */
export function readRecord(file = RECORD): NativeRecord | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as NativeRecord;
  } catch {
    return undefined;
  }
}

export function writeRecord(file = RECORD): void {
  writeFileSync(file, JSON.stringify({ node: process.versions.node, modules: process.versions.modules }) + '\n');
}

/** The module versions in a dlopen error ("…NODE_MODULE_VERSION 115. This version of Node.js requires NODE_MODULE_VERSION 137."), or undefined. */
export function abiMismatch(err: unknown): { built: string; needed: string } | undefined {
  const e = err as NodeJS.ErrnoException;
  if (e?.code !== 'ERR_DLOPEN_FAILED') return undefined;
  const m = /NODE_MODULE_VERSION (\d+)\. This version of Node\.js requires\s+NODE_MODULE_VERSION (\d+)/.exec(e.message);
  return m ? { built: m[1]!, needed: m[2]! } : undefined;
}

/** The Node.js release line of an ABI number, for messages. */
const NODE_OF_ABI: Record<string, string> = { '115': '20', '127': '22', '137': '24', '147': '26' };

/** KIT_ERR_NATIVE_BUILD for a dlopen mismatch, in words, with the command that fixes it. */
export function nativeBuildError(mismatch: { built: string; needed: string }): KitError {
  const built = NODE_OF_ABI[mismatch.built]
    ? `Node.js ${NODE_OF_ABI[mismatch.built]}`
    : `module version ${mismatch.built}`;
  return new KitError(
    'KIT_ERR_NATIVE_BUILD',
    `better-sqlite3 was compiled for ${built} (module version ${mismatch.built}), but this is Node.js ${process.versions.node} (${mismatch.needed}): Node.js was switched after the install`,
    `run any make target (make lesson-7) and it rebuilds it, or: ${rebuildCommand()}`,
  );
}

/** The folder whose include/node holds the running Node's headers (the npm package and official tarballs ship them), or undefined. */
export function headersPrefix(execPath = process.execPath): string | undefined {
  const prefix = path.dirname(path.dirname(execPath));
  return existsSync(path.join(prefix, 'include', 'node', 'node_version.h')) ? prefix : undefined;
}

/** The shell command that rebuilds better-sqlite3 for the running Node. */
export function rebuildCommand(): string {
  const prefix = headersPrefix();
  return `${prefix ? `npm_config_nodedir=${prefix} ` : ''}npm rebuild better-sqlite3`;
}

/** Loads better-sqlite3's binding in this process: undefined when it works, the mismatch when it was built for another Node. Throws anything else. */
export function probeNative(): { built: string; needed: string } | undefined {
  const require = createRequire(path.join(ROOT, 'package.json'));
  try {
    const Database = require('better-sqlite3');
    new Database(':memory:').close();
    return undefined;
  } catch (err) {
    const m = abiMismatch(err);
    if (m) return m;
    throw err;
  }
}
