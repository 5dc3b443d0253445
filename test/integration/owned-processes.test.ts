// Proves that a process a test starts through spawnOwned (test/helpers.ts) ends when that test
// fails: a test file that starts one and then throws leaves nothing running, while the same file
// with a plain spawn leaves its process alive (so the check can fail).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pidAlive } from '../../lib/terminate.ts';
import { assertAllGone, failOnWarnings, runScript } from '../helpers.ts';

failOnWarnings();

const startedPid = (stdout: string) => Number(/started pid=(\d+)/.exec(stdout)?.[1] ?? 0);

test('a failed test ends the process it owns', async () => {
  const r = await runScript('test/fixtures/owned-then-fail.ts', ['owned'], {}, 30_000);
  assert.notEqual(r.code, 0, 'the test failed');
  assert.match(r.stdout, /failed on purpose/);
  const pid = startedPid(r.stdout);
  assert.ok(pid > 0, r.stdout);
  await assertAllGone([pid], 5000);
});

test('the check can fail: a process started by a plain spawn outlives the failed test', async () => {
  const r = await runScript('test/fixtures/owned-then-fail.ts', ['unowned'], {}, 30_000);
  const pid = startedPid(r.stdout);
  assert.ok(pid > 0, r.stdout);
  try {
    assert.equal(pidAlive(pid), true, 'nothing ended it');
  } finally {
    process.kill(pid, 'SIGKILL');
  }
  await assertAllGone([pid], 5000);
});
