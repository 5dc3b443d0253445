// Proves the throwaway PostgreSQL (servers/postgres.ts) on real processes: it starts, replicas use
// it for /users, and on SIGTERM the postmaster and every backend are gone and its folder removed;
// a taken port is a one-line port-in-use error; a missing PostgreSQL is a coded error saying how
// to install it. Skips, saying why, where PostgreSQL is not installed (.ci/run installs it).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Lab } from '../../measure/lib/process/lab.ts';
import { startPostgres } from '../../measure/lib/process/postgres.ts';
import { probe, probeOk } from '../../measure/lib/load/probe.ts';
import { startReplicas } from '../../measure/lib/process/topology.ts';
import { findPostgres } from '../../servers/lib/state/postgres-binary.ts';
import { assertAllGone, childrenOf, failOnWarnings, holdPort, runScript, skipUnless } from '../helpers.ts';
import type { ReplicaStats, UserRow } from '../../servers/contracts.ts';

failOnWarnings();
const skip = skipUnless('postgresql');
const lab = new Lab();
after(() => lab.close());
const folders = () => readdirSync(os.tmpdir()).filter((f) => f.startsWith('nsl-postgres-'));

test(
  'a throwaway PostgreSQL: replicas share its users table; SIGTERM ends every process and removes its folder',
  { skip },
  async () => {
    const before = folders();
    const pg = await startPostgres(lab);
    assert.match(pg.url, /^postgres:\/\/nsl@127\.0\.0\.1:\d+\/postgres$/);
    const made = folders().filter((f) => !before.includes(f));
    assert.equal(made.length, 1);
    const [a, b] = await startReplicas(lab, 2, [], [], pg.url);
    const created = await probe<Pick<UserRow, 'id'>>(`${a!.url}/users`, { method: 'POST', json: { name: 'grace' } });
    assert.equal(created.status, 201);
    const read = await probeOk<{ user: UserRow }>(`${b!.url}/users/${created.body.id}`);
    assert.equal(read.body.user.name, 'grace');
    assert.equal(read.body.user.createdBy, 'app1');
    assert.equal((await probeOk<ReplicaStats>(`${a!.url}/__replica/stats`)).body.db?.writes, 1);
    const tree = (pid: number): number[] => [pid, ...childrenOf(pid).flatMap(tree)];
    const all = tree(pg.proc.pid);
    assert.ok(all.length >= 4, `the wrapper, the postmaster and its processes: ${all.length}`);
    await lab.stop(a!.proc);
    await lab.stop(b!.proc);
    await lab.stop(pg.proc);
    await assertAllGone(all, 10_000);
    assert.equal(existsSync(path.join(os.tmpdir(), made[0]!)), false);
  },
);

test('a taken port is a one-line port-in-use error (exit 3), and the folder is removed', { skip }, async () => {
  const before = folders();
  const held = await holdPort();
  try {
    const r = await runScript('servers/postgres.ts', ['--port', String(held.port)], {}, 60_000);
    assert.equal(r.code, 3, r.stderr);
    assert.match(r.stderr, new RegExp(`KIT_ERR_PORT_IN_USE: port ${held.port}`));
  } finally {
    await held.release();
  }
  assert.deepEqual(
    folders().filter((f) => !before.includes(f)),
    [],
  );
});

test('without PostgreSQL: a coded error saying how to install it, and that SQLite needs no server', () => {
  assert.throws(
    () => findPostgres({ PATH: '/nonexistent' }, []),
    (e: any) => {
      assert.equal(e.code, 'KIT_ERR_POSTGRES_MISSING');
      assert.match(
        `${e.message}; ${e.hint}`,
        /apt-get install postgresql.*brew install postgresql.*SQLite, the default, needs no server/,
      );
      return true;
    },
  );
});
