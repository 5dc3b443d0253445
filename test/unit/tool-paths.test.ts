// Proves that nginx, redis-server and PostgreSQL are found where MacPorts installs them
// (/opt/local), as well as Debian's and Homebrew's folders: each is planted below a folder of the
// test's own, which stands for the machine's root, with nothing on PATH.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findNginx, nginxDirs } from '../../servers/lib/balancer/nginx-config.ts';
import { findPostgres, postgresDirs } from '../../servers/lib/state/postgres-binary.ts';
import { findRedis, redisDirs } from '../../servers/lib/state/redis-binary.ts';

/** A fresh folder standing for `/`, with an executable file at each of `files` (paths from the root); removed after the test. */
function fakeRoot(t: { after: (fn: () => void) => void }, files: string[]): string {
  const root = mkdtempSync(path.join(os.tmpdir(), 'nsl-root-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  for (const f of files) {
    mkdirSync(path.dirname(path.join(root, f)), { recursive: true });
    writeFileSync(path.join(root, f), '#!/bin/sh\n', { mode: 0o755 });
  }
  return root;
}

const NO_PATH = { PATH: '' };

test('MacPorts: nginx in /opt/local/sbin', (t) => {
  const root = fakeRoot(t, ['opt/local/sbin/nginx']);
  assert.equal(findNginx(NO_PATH, nginxDirs(root)), path.join(root, 'opt/local/sbin/nginx'));
});

test('MacPorts: redis-server in /opt/local/bin', (t) => {
  const root = fakeRoot(t, ['opt/local/bin/redis-server']);
  assert.equal(findRedis(NO_PATH, redisDirs(root)), path.join(root, 'opt/local/bin/redis-server'));
});

test('MacPorts: PostgreSQL in /opt/local/lib/postgresql<major>/bin, the newest major first', (t) => {
  const root = fakeRoot(t, [
    'opt/local/lib/postgresql15/bin/initdb',
    'opt/local/lib/postgresql15/bin/postgres',
    'opt/local/lib/postgresql16/bin/initdb',
    'opt/local/lib/postgresql16/bin/postgres',
  ]);
  const bin = path.join(root, 'opt/local/lib/postgresql16/bin');
  assert.deepEqual(findPostgres(NO_PATH, postgresDirs(root)), {
    initdb: path.join(bin, 'initdb'),
    postgres: path.join(bin, 'postgres'),
  });
});

test('Debian and Homebrew folders are still searched, and PATH comes first', (t) => {
  const root = fakeRoot(t, [
    'usr/sbin/nginx',
    'opt/homebrew/bin/redis-server',
    'usr/lib/postgresql/15/bin/initdb',
    'usr/lib/postgresql/15/bin/postgres',
    'mine/nginx',
  ]);
  assert.equal(findNginx(NO_PATH, nginxDirs(root)), path.join(root, 'usr/sbin/nginx'));
  assert.equal(findNginx({ PATH: path.join(root, 'mine') }, nginxDirs(root)), path.join(root, 'mine/nginx'));
  assert.equal(findRedis(NO_PATH, redisDirs(root)), path.join(root, 'opt/homebrew/bin/redis-server'));
  assert.equal(
    findPostgres(NO_PATH, postgresDirs(root)).postgres,
    path.join(root, 'usr/lib/postgresql/15/bin/postgres'),
  );
});
