// Proves that the kit's shell scripts cannot fail on a pipe they close early. Under `set -o
// pipefail` a pipeline's exit code is that of its last failing stage; a `head` or `grep -q` stops
// reading after its first lines, so the stage before it dies of SIGPIPE on its next write (exit
// 141), and with `set -e` the whole script stops there, after every test has passed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../../measure/lib/harness/paths.ts';

/** The shell scripts of the kit, relative to ROOT. */
const SCRIPTS = ['.ci/run'];

/** Lines of a script that pipe into a reader which may stop early, when the script sets pipefail. */
function earlyClosers(text: string): string[] {
  if (!/set\s+-\w*o\s+pipefail|set\s+-o\s+pipefail|set\s+-\w*euo\s+pipefail/.test(text)) return [];
  return text
    .split('\n')
    .filter((line) => !line.trim().startsWith('#'))
    .filter((line) => /\|\s*(head\b|grep\s+(-\w*[qm]|--quiet|--max-count))/.test(line));
}

test('no shell script that sets pipefail pipes into head or grep -q', () => {
  for (const file of SCRIPTS) {
    assert.deepEqual(earlyClosers(readFileSync(path.join(ROOT, file), 'utf8')), [], file);
  }
});

test('the check finds a head or grep -q after a pipe under pipefail, and allows it without pipefail', () => {
  const bad = '#!/usr/bin/env bash\nset -euo pipefail\nsort -rn times | head -10\nps | grep -q nginx\n';
  assert.deepEqual(earlyClosers(bad), ['sort -rn times | head -10', 'ps | grep -q nginx']);
  assert.deepEqual(earlyClosers('#!/bin/sh\nsort -rn times | head -10\n'), []);
  assert.deepEqual(earlyClosers('set -o pipefail\n# | head in a comment\nsort | awk "NR <= 10"\n'), []);
});
