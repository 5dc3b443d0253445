// Proves sim-vs-lab's process hygiene and flags on real processes: Ctrl-C mid-run (replicas, the
// hog and a balancer running) exits 130 and leaves no process behind; --loop and
// --seed are checked. (Its --quick shape is checked with the other lesson 4 experiments in
// e2e-lesson4.test.ts.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { assertAllGone, childrenOf, failOnWarnings, ROOT, runInProcess } from './helpers.ts';

failOnWarnings();

test('Ctrl-C mid-run (replicas, the hog and the balancer running): exit 130, every process gone', async () => {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'measure/sim-vs-lab.ts'), '--quick'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  // Once the first round has begun: three replicas, the hog and the balancer running.
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stderr! }).on('line', (l) => {
      lines.push(l);
      if (/round 1 of \d+: /.test(l)) resolve();
    });
    child.once('exit', () => reject(new Error(`ended early: ${lines.slice(-3).join(' | ')}`)));
  });
  const tree = (pid: number): number[] => [pid, ...childrenOf(pid).flatMap(tree)];
  const all = tree(child.pid!).slice(1);
  assert.ok(all.length >= 4, `three replicas and a balancer at least: ${all.length}`);
  child.kill('SIGINT');
  const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
  assert.equal(code, 130);
  await assertAllGone(all, 10_000);
});

test('sim-vs-lab: its own flags are listed and checked (usage errors exit 2)', async () => {
  const help = await runInProcess('sim-vs-lab', ['--help']);
  for (const flag of ['--loop', '--seed', '--runs']) assert.match(help.stdout, new RegExp(flag));
  for (const args of [['--loop', 'lifo'], ['--seed', '-3'], ['--runs', '0'], ['--lb', 'nginx']]) {
    const bad = await runInProcess('sim-vs-lab', args);
    assert.equal(bad.code, 2, `${args.join(' ')}: ${bad.stderr}`);
    assert.match(bad.stderr, /^error KIT_ERR_USAGE: /);
  }
});
