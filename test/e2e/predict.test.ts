// Predict, then measure (--predict): answers files are checked before anything starts, typed answers
// are asked on stderr and read from stdin, and after a real run each prediction is printed beside
// the measured value; every question is answered by a measure its experiment really reports.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadExperiment } from '../../measure/lib/harness/experiments.ts';
import { runExperiment } from '../../measure/lib/harness/experiment.ts';
import { predictions as blockingQuestions } from '../../results/blocking/predictions.ts';
import { predictions as poolQuestions } from '../../results/pool/predictions.ts';
import { predictions as clusterQuestions } from '../../results/cluster/predictions.ts';
import { failOnWarnings, ROOT, runScript, collector } from '../helpers.ts';

failOnWarnings();
const dir = mkdtempSync(path.join(os.tmpdir(), 'nsl-predict-test-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, content: string) => {
  const f = path.join(dir, name);
  writeFileSync(f, content);
  return f;
};

test('blocking --predict <file>: a real run, then each prediction beside its measured value', async () => {
  const answers = file(
    'good.json',
    JSON.stringify({
      'blocking-light-wait': 3,
      'pooled-light-wait': 'almost none of it (under 0.1×)',
      'heavy-duration': 2,
    }),
  );
  const r = await runScript('measure/blocking.ts', ['--quick', '--predict', answers], {}, 120_000);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /Your predictions: 3 of 3 right/);
  for (const question of blockingQuestions)
    assert.ok(r.stdout.includes(question.ask), `${question.id} is answered by a measure the run reports`);
  assert.doesNotMatch(r.stdout, /not in this run/);
  assert.match(r.stdout, /measured: \d[\d.]*× \(about all of it/);
});

test('a bad answers file, or an experiment without questions, stops before any server starts (exit 2)', async () => {
  for (const [args, message] of [
    [
      ['--predict', file('bad.json', '{"blocking-light-wait": 4}')],
      /'blocking-light-wait' needs a choice number from 1 to 3/,
    ],
    [['--predict', file('cut.json', '{"blocking-li')], /is not JSON/],
    [['--predict', path.join(dir, 'none.json')], /cannot read the answers file .*ENOENT/],
  ] as const) {
    const r = await runScript('measure/blocking.ts', ['--quick', ...args]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, message);
    assert.doesNotMatch(r.stderr, /started /, 'no server started');
  }
  // Every experiment has questions now; one added later without them gets this answer.
  const blocking = await loadExperiment('blocking');
  const { out, io } = collector();
  const code = await runExperiment(
    { ...blocking, report: { ...blocking.report, predictions: [] } },
    ['--quick', '--predict', file('any.json', '{}')],
    io,
  );
  assert.equal(code, 2, out.stderr);
  assert.match(out.stderr, /blocking has no --predict questions yet/);
  assert.doesNotMatch(out.stderr, /started /);
});

/** Runs blocking --quick --predict with `typed` on its stdin. */
function typed(input: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'measure/blocking.ts', '--quick', '--predict'], {
      cwd: ROOT,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

test('typed answers: a wrong one is asked again; input that ends early starts nothing', async () => {
  const early = await typed('3\n');
  assert.equal(early.code, 2, early.stderr);
  assert.match(early.stderr, /Prediction 1 of 3[\s\S]*Prediction 2 of 3/);
  assert.match(early.stderr, /no answer to 'pooled-light-wait': the input ended; nothing was started/);
  assert.doesNotMatch(early.stderr, /started /);
  const fixed = await typed('3\nseven\n1\n2\n');
  assert.equal(fixed.code, 0, fixed.stderr);
  assert.match(fixed.stderr, /Type a number from 1 to 3/);
  assert.match(fixed.stdout, /Your predictions: \d of 3 right/);
});

test('pool and cluster --predict <file>: every question is settled by a measure of a real run', async () => {
  for (const [script, questions] of [
    ['pool', poolQuestions],
    ['cluster', clusterQuestions],
  ] as const) {
    const answers = file(`${script}.json`, JSON.stringify(Object.fromEntries(questions.map((x) => [x.id, 1]))));
    const r = await runScript(`measure/${script}.ts`, ['--quick', '--predict', answers], {}, 120_000);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`Your predictions: \\d of ${questions.length} right`));
    assert.doesNotMatch(r.stdout, /not in this run/, script);
  }
});
