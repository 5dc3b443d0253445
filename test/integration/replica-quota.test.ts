// Proves lesson 5's capped replica on real processes: a cgroup left by a SIGKILLed replica is swept
// by the next one; --commit-ms holds the writer lock through the flush; bad flags are one-line usage
// errors. How closely --cpu-quota holds a replica to its share of a core is measured over seconds,
// in the end-to-end tier: test/e2e/replica-quota-precision.test.ts.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Lab } from '../../measure/lib/process/lab.ts';
import { probe, probeOk } from '../../measure/lib/load/probe.ts';
import { cgroupDir, noCgroup, QUOTA, startCapped } from '../fixtures/capped-replica.ts';
import { failOnWarnings, runScript } from '../helpers.ts';
import type { ReplicaStats } from '../../servers/contracts.ts';

failOnWarnings();
const lab = new Lab();
after(() => lab.close());

const start = (args: string[]) => startCapped(lab, args);

test('a cgroup left by a SIGKILLed replica is swept by the next one', { skip: noCgroup }, async () => {
  const killed = await start(['--cpu-quota', String(QUOTA)]);
  assert.ok(existsSync(cgroupDir(killed.pid)));
  killed.signal('SIGKILL');
  await killed.closed;
  assert.ok(existsSync(cgroupDir(killed.pid)), 'nobody removed it');
  await start(['--cpu-quota', String(QUOTA)]);
  assert.equal(existsSync(cgroupDir(killed.pid)), false);
});

test('--commit-ms: a write holds the writer lock through the flush; ?work= is checked', async () => {
  const replica = await start(['--db', path.join(lab.tempDir('db'), 'users.db'), '--commit-ms', '25']);
  const created = await probe(`${replica.url}/users?work=1`, { method: 'POST', json: { name: 'ada' } });
  assert.equal(created.status, 201);
  const db = (await probeOk<ReplicaStats>(`${replica.url}/__replica/stats`)).body.db!;
  assert.equal(db.writes, 1);
  assert.ok(db.lockHeldMs! >= 25, `held ${db.lockHeldMs} ms`);
  assert.ok(db.lockWaitMs! < 25, `waited ${db.lockWaitMs} ms with no other writer`);
  const bad = await probe(`${replica.url}/users/1?work=lots`);
  assert.equal(bad.status, 400);
  assert.match(JSON.stringify(bad.body), /work must be a whole number/);
});

test('bad quota and flush flags are one-line usage errors (exit 2)', async () => {
  const db = path.join(os.tmpdir(), `nsl-never-${process.pid}.db`);
  const cases = [
    [['--cpu-quota', '9'], /--cpu-quota must be a number of cores from 0.05 to 4; got '9'/],
    [['--cpu-quota', 'lots'], /--cpu-quota must be a number/],
    [['--quota-mode', 'throttle'], /--quota-mode only means something with --cpu-quota/],
    [['--cpu-quota', '0.2', '--quota-mode', 'fast'], /--quota-mode must be auto, cgroup or throttle/],
    [['--commit-ms', '5'], /--commit-ms only means something with a SQLite --db/],
    [['--db', db, '--commit-ms', '5000'], /--commit-ms/],
  ] as const;
  // Usage errors start nothing, so the scripts are started side by side.
  const runs = await Promise.all(cases.map(([args]) => runScript('servers/replica.ts', ['--port', '0', ...args])));
  for (const [i, [args, message]] of cases.entries()) {
    const r = runs[i]!;
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  }
  assert.equal(existsSync(db), false, 'no database is made before the flags are checked');
});
