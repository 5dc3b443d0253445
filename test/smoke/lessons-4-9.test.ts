// One short end-to-end run for each of lessons 4 to 9, on real processes, so that a broken lesson
// fails the fast tier on every Node: distribution, scale-out (both through the kit's balancer),
// rolling-restart, rate-limit (Redis, SQLite and memory) and stages, each in --quick mode printing
// exactly its expected shape and answering --predict where it has questions; shared-compute (a CPU
// quota) with 4 s of load per scenario, measuring every line of its shape. Every other run of
// these lessons is in test/e2e/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import os from 'node:os';
import { parseExpected } from '../../results/report/shape.ts';
import {
  assertPredicted,
  assertShapeOutput,
  classSave,
  expectedShape,
  failedLines,
  failOnWarnings,
  predictFor,
  runScript,
  skipUnless,
} from '../helpers.ts';

failOnWarnings();
const CGROUP_PARENTS = ['/sys/fs/cgroup', '/sys/fs/cgroup/cpu'].filter((d) => existsSync(d));
const kitCgroups = () => CGROUP_PARENTS.flatMap((d) => readdirSync(d).filter((f) => /^nsl-\d+$/.test(f)));
const redisDirs = () => readdirSync(os.tmpdir()).filter((f) => f.startsWith('nsl-redis-'));

test('lesson 4: distribution --quick --lb builtin --predict prints exactly expected-output/distribution.txt', async (t) => {
  const predict = await predictFor(t, 'distribution');
  const r = await runScript('measure/distribution.ts', [
    '--quick',
    '--shape',
    '--lb',
    'builtin',
    ...predict.args,
    ...classSave('lb-builtin'),
  ]);
  assertShapeOutput(r.stdout, 'distribution', r.stderr);
  assert.equal(r.code, 0);
  assertPredicted(r.stderr, predict.questions);
  assert.doesNotMatch(r.stderr, /Warning:/);
});

// The shortest run of each of lessons 5 and 6 (12.8 s and 5.8 s in CI's e2e tier).
for (const [lesson, name, lbArgs] of [
  [5, 'scale-out', ['--lb', 'builtin']],
  [6, 'rolling-restart', []],
] as const) {
  test(`lesson ${lesson}: ${name} ${['--quick', ...lbArgs].join(' ')} --predict prints exactly expected-output/${name}.txt`, async (t) => {
    const predict = await predictFor(t, name);
    const r = await runScript(`measure/${name}.ts`, [
      '--quick',
      '--shape',
      ...lbArgs,
      ...predict.args,
      ...classSave('lb-builtin'),
    ]);
    assertShapeOutput(r.stdout, name, r.stderr);
    assert.equal(r.code, 0);
    assertPredicted(r.stderr, predict.questions);
    assert.doesNotMatch(r.stderr, /Warning:/);
  });
}

test(
  'lesson 7: rate-limit --quick --predict prints exactly expected-output/rate-limit.txt',
  { skip: skipUnless('redis-server') },
  async (t) => {
    const before = redisDirs();
    const predict = await predictFor(t, 'rate-limit');
    const r = await runScript('measure/rate-limit.ts', [
      '--quick',
      '--shape',
      ...predict.args,
      ...classSave('lb-builtin'),
    ]);
    assertShapeOutput(r.stdout, 'rate-limit', r.stderr);
    assert.equal(r.code, 0);
    assertPredicted(r.stderr, predict.questions);
    assert.deepEqual(
      redisDirs().filter((d) => !before.includes(d)),
      [],
      'the throwaway Redis folder is removed',
    );
  },
);

// shared-compute's --quick run takes about 40 s (three scenarios of 12 s of load); 4 s each is
// enough to run every part of it, though not to promise its shape, which test/e2e/lesson-8.test.ts
// checks with the full --quick load.
test('lesson 8: shared-compute --quick --load-s 4 runs end to end and measures every line of expected-output/shared-compute.txt', async () => {
  const before = kitCgroups();
  const r = await runScript('measure/shared-compute.ts', ['--quick', '--load-s', '4', '--shape'], {}, 180_000);
  assert.ok(r.code === 0 || r.code === 1, `exit ${r.code} (0 or 1: the run finished): ${r.stderr}`);
  const key = (line: string) => line.split(/ {2,}/).slice(0, -1).join('  ');
  assert.deepEqual(parseExpected(r.stdout).map(key), expectedShape('shared-compute').map(key), r.stderr);
  assert.deepEqual(
    kitCgroups().filter((d) => !before.includes(d)),
    [],
    'no cgroup left behind',
  );
});

test('lesson 9: stages --quick --shape --predict prints exactly expected-output/stages.txt, and every prediction beside a measure', async (t) => {
  const predict = await predictFor(t, 'stages');
  const r = await runScript('measure/stages.ts', ['--quick', '--shape', ...predict.args, ...classSave('lb-builtin')]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assertPredicted(r.stderr, predict.questions);
  if (skipUnless('nginx')) {
    assert.deepEqual(failedLines(expectedShape('stages'), r.stdout.trim().split('\n')), []);
    assert.match(r.stdout, /# not shown here: nginx: /);
  } else {
    assertShapeOutput(r.stdout, 'stages', r.stderr);
  }
});
