// Proves `make fidelity` (measure/fidelity.ts) on real runs: it runs an experiment again and again,
// keeps every run's JSON, and counts held runs, exiting 0 only when every run held; Ctrl-C mid-run
// leaves nothing behind. Its tally and flags are checked in test/unit/fidelity-tally.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after } from 'node:test';
import { pollUntil } from '../../lib/wait.ts';
import { assertAllGone, childrenOf, failOnWarnings, runScript, spawnScript } from '../helpers.ts';

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

test('Ctrl-C mid-run: the experiment and every server it started are gone, exit 130', async (t) => {
  const child = spawnScript(t, 'measure/fidelity.ts', [
    '--runs',
    '3',
    '--only',
    'degraded',
    '--out',
    path.join(dir, 'int'),
  ]);
  const tree = (pid: number): number[] => [pid, ...childrenOf(pid).flatMap(tree)];
  // The experiment's replicas and balancer are its children: wait until there are five of them.
  const all = await pollUntil(
    'the degraded run to start its servers',
    () => {
      const t = tree(child.pid!).slice(1);
      return t.length >= 5 ? t : undefined;
    },
    30_000,
    50,
  );
  child.kill('SIGINT');
  const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
  assert.equal(code, 130);
  await assertAllGone(all, 10_000);
});
