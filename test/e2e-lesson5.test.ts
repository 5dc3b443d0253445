// Proves the lesson 5 experiments end to end on real processes: each one in --quick mode prints
// exactly its expected shape (sessions through both balancers), and with --predict prints every
// prediction beside a measure of the run; Redis is started and stopped by the
// run and its temporary folder removed; Ctrl-C mid-run leaves nothing behind; a missing
// redis-server is a coded error that says how to install it and that SQLite needs no server.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { findRedis } from '../servers/lib/redis-binary.ts';
import { assertPredicted, classSave, assertShapeOutput, assertAllGone, childrenOf, failOnWarnings, predictFor, skipUnless, ROOT, runScript } from './helpers.ts';

failOnWarnings();
const nginxSkip = skipUnless('nginx');
const redisSkip = skipUnless('redis-server');
const redisDirs = () => readdirSync(os.tmpdir()).filter((f) => f.startsWith('nsl-redis-'));

const RUNS: { name: string; args: string[]; skip: string | false }[] = [
  { name: 'sessions', args: ['--lb', 'builtin'], skip: redisSkip },
  { name: 'sessions', args: ['--lb', 'nginx'], skip: redisSkip || nginxSkip },
  { name: 'counter', args: ['--lb', 'builtin'], skip: redisSkip },
  { name: 'counter', args: ['--lb', 'nginx'], skip: redisSkip || nginxSkip },
  { name: 'rate-limit', args: [], skip: redisSkip },
];

for (const { name, args, skip } of RUNS) {
  // The kit's balancer's runs also answer --predict: every question settled by a measure of the run.
  const predicted = !args.includes('nginx');
  test(`${name} ${['--quick', ...args, ...(predicted ? ['--predict'] : [])].join(' ')} prints exactly expected-output/${name}.txt`, { skip }, async (t) => {
    const before = redisDirs();
    const predict = predicted ? await predictFor(t, name) : { args: [], questions: 0 };
    const r = await runScript(`measure/${name}.ts`, ['--quick', '--shape', ...args, ...predict.args, ...classSave(args.includes('nginx') ? 'lb-nginx' : 'lb-builtin')]);
    assertShapeOutput(r.stdout, name, r.stderr);
    assert.equal(r.code, 0);
    assertPredicted(r.stderr, predict.questions);
    assert.deepEqual(redisDirs().filter((d) => !before.includes(d)), [], 'the throwaway Redis folder is removed');
  });
}

test('Ctrl-C during counter: the cluster, its workers and redis-server are all gone', { skip: redisSkip }, async () => {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'measure/counter.ts'), '--quick'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
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
});

test('without redis-server: a coded error saying how to install it, and that SQLite is the default', () => {
  assert.throws(() => findRedis({ PATH: '/nonexistent' }, []), (e: any) => {
    assert.equal(e.code, 'KIT_ERR_REDIS_MISSING');
    assert.match(`${e.message}; ${e.hint}`, /apt-get install redis-server.*brew install redis.*--state sqlite, the default/);
    return true;
  });
});
