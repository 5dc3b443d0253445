// Lesson 3's run in the fast tier, on real servers: the lesson runner runs blocking, pool and
// cluster, and each --quick --shape output equals its expected file; the normal output shows the
// table and the verdict, --json is the result, a taken port is one line; the spawned script's
// --help and bad flag; Ctrl-C, SIGTERM and SIGKILL mid-run leave no process behind and the port
// free. Every experiment's flags are checked in this process in test/unit/experiment-flags.test.ts.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createInterface } from 'node:readline';
import { LESSONS } from '../../measure/lib/harness/lessons.ts';
import { pollUntil } from '../../lib/wait.ts';
import {
  assertShapeOutput,
  classSave,
  assertAllGone,
  childrenOf,
  failOnWarnings,
  holdPort,
  portFree,
  runInProcess,
  runScript,
  spawnScript,
} from '../helpers.ts';

failOnWarnings();
const EXPERIMENTS = LESSONS.find((l) => l.id === 3)!.experiments;

const noWarnings = (stderr: string) => assert.doesNotMatch(stderr, /Warning:/, stderr);

test('the script a student types runs its experiment: --help exits 0, a bad flag exits 2 with one coded line', async () => {
  const help = await runScript('measure/pool.ts', ['--help']);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /--quick/);
  const bad = await runScript('measure/pool.ts', ['--nonsense']);
  assert.equal(bad.code, 2);
  assert.deepEqual(bad.stderr.trim().split('\n').length, 1, bad.stderr);
  assert.match(bad.stderr, /^error KIT_ERR_USAGE: /);
});

test('normal output: the table, the per-line verdicts and "The shape holds", without colour codes off a terminal', async () => {
  const r = await runInProcess('cluster', ['--quick']);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /Lesson 3 · cluster/);
  assert.match(r.stdout, /┌/);
  assert.match(r.stdout, /✓ fresh-connections {2}4-loans-per-worker {2}4-on-every-worker/);
  assert.match(r.stdout, /The shape holds\./);
  assert.doesNotMatch(r.stdout, /\x1b\[/);
});

test('--json prints the result with its shape and verdict', async () => {
  const r = await runInProcess('blocking', ['--quick', '--json']);
  assert.equal(r.code, 0, r.stderr);
  const j = JSON.parse(r.stdout);
  assert.equal(j.experiment, 'blocking');
  assert.equal(j.holds, true);
  assert.equal(j.result.blocks.length, 2);
  assert.equal(typeof j.result.machine.cores, 'number');
  // The ratios behind the shape, in numbers: blocked light requests wait ~100x longer.
  const [blocking, pooled] = j.result.blocks;
  assert.ok(Math.min(...blocking.lightMs) > 10 * Math.max(...pooled.lightMs));
});

test('a taken --port: exit 3 and one line naming the port; --shape with --json is a usage error', async () => {
  const held = await holdPort();
  try {
    const r = await runInProcess('blocking', ['--quick', '--port', String(held.port)]);
    assert.equal(r.code, 3);
    const errors = r.stderr.split('\n').filter((l) => l.startsWith('error'));
    assert.equal(errors.length, 1);
    assert.match(errors[0]!, new RegExp(`^error KIT_ERR_PORT_IN_USE: loan could not start: port ${held.port} `));
  } finally {
    await held.release();
  }
  const both = await runInProcess('cluster', ['--shape', '--json']);
  assert.equal(both.code, 2);
});

// Each lesson 3 experiment's --quick shape, checked once: through the lesson runner, which runs
// them one after another as `make lesson-3` does.
test(`the lesson runner runs ${EXPERIMENTS.join(', ')}: each --quick --shape prints exactly its expected file, stdout holds only shape lines`, async () => {
  const r = await runScript('measure/lesson.ts', ['3', '--quick', '--shape', ...classSave('lb-builtin')]);
  assertShapeOutput(r.stdout, EXPERIMENTS, r.stderr);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  for (const name of EXPERIMENTS) assert.match(r.stderr, new RegExp(`${name} +shape holds`));
  noWarnings(r.stderr);
  assert.match(r.stderr, /started /, 'progress goes to stderr');
});

/** Starts an experiment, waits for a progress line naming a started server, then sends `signal`. */
async function interrupt(
  t: TestContext,
  script: string,
  waitFor: RegExp,
  signal: NodeJS.Signals,
  args: string[] = ['--quick'],
) {
  const child = spawnScript(t, script, args);
  const rl = createInterface({ input: child.stderr! });
  const stderr: string[] = [];
  const started = await new Promise<RegExpExecArray>((resolve, reject) => {
    rl.on('line', (l) => {
      stderr.push(l);
      const m = waitFor.exec(l);
      if (m) resolve(m);
    });
    child.once('exit', () => reject(new Error(`${script} ended before ${waitFor}`)));
  });
  const serverPid = Number(started[1]);
  const port = Number(started[2]);
  const descendants = [serverPid, ...childrenOf(serverPid)];
  child.kill(signal);
  const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
  // An interruption is not an error: nothing after it may say "error".
  assert.deepEqual(
    stderr.filter((l) => /\berror\b/i.test(l)),
    [],
  );
  return { code, serverPid, port, descendants };
}

test('Ctrl-C (SIGINT) in the middle of a run stops every server and frees the port', async (t) => {
  const r = await interrupt(t, 'measure/pool.ts', /started loan pid=(\d+) port=(\d+)/, 'SIGINT');
  assert.equal(r.code, 130);
  await assertAllGone(r.descendants);
  assert.equal(await portFree(r.port), true);
});

test('SIGTERM to a run with a cluster stops the primary and every worker', async (t) => {
  const r = await interrupt(t, 'measure/cluster.ts', /started cluster pid=(\d+) port=(\d+)/, 'SIGTERM');
  assert.equal(r.code, 143);
  assert.ok(r.descendants.length >= 4, 'primary and 3 workers');
  await assertAllGone(r.descendants);
  assert.equal(await portFree(r.port), true);
});

test('SIGKILL of a run (no cleanup code runs) still leaves nothing behind', async (t) => {
  const r = await interrupt(t, 'measure/cluster.ts', /started cluster pid=(\d+) port=(\d+)/, 'SIGKILL');
  assert.equal(r.code, null);
  await assertAllGone(r.descendants, 10_000);
});

test('SIGINT to the lesson runner stops the running experiment and its servers, and no more start', async (t) => {
  const r = await interrupt(t, 'measure/lesson.ts', /started loan pid=(\d+) port=(\d+)/, 'SIGINT', ['3', '--quick']);
  assert.equal(r.code, 130);
  await assertAllGone(r.descendants);
  assert.equal(await portFree(r.port), true);
});

test('Ctrl-C while a server is still starting: exit 130, no error printed, nothing left', async (t) => {
  const child = spawnScript(t, 'measure/blocking.ts', ['--quick']);
  const lines: string[] = [];
  const rl = createInterface({ input: child.stderr! });
  await new Promise<void>((resolve) =>
    rl.on('line', (l) => (lines.push(l), /starting the loan service/.test(l) && resolve())),
  );
  // The server is spawned right after this line; wait until it exists, then interrupt.
  const spawned = await pollUntil(
    'the server process',
    () => (childrenOf(child.pid!).length ? childrenOf(child.pid!) : undefined),
    10_000,
    2,
  );
  const tree = [...spawned, ...spawned.flatMap(childrenOf)];
  child.kill('SIGINT');
  const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
  assert.equal(code, 130);
  assert.deepEqual(
    lines.filter((l) => /\berror\b/i.test(l)),
    [],
  );
  await assertAllGone(tree);
});
