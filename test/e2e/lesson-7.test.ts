// Proves the lesson 7 experiments end to end on real processes: sessions and counter in --quick mode
// print exactly their expected shape through both balancers, and with --predict print every
// prediction beside a measure of the run; Redis is started and stopped by the run and its temporary
// folder removed; Ctrl-C mid-run leaves nothing behind. rate-limit's run is in the fast tier
// (test/smoke/lessons-4-9.test.ts); a missing redis-server's error in test/unit/experiment-flags.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import os from 'node:os';
import { createInterface } from 'node:readline';
import {
  assertPredicted,
  classSave,
  assertShapeOutput,
  assertAllGone,
  childrenOf,
  failOnWarnings,
  predictFor,
  skipUnless,
  runScript,
  spawnScript,
} from '../helpers.ts';

failOnWarnings();
const nginxSkip = skipUnless('nginx');
const redisSkip = skipUnless('redis-server');
const redisDirs = () => readdirSync(os.tmpdir()).filter((f) => f.startsWith('nsl-redis-'));

const RUNS: { name: string; args: string[]; skip: string | false }[] = [
  { name: 'sessions', args: ['--lb', 'builtin'], skip: redisSkip },
  { name: 'sessions', args: ['--lb', 'nginx'], skip: redisSkip || nginxSkip },
  { name: 'counter', args: ['--lb', 'builtin'], skip: redisSkip },
  { name: 'counter', args: ['--lb', 'nginx'], skip: redisSkip || nginxSkip },
];

for (const { name, args, skip } of RUNS) {
  // The kit's balancer's runs also answer --predict: every question settled by a measure of the run.
  const predicted = !args.includes('nginx');
  test(
    `${name} ${['--quick', ...args, ...(predicted ? ['--predict'] : [])].join(' ')} prints exactly expected-output/${name}.txt`,
    { skip },
    async (t) => {
      const before = redisDirs();
      const predict = predicted ? await predictFor(t, name) : { args: [], questions: 0 };
      const r = await runScript(`measure/${name}.ts`, [
        '--quick',
        '--shape',
        ...args,
        ...predict.args,
        ...classSave(args.includes('nginx') ? 'lb-nginx' : 'lb-builtin'),
      ]);
      assertShapeOutput(r.stdout, name, r.stderr);
      assert.equal(r.code, 0);
      assertPredicted(r.stderr, predict.questions);
      assert.deepEqual(
        redisDirs().filter((d) => !before.includes(d)),
        [],
        'the throwaway Redis folder is removed',
      );
    },
  );
}

test(
  'Ctrl-C during counter: the cluster, its workers and redis-server are all gone',
  { skip: redisSkip },
  async (t) => {
    const child = spawnScript(t, 'measure/counter.ts', ['--quick']);
    const lines: string[] = [];
    await new Promise<void>((resolve, reject) => {
      createInterface({ input: child.stderr! }).on('line', (l) => {
        lines.push(l);
        if (/started redis pid=/.test(l)) resolve();
      });
      child.once('exit', () => reject(new Error(`ended before Redis started: ${lines.slice(-3).join(' | ')}`)));
    });
    const tree = (pid: number): number[] => [pid, ...childrenOf(pid).flatMap(tree)];
    const all = tree(child.pid!).slice(1);
    assert.ok(all.length >= 2, `the redis wrapper and redis-server at least: ${all.length}`);
    child.kill('SIGINT');
    const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
    assert.equal(code, 130);
    await assertAllGone(all, 10_000);
  },
);
