// Proves the experiments of lessons 4 to 6 (where requests go, capacity, failure) end to end on
// real processes: each one in --quick mode through the kit's balancer and through real nginx prints
// exactly its expected shape (and, through the kit's own, answers --predict where the experiment
// has questions); nginx is stopped and its temporary prefix removed afterwards; Ctrl-C leaves
// nothing running. Each lesson's run in the fast tier (test/smoke/lessons-4-9.test.ts) is left out
// here: distribution, scale-out and rolling-restart through the kit's balancer. The flags and a
// missing nginx's error are checked in test/unit/experiment-flags.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import os from 'node:os';
import { LESSONS } from '../../measure/lib/harness/lessons.ts';
import { balancedExperiments } from '../../measure/lib/harness/experiments.ts';
import { readStat } from '../../lib/proc.ts';
import { createInterface } from 'node:readline';
import { pollUntil } from '../../lib/wait.ts';
import {
  LESSONS_RUN_WHOLE,
  assertPredicted,
  classSave,
  assertShapeOutput,
  assertAllGone,
  childrenOf,
  failOnWarnings,
  predictFor,
  skipUnless,
  holdPort,
  runInProcess,
  runScript,
  spawnScript,
} from '../helpers.ts';

failOnWarnings();
const EXPERIMENTS = LESSONS.filter((l) => LESSONS_RUN_WHOLE.includes(l.id)).flatMap((l) => l.experiments);
const BALANCED_EXPERIMENTS = await balancedExperiments(EXPERIMENTS);
/** The runs through the kit's balancer that are their lesson's run in the fast tier (test/smoke/). */
const IN_FAST_TIER = ['distribution', 'scale-out', 'rolling-restart'];
const nginxSkip = skipUnless('nginx');
const prefixes = () => readdirSync(os.tmpdir()).filter((f) => f.startsWith('nsl-nginx-'));

for (const lb of ['builtin', 'nginx'] as const) {
  for (const name of EXPERIMENTS.filter(
    (e) => (lb === 'builtin' && !IN_FAST_TIER.includes(e)) || (lb === 'nginx' && BALANCED_EXPERIMENTS.has(e)),
  )) {
    const lbArgs = BALANCED_EXPERIMENTS.has(name) ? ['--lb', lb] : [];
    // The kit's balancer's runs also answer --predict where the experiment has questions.
    test(
      `${name} ${['--quick', ...lbArgs].join(' ')} prints exactly expected-output/${name}.txt`,
      { skip: lb === 'nginx' ? nginxSkip : false },
      async (t) => {
        const before = prefixes();
        const predict = lb === 'builtin' ? await predictFor(t, name) : { args: [], questions: 0 };
        const r = await runScript(`measure/${name}.ts`, [
          '--quick',
          '--shape',
          ...lbArgs,
          ...predict.args,
          ...classSave(`lb-${lb}`),
        ]);
        assertShapeOutput(r.stdout, name, r.stderr);
        assert.equal(r.code, 0);
        assertPredicted(r.stderr, predict.questions);
        assert.doesNotMatch(r.stderr, /Warning:/);
        assert.deepEqual(
          prefixes().filter((p) => !before.includes(p)),
          [],
          'nginx prefixes removed',
        );
      },
    );
  }
}

test('LB=nginx in the environment picks nginx; a bad --lb is a usage error', { skip: nginxSkip }, async () => {
  const r = await runScript('measure/distribution.ts', ['--json'], { LB: 'nginx' });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout).result.balancer, 'nginx');
  const bad = await runInProcess('distribution', ['--lb', 'haproxy']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--lb is builtin or nginx/);
});

test(
  'Ctrl-C during a run through nginx: nginx, the replicas and the temporary prefix are all gone',
  { skip: nginxSkip },
  async (t) => {
    const before = prefixes();
    const child = spawnScript(t, 'measure/degraded.ts', ['--quick', '--lb', 'nginx']);
    const lines: string[] = [];
    await new Promise<void>((resolve, reject) => {
      createInterface({ input: child.stderr! }).on('line', (l) => {
        lines.push(l);
        if (/started nginx pid=/.test(l)) resolve();
      });
      child.once('exit', () => reject(new Error(`ended before nginx started: ${lines.join(' | ')}`)));
    });
    const tree = (pid: number): number[] => [pid, ...childrenOf(pid).flatMap(tree)];
    const all = tree(child.pid!).slice(1);
    assert.ok(all.length >= 5, `replicas, nginx wrapper, nginx master and worker: ${all.length}`);
    child.kill('SIGINT');
    const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
    assert.equal(code, 130);
    await assertAllGone(all, 10_000);
    assert.deepEqual(
      prefixes().filter((p) => !before.includes(p)),
      [],
    );
  },
);

/** The process state letter of `pid` (R, S, T for stopped, Z...), or undefined when gone (Linux /proc). */
const procState = (pid: number): string | undefined => readStat(pid)?.state;

test('Ctrl-C while failover has a replica frozen (SIGSTOP): every process is gone, the frozen one too', async (t) => {
  const child = spawnScript(t, 'measure/failover.ts', ['--quick']);
  const tree = (pid: number): number[] => [pid, ...childrenOf(pid).flatMap(tree)];
  const lines: string[] = [];
  createInterface({ input: child.stderr! }).on('line', (l) => lines.push(l));
  const exited = new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
  let frozen: number[] = [];
  let all: number[] = [];
  await pollUntil(
    'a frozen replica',
    () => {
      if (child.exitCode !== null) throw new Error(`ended before a replica was frozen: ${lines.slice(-3).join(' | ')}`);
      all = tree(child.pid!).slice(1);
      frozen = all.filter((p) => procState(p) === 'T');
      return frozen.length ? frozen : undefined;
    },
    60_000,
    20,
  );
  child.kill('SIGINT');
  assert.equal(await exited, 130);
  await assertAllGone(all, 10_000);
});

test("--port is the balancer's port: a taken one is a one-line port-in-use error (exit 3)", async () => {
  const held = await holdPort();
  try {
    const r = await runInProcess('distribution', ['--port', String(held.port)]);
    assert.equal(r.code, 3);
    assert.match(r.stderr, new RegExp(`error KIT_ERR_PORT_IN_USE: balancer could not start: port ${held.port} `));
  } finally {
    await held.release();
  }
});
