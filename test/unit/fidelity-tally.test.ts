// `make fidelity`'s bookkeeping, in this process: the tally counts a line that did not hold, and a
// run that failed, against the experiment; a setup error stops it at once; usage errors exit 2 and
// name the flag. The real runs are in test/e2e/fidelity.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newTally, setupError, tallyRun } from '../../measure/lib/class/fidelity.ts';
import { expectedShape, failOnWarnings, runMainInProcess } from '../helpers.ts';
import { main as fidelityMain } from '../../measure/fidelity.ts';

failOnWarnings();

test('the tally: a line that did not hold, and a run that failed, are counted', () => {
  const expected = expectedShape('cluster');
  const t = newTally();
  tallyRun(t, expected, { code: 0, stdout: JSON.stringify({ shape: expected }), stderr: '' }, 2);
  const broken = expected.map((l) => l.replace('new-pid', 'same-pid'));
  tallyRun(t, expected, { code: 1, stdout: JSON.stringify({ shape: broken }), stderr: '' }, 2);
  tallyRun(t, expected, { code: 3, stdout: '', stderr: 'error KIT_ERR_PORT_IN_USE: port 3000 is taken\n' }, 1);
  assert.equal(t.runs, 3);
  assert.equal(t.held, 1);
  assert.equal(t.errors, 1);
  assert.deepEqual(t.failed['kill-worker  replacement  new-pid'], {
    count: 1,
    last: 'kill-worker  replacement  same-pid',
  });
  assert.deepEqual(t.failed['(the run failed)'], { count: 1, last: 'error KIT_ERR_PORT_IN_USE: port 3000 is taken' });
});

test('a setup error (native module for another Node, Node too old) is recognized, so fidelity stops at once; other errors are counted', () => {
  // The line a lesson server printed when node_modules was built for Node 20 and Node 26 ran it.
  const native =
    'error KIT_ERR_NATIVE_BUILD: replica could not start: better-sqlite3 was compiled for Node.js 20 (module version 115), but this is Node.js 26.12.1 (147)\n';
  assert.deepEqual(setupError({ code: 3, stdout: '', stderr: `[0.3s] starting one replica\n${native}` }), {
    code: 'KIT_ERR_NATIVE_BUILD',
    message:
      'replica could not start: better-sqlite3 was compiled for Node.js 20 (module version 115), but this is Node.js 26.12.1 (147)',
  });
  assert.equal(
    setupError({ code: 3, stdout: '', stderr: 'error KIT_ERR_NODE_TOO_OLD: the kit needs Node.js 20 or newer\n' })
      ?.code,
    'KIT_ERR_NODE_TOO_OLD',
  );
  assert.equal(
    setupError({ code: 3, stdout: '', stderr: 'error KIT_ERR_PORT_IN_USE: port 3000 is taken\n' }),
    undefined,
  );
  assert.equal(
    setupError({ code: 0, stdout: '{}', stderr: 'a note that mentions KIT_ERR_NATIVE_BUILD in passing\n' }),
    undefined,
  );
});

test('usage errors exit 2 and name the flag', async () => {
  const bad = await runMainInProcess(fidelityMain, ['--only', 'nosuch']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--only: no experiment 'nosuch'/);
  assert.equal((await runMainInProcess(fidelityMain, ['--runs', '0'])).code, 2);
  assert.equal((await runMainInProcess(fidelityMain, ['--lb', 'haproxy'])).code, 2);
  const help = await runMainInProcess(fidelityMain, ['--help']);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /Usage: npx tsx measure\/fidelity\.ts/);
});
