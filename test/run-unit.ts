/**
 * Runs every test/unit/*.test.ts in this one process, one file after another. A unit test starts
 * no process, and each file alone paid more for its own Node and tsx start-up than for its tests:
 * the 35 files took 34 s one after another in processes of their own, 12.5 s together in one (Node
 * 20, this 2-core machine). The Makefile runs it beside the type check, so both cores stay busy.
 *
 * Every file's tests are registered at the top level, as with Node's own --test-isolation=none, so
 * a file-level hook (before, after) would reach every file's tests; test/unit/code-layout.test.ts
 * keeps them out of unit tests, and a test that changes process.env restores it itself. One file
 * alone: `node --import tsx --test test/unit/<file>.test.ts`.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'unit');
for (const file of readdirSync(dir)
  .filter((f) => f.endsWith('.test.ts'))
  .sort()) {
  await import(pathToFileURL(path.join(dir, file)).href);
}
