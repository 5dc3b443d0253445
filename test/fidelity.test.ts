// Proves `make fidelity` (measure/fidelity.ts): it runs real experiments again and again, keeps
// every run's JSON, and counts held runs and failed lines, exiting 0 only when every run held;
// the tally counts a line that did not hold, and a run that failed, against the experiment.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after } from 'node:test';
import { spawn } from 'node:child_process';
import { newTally, setupError, tallyRun } from '../measure/lib/fidelity.ts';
import { pollUntil } from '../measure/lib/wait.ts';
import { assertAllGone, childrenOf, expectedShape, failOnWarnings, ROOT, runMainInProcess, runScript } from './helpers.ts';
import { main as fidelityMain } from '../measure/fidelity.ts';

failOnWarnings();
const dir = mkdtempSync(path.join(os.tmpdir(), 'nsl-fidelity-test-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('two runs of cluster: both held, both JSON files kept, the table and summary say so', async () => {
  const out = path.join(dir, 'cluster');
  const r = await runScript('measure/fidelity.ts', ['--runs', '2', '--only', 'cluster', '--out', out]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /│ cluster +│ +2\/2 │/);
  assert.deepEqual(readdirSync(out).sort(), ['cluster-01.json', 'cluster-02.json', 'summary.json']);
  const summary = JSON.parse(readFileSync(path.join(out, 'summary.json'), 'utf8'));
  assert.equal(summary.tallies.cluster.held, 2);
  assert.equal(JSON.parse(readFileSync(path.join(out, 'cluster-01.json'), 'utf8')).experiment, 'cluster');
});

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
  assert.deepEqual(t.failed['kill-worker  replacement  new-pid'], { count: 1, last: 'kill-worker  replacement  same-pid' });
  assert.deepEqual(t.failed['(the run failed)'], { count: 1, last: 'error KIT_ERR_PORT_IN_USE: port 3000 is taken' });
});

test('a setup error (native module for another Node, Node too old) is recognized, so fidelity stops at once; other errors are counted', () => {
  // The line a lesson server printed when node_modules was built for Node 20 and Node 26 ran it.
  const native = 'error KIT_ERR_NATIVE_BUILD: replica could not start: better-sqlite3 was compiled for Node.js 20 (module version 115), but this is Node.js 26.12.1 (147)\n';
  assert.deepEqual(setupError({ code: 3, stdout: '', stderr: `[0.3s] starting one replica\n${native}` }), {
    code: 'KIT_ERR_NATIVE_BUILD',
    message: 'replica could not start: better-sqlite3 was compiled for Node.js 20 (module version 115), but this is Node.js 26.12.1 (147)',
  });
  assert.equal(setupError({ code: 3, stdout: '', stderr: 'error KIT_ERR_NODE_TOO_OLD: the kit needs Node.js 20 or newer\n' })?.code, 'KIT_ERR_NODE_TOO_OLD');
  assert.equal(setupError({ code: 3, stdout: '', stderr: 'error KIT_ERR_PORT_IN_USE: port 3000 is taken\n' }), undefined);
  assert.equal(setupError({ code: 0, stdout: '{}', stderr: 'a note that mentions KIT_ERR_NATIVE_BUILD in passing\n' }), undefined);
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

test('Ctrl-C mid-run: the experiment and every server it started are gone, exit 130', async () => {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'measure/fidelity.ts'), '--runs', '3', '--only', 'degraded', '--out', path.join(dir, 'int')], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const tree = (pid: number): number[] => [pid, ...childrenOf(pid).flatMap(tree)];
  // The experiment's replicas and balancer are its children: wait until there are five of them.
  const all = await pollUntil('the degraded run to start its servers', () => {
    const t = tree(child.pid!).slice(1);
    return t.length >= 5 ? t : undefined;
  }, 30_000, 50);
  child.kill('SIGINT');
  const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
  assert.equal(code, 130);
  await assertAllGone(all, 10_000);
});
