// Predict, then measure (--predict), in this process: answers are a choice number or a label,
// checked with a message naming the question; each measured value falls in exactly one choice of
// every question; a bare --predict asks. The real runs with answers are in test/e2e/predict.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  choiceIndex,
  grade,
  parseAnswers,
  renderPredictions,
  type Question,
} from '../../results/report/predictions.ts';
import { normalizePredictFlag } from '../../measure/lib/harness/predict.ts';
import { LESSONS } from '../../measure/lib/harness/lessons.ts';
import { loadExperiment } from '../../measure/lib/harness/experiments.ts';
import { failOnWarnings, usageInProcess } from '../helpers.ts';

failOnWarnings();

const q: Question = {
  id: 'ratio',
  ask: 'how many times?',
  measure: 'the-ratio',
  choices: [
    { label: 'under 2×', to: 2 },
    { label: '2× to 10×', from: 2, to: 10 },
    { label: '10× or more', from: 10 },
  ],
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
  assert.match(
    renderPredictions(grade([q], { ratio: 2 }, []), false),
    /0 of 0 right; 1 not in this run[\s\S]*measured: not in this run/,
  );
});

test('a bare --predict asks; --predict <file> reads the file', () => {
  assert.deepEqual(normalizePredictFlag(['--quick', '--predict']), ['--quick', '--predict=ask']);
  assert.deepEqual(normalizePredictFlag(['--predict', '--shape']), ['--predict=ask', '--shape']);
  assert.deepEqual(normalizePredictFlag(['--predict', 'a.json']), ['--predict', 'a.json']);
});

test("--predict --list prints every question's id and choices and an answers file, and starts nothing; --list alone is a usage error", async () => {
  for (const name of LESSONS.flatMap((l) => l.experiments)) {
    const questions = (await loadExperiment(name)).report.predictions ?? [];
    const r = await usageInProcess(name, ['--predict', '--list']);
    assert.equal(r.code, 0, `${name}: ${r.stderr}`);
    for (const x of questions) {
      assert.ok(r.stdout.includes(`${x.id}: ${x.ask}`), `${name} lists ${x.id}`);
      for (const [i, c] of x.choices.entries())
        assert.ok(r.stdout.includes(`  ${i + 1}) ${c.label}`), `${name} ${x.id} choice ${i + 1}`);
    }
    assert.match(r.stdout, new RegExp(`answers file \\(choice numbers\\): \\{"${questions[0]!.id}":1`));
  }
  const alone = await usageInProcess('pool', ['--list']);
  assert.match(alone.stderr, /--list goes with --predict/);
});

test('every question of every experiment has choices that cover every value once, and an explanation', async () => {
  const names = [...new Set(LESSONS.flatMap((l) => l.experiments))];
  const all = await Promise.all(names.map(async (n) => (await loadExperiment(n)).report.predictions ?? []));
  assert.deepEqual(
    names.filter((_, i) => all[i]!.length === 0),
    [],
    'every experiment has questions',
  );
  for (const question of all.flat()) {
    assert.ok(question.choices.length >= 2 && question.explain && question.lesson.startsWith('lessons/'), question.id);
    for (const v of [
      -1e9, 0, 0.1, 0.5, 0.995, 1, 1.25, 1.4, 1.5, 1.8, 2, 3, 3.5, 5, 6.5, 10, 10.5, 20, 39.5, 40, 40.5, 50, 60, 90, 99,
      100, 1e9,
    ]) {
      const hits = question.choices.filter(
        (c) => (c.from === undefined || v >= c.from) && (c.to === undefined || v < c.to),
      );
      assert.equal(hits.length, 1, `${question.id}: ${v} falls in exactly one choice`);
    }
  }
});
