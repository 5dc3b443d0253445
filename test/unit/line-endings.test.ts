// Proves that a clone keeps LF line endings on every OS: .gitattributes sets eol=lf for every text
// file (Git for Windows would otherwise check out CRLF, which breaks the shell scripts and the
// Makefile under WSL2), marks the images binary, and no file in the tree has a CR today.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../../measure/lib/harness/paths.ts';

/** The attribute lines of .gitattributes, comments and blank lines left out. */
function attributes(): string[][] {
  return readFileSync(path.join(ROOT, '.gitattributes'), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => l.split(/\s+/));
}

/** Every file below `dir` (node_modules, .git and .tmp left out), relative to ROOT. */
function files(dir = ROOT): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    if (e.name === 'node_modules' || e.name === '.git' || e.name === '.tmp') return [];
    const full = path.join(dir, e.name);
    return e.isDirectory() ? files(full) : [path.relative(ROOT, full)];
  });
}

test('.gitattributes: every text file is checked out with LF, images are binary', () => {
  const attrs = attributes();
  assert.deepEqual(
    attrs.find((a) => a[0] === '*'),
    ['*', 'text=auto', 'eol=lf'],
  );
  const binaryExts = new Set(
    files()
      .filter((f) => /\.(png|jpe?g|gif|ico|woff2?)$/i.test(f))
      .map((f) => path.extname(f).toLowerCase()),
  );
  for (const ext of binaryExts)
    assert.ok(
      attrs.some((a) => a[0] === `*${ext}` && a.includes('binary')),
      `*${ext} is not marked binary`,
    );
});

/** The kit's own files: its folders and root files (a student's saved runs or notes beside them are theirs). */
const KIT_FOLDERS = [
  '.ci',
  'docs',
  'expected-output',
  'core',
  'instructors',
  'lessons',
  'lib',
  'measure',
  'results',
  'servers',
  'sim',
  'test',
  'web',
];
const KIT_ROOT_FILES = ['.gitattributes', '.gitignore', 'Makefile', 'README.md', 'package.json', 'tsconfig.json'];

test('no text file of the kit has a CR', () => {
  const kit = files().filter((f) => KIT_ROOT_FILES.includes(f) || KIT_FOLDERS.includes(f.split(path.sep)[0]!));
  assert.ok(kit.length > 300, `${kit.length} files`);
  const withCr = kit.filter(
    (f) => !/\.(png|jpe?g|gif|ico|woff2?)$/i.test(f) && readFileSync(path.join(ROOT, f)).includes(13),
  );
  assert.deepEqual(withCr, []);
});
