// Proves the capped-scale-out experiment beyond its shape (test/e2e/lessons-4-6.test.ts runs that on
// both balancers): with no modelled flush (--commit-ms 0) the database lines fail, as they must when
// their mechanism is gone, and the others still hold; PostgreSQL does not fill; Ctrl-C mid-run ends
// every replica and leaves none of their cgroups behind. Its flags are checked in
// test/unit/experiment-flags.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { probeCgroup, releaseCgroup } from '../../servers/lib/cpu/quota.ts';
import {
  assertAllGone,
  classSave,
  childrenOf,
  expectedShape,
  failedLines,
  failOnWarnings,
  runScript,
  skipUnless,
  spawnScript,
} from '../helpers.ts';

failOnWarnings();

test('capped-scale-out --commit-ms 0: the database never fills, so exactly its three lines fail', async () => {
  const r = await runScript(
    'measure/capped-scale-out.ts',
    ['--quick', '--shape', '--commit-ms', '0', ...classSave('commit-ms-0')],
    {},
    180_000,
  );
  assert.equal(r.code, 1, r.stderr);
  const actual = r.stdout
    .trim()
    .split('\n')
    .filter((l) => !l.startsWith('#'));
  assert.deepEqual(failedLines(expectedShape('capped-scale-out'), actual), [
    'user-scenario  5-replicas-vs-3  flat',
    'user-scenario  database-at-5-replicas  full',
    'user-scenario  replicas-cpu-at-5  below-cap',
  ]);
});

test(
  'capped-scale-out --db postgres: the replicas grow to 5, and the database lines say PostgreSQL does not fill',
  { skip: skipUnless('postgresql') },
  async () => {
    const r = await runScript('measure/capped-scale-out.ts', ['--quick', '--db', 'postgres'], {}, 180_000);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /PostgreSQL\s+│/);
    assert.match(r.stdout, /does not fill within 5 replicas of 0\.2 core \(at 5 replicas it used [\d.]+ core/);
    for (const key of ['5-replicas-vs-3', 'database-at-5-replicas', 'replicas-cpu-at-5'])
      assert.match(r.stdout, new RegExp(`- user-scenario  ${key} .*not shown`));
    assert.match(r.stdout, /✓ user-scenario  2-replicas-vs-1  grows/);
  },
);

const pgFolders = () => readdirSync(os.tmpdir()).filter((f) => f.startsWith('nsl-postgres-'));

for (const db of ['sqlite', 'postgres'] as const) {
  test(
    `Ctrl-C during capped-scale-out --db ${db}: every process is gone, and so are the replicas' cgroups${db === 'postgres' ? " and PostgreSQL's folder" : ''}`,
    { skip: db === 'postgres' ? skipUnless('postgresql') : false },
    async (t) => {
      const support = probeCgroup(`nsl-test-${process.pid}`);
      releaseCgroup(support);
      const before = pgFolders();
      const child = spawnScript(t, 'measure/capped-scale-out.ts', ['--quick', '--db', db]);
      const lines: string[] = [];
      await new Promise<void>((resolve, reject) => {
        createInterface({ input: child.stderr! }).on('line', (l) => {
          lines.push(l);
          if (/2 replica\(s\): cpu-bound/.test(l)) resolve();
        });
        child.once('exit', () => reject(new Error(`ended before its second step: ${lines.slice(-3).join(' | ')}`)));
      });
      const tree = (pid: number): number[] => [pid, ...childrenOf(pid).flatMap(tree)];
      const all = tree(child.pid!).slice(1);
      assert.ok(
        all.length >= (db === 'postgres' ? 10 : 6),
        `5 replicas, the balancer${db === 'postgres' ? ', PostgreSQL and its processes' : ''}: ${all.length}`,
      );
      const groups = support.ok
        ? all.map((pid) => path.join(path.dirname(support.base), `nsl-${pid}`)).filter((d) => existsSync(d))
        : [];
      if (support.ok) assert.equal(groups.length, 5, 'each replica in a cgroup of its own');
      if (db === 'postgres') assert.equal(pgFolders().filter((f) => !before.includes(f)).length, 1);
      child.kill('SIGINT');
      const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
      assert.equal(code, 130);
      await assertAllGone(all, 10_000);
      assert.deepEqual(
        groups.filter((d) => existsSync(d)),
        [],
        'cgroups removed',
      );
      assert.deepEqual(
        pgFolders().filter((f) => !before.includes(f)),
        [],
        "PostgreSQL's folder removed",
      );
    },
  );
}
