// --save: where a run's JSON goes (a file, or <experiment>.json in a folder), the usage errors for a
// path it cannot use (given before anything starts), and the machine's nginx and Redis versions
// that each saved run records for the class roll-up.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { savePath, writeSaved } from '../../measure/lib/harness/save.ts';
import { toolVersions } from '../../measure/lib/machine/machine.ts';
import { main as lessonMain } from '../../measure/lesson.ts';
import { KitError } from '../../lib/errors.ts';
import { failOnWarnings, runInProcess, runMainInProcess, skipUnless } from '../helpers.ts';

failOnWarnings();
const dir = mkdtempSync(path.join(os.tmpdir(), 'nsl-save-test-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('a name ending in .json is the file; anything else is a folder, made if missing, that gets <experiment>.json', () => {
  assert.equal(savePath(path.join(dir, 'ann') + '/', 'pool'), path.join(dir, 'ann', 'pool.json'));
  mkdirSync(path.join(dir, 'bob'));
  assert.equal(savePath(path.join(dir, 'bob'), 'cluster'), path.join(dir, 'bob', 'cluster.json'));
  assert.equal(savePath(path.join(dir, 'deep', 'er', 'x.json'), 'pool'), path.join(dir, 'deep', 'er', 'x.json'));
  assert.equal(
    savePath(path.join(dir, 'new'), 'pool'),
    path.join(dir, 'new', 'pool.json'),
    'a name without .json is a folder, made if missing',
  );
  assert.equal(writeSaved(path.join(dir, 'ann', 'pool.json'), '{}'), undefined);
});

test('paths it cannot use are usage errors, named', () => {
  writeFileSync(path.join(dir, 'a-file'), 'x');
  const usage = (value: string, message: RegExp) =>
    assert.throws(
      () => savePath(value, 'pool'),
      (err: unknown) => err instanceof KitError && err.code === 'KIT_ERR_USAGE' && message.test(err.message),
    );
  usage(path.join(dir, 'a-file', 'sub') + '/', /cannot make the folder .*a-file/);
  usage(' ', /--save needs a file or a folder/);
  mkdirSync(path.join(dir, 'taken', 'pool.json'), { recursive: true });
  usage(path.join(dir, 'taken') + '/', /pool\.json is a folder/);
  assert.match(writeSaved(path.join(dir, 'taken', 'pool.json'), '{}') ?? '', /could not write .*EISDIR/);
});

test('an experiment and a lesson refuse an unusable --save before any server starts', async () => {
  const bad = path.join(dir, 'a-file', 'runs') + '/';
  for (const r of [
    await runInProcess('pool', ['--quick', '--save', bad]),
    await runMainInProcess(lessonMain, ['3', '--quick', '--save', bad]),
  ]) {
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /--save: cannot make the folder/);
    assert.doesNotMatch(r.stdout + r.stderr, /started |\[1\/3\]/);
  }
  const file = await runMainInProcess(lessonMain, ['3', '--quick', '--save', path.join(dir, 'one.json')]);
  assert.equal(file.code, 2);
  assert.match(file.stderr, /--save takes a folder for a lesson/);
  const empty = await runMainInProcess(lessonMain, ['3', '--quick', '--save', '']);
  assert.equal(empty.code, 2);
  assert.match(empty.stderr, /--save needs a file or a folder/);
});

test("the machine record names nginx's and Redis's versions, or null where one is missing", async () => {
  const tools = await toolVersions();
  assert.equal(tools.nginx === null, skipUnless('nginx') !== false, `nginx: ${tools.nginx}`);
  assert.equal(tools.redis === null, skipUnless('redis-server') !== false, `redis: ${tools.redis}`);
  if (tools.nginx) assert.match(tools.nginx, /^\d+\.\d+/);
  if (tools.redis) assert.match(tools.redis, /^\d+\.\d+/);
});
