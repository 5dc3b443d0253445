// Predict, then measure (--predict): answers files are checked before anything starts, typed answers
// are asked on stderr and read from stdin, and after a real run each prediction is printed beside
// the measured value; every question is answered by a measure its experiment really reports.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { choiceIndex, grade, parseAnswers, renderPredictions, type Question } from '../results/predictions.ts';
import { normalizePredictFlag } from '../measure/lib/predict.ts';
import { LESSONS } from '../measure/lib/lessons.ts';
import { loadExperiment } from '../measure/lib/experiments.ts';
import { runExperiment } from '../measure/lib/experiment.ts';
import { predictions as blockingQuestions } from '../results/blocking-predictions.ts';
import { predictions as poolQuestions } from '../results/pool-predictions.ts';
import { predictions as clusterQuestions } from '../results/cluster-predictions.ts';
import { failOnWarnings, ROOT, runScript, collector } from './helpers.ts';

failOnWarnings();
const dir = mkdtempSync(path.join(os.tmpdir(), 'nsl-predict-test-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, content: string) => {
  const f = path.join(dir, name);
  writeFileSync(f, content);
  return f;
};

const q: Question = {
  id: 'ratio',
  ask: 'how many times?',
  measure: 'the-ratio',
  choices: [{ label: 'under 2×', to: 2 }, { label: '2× to 10×', from: 2, to: 10 }, { label: '10× or more', from: 10 }],
  explain: 'because',
  lesson: 'lessons/01-ceiling.md',
};

test('answers: a 1-based number or the exact label; anything else names the question and the range', () => {
  assert.deepEqual(parseAnswers({ ratio: 3 }, [q]), { ratio: 2 });
  assert.deepEqual(parseAnswers({ ratio: '2× TO 10×' }, [q]), { ratio: 1 });
  assert.equal(choiceIndex(q, ' 1 '), 0);
  for (const [bad, message] of [
    [{ ratio: 0 }, /'ratio' needs a choice number from 1 to 3/],
    [{ ratio: 4 }, /from 1 to 3/],
    [{ ratio: 1.5 }, /from 1 to 3/],
    [{}, /'ratio' needs .* got nothing/],
    [{ ratio: 1, speed: 2 }, /no question 'speed'/],
    [[1], /one JSON object/],
    [null, /one JSON object/],
  ] as const) {
    assert.throws(() => parseAnswers(bad, [q]), message);
  }
});

test('grading: the measured value falls in one choice; a measure the run lacks is shown as such', () => {
  const measured = [{ id: 'the-ratio', label: 'x', unit: '×' as const, value: 10 }];
  const [g] = grade([q], { ratio: 1 }, measured);
  assert.equal(g!.measured, 2, '10 is in [10, ∞)');
  const text = renderPredictions(grade([q], { ratio: 2 }, measured), false);
  assert.match(text, /1 of 1 right/);
  assert.match(text, /measured: 10× \(10× or more\)/);
  assert.match(renderPredictions(grade([q], { ratio: 2 }, []), false), /0 of 0 right; 1 not in this run[\s\S]*measured: not in this run/);
});

test('a bare --predict asks; --predict <file> reads the file', () => {
  assert.deepEqual(normalizePredictFlag(['--quick', '--predict']), ['--quick', '--predict=ask']);
  assert.deepEqual(normalizePredictFlag(['--predict', '--shape']), ['--predict=ask', '--shape']);
  assert.deepEqual(normalizePredictFlag(['--predict', 'a.json']), ['--predict', 'a.json']);
});

test('every question of every experiment has choices that cover every value once, and an explanation', async () => {
  const names = [...new Set(LESSONS.flatMap((l) => l.experiments))];
  const all = await Promise.all(names.map(async (n) => (await loadExperiment(n)).report.predictions ?? []));
  assert.deepEqual(names.filter((_, i) => all[i]!.length === 0), [], 'every experiment has questions');
  for (const question of all.flat()) {
    assert.ok(question.choices.length >= 2 && question.explain && question.lesson.startsWith('lessons/'), question.id);
    for (const v of [-1e9, 0, 0.1, 0.5, 0.995, 1, 1.25, 1.4, 1.5, 1.8, 2, 3, 3.5, 5, 6.5, 10, 10.5, 20, 39.5, 40, 40.5, 50, 60, 90, 99, 100, 1e9]) {
      const hits = question.choices.filter((c) => (c.from === undefined || v >= c.from) && (c.to === undefined || v < c.to));
      assert.equal(hits.length, 1, `${question.id}: ${v} falls in exactly one choice`);
    }
  }
});

test('blocking --predict <file>: a real run, then each prediction beside its measured value', async () => {
  const answers = file('good.json', JSON.stringify({ 'blocking-light-wait': 3, 'pooled-light-wait': 'almost none of it (under 0.1×)', 'heavy-duration': 2 }));
  const r = await runScript('measure/blocking.ts', ['--quick', '--predict', answers], {}, 120_000);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /Your predictions: 3 of 3 right/);
  for (const question of blockingQuestions) assert.ok(r.stdout.includes(question.ask), `${question.id} is answered by a measure the run reports`);
  assert.doesNotMatch(r.stdout, /not in this run/);
  assert.match(r.stdout, /measured: \d[\d.]*× \(about all of it/);
});

test('a bad answers file, or an experiment without questions, stops before any server starts (exit 2)', async () => {
  for (const [args, message] of [
    [['--predict', file('bad.json', '{"blocking-light-wait": 4}')], /'blocking-light-wait' needs a choice number from 1 to 3/],
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
  const code = await runExperiment({ ...blocking, report: { ...blocking.report, predictions: [] } }, ['--quick', '--predict', file('any.json', '{}')], io);
  assert.equal(code, 2, out.stderr);
  assert.match(out.stderr, /blocking has no --predict questions yet/);
  assert.doesNotMatch(out.stderr, /started /);
});

/** Runs blocking --quick --predict with `typed` on its stdin. */
function typed(input: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'measure/blocking.ts', '--quick', '--predict'], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
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
  for (const [script, questions] of [['pool', poolQuestions], ['cluster', clusterQuestions]] as const) {
    const answers = file(`${script}.json`, JSON.stringify(Object.fromEntries(questions.map((x) => [x.id, 1]))));
    const r = await runScript(`measure/${script}.ts`, ['--quick', '--predict', answers], {}, 120_000);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`Your predictions: \\d of ${questions.length} right`));
    assert.doesNotMatch(r.stdout, /not in this run/, script);
  }
});
