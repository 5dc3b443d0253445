// Proves the comparison behind every write-the-fix run, on fixed results: a fix is right only when
// every answer is the healthy code's; one wrong answer turns the answers line, leaves every timing
// line unmeasured (never ✓), is named in one line that fits, and is what --shape, --json, --save
// and the roll-up record. Each rule is shown failing on an answer that breaks it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  answersLine,
  answersRight,
  answersSummary,
  cut,
  firstWrongLine,
  fitParts,
  SAME_AS_HEALTHY,
  wrongInFull,
  type FixAnswers,
} from '../../results/report/answers.ts';
import { compareShape } from '../../results/report/shape.ts';
import { fixReport } from '../../measure/lib/exercise/fix-run.ts';
import { EXPORT_EXERCISE, LIMITER_EXERCISE, VERIFY_EXERCISE } from '../../measure/lib/exercise/specs.ts';
import { jsonDocument, renderComparison, showOutcome } from '../../measure/lib/harness/outcome.ts';
import { failures } from '../../measure/lib/class/rollup-rows.ts';
import { render, shape, hints } from '../../results/blocking/report.ts';
import { blockingResult, MACHINE } from '../fixtures/results.ts';
import { collector, expectedShape, failOnWarnings } from '../helpers.ts';

failOnWarnings();

const right = (): FixAnswers => ({
  healthyIs: "the kit's check",
  checks: [
    {
      request: 'GET /member/verify-blocking?member=cam (own password)',
      healthy: '200 verified',
      yours: '200 verified',
      same: true,
    },
    {
      request: "GET /member/verify-blocking?member=cam (dee's password)",
      healthy: '401 refused',
      yours: '401 refused',
      same: true,
    },
  ],
});
const wrong = (): FixAnswers => {
  const a = right();
  a.checks[1] = { ...a.checks[1]!, yours: '200 verified', same: false };
  return a;
};

test('answers are right only when every check is the healthy answer, and there is at least one', () => {
  assert.equal(answersRight(right()), true);
  assert.equal(answersLine('blocking', right()), `blocking  answers  ${SAME_AS_HEALTHY}`);
  assert.equal(answersRight(wrong()), false);
  assert.equal(answersLine('blocking', wrong()), 'blocking  answers  wrong');
  // A battery that asked nothing checked nothing: that is not a pass.
  assert.equal(answersRight({ healthyIs: 'x', checks: [] }), false);
  assert.equal(firstWrongLine({ healthyIs: 'x', checks: [] }), 'the battery sent no request');
});

test('the first wrong answer is one line: the request, the healthy answer, the fix answer, cut to fit', () => {
  assert.equal(firstWrongLine(right()), undefined);
  assert.equal(
    firstWrongLine(wrong()),
    "First wrong answer: GET /member/verify-blocking?member=cam (dee's password): the kit's check 401 refused, yours 200 verified",
  );
  // Two wrong: the first is named.
  const two = wrong();
  two.checks[0] = { ...two.checks[0]!, yours: '500 boom', same: false };
  assert.match(firstWrongLine(two)!, /own password\): the kit's check 200 verified, yours 500 boom$/);
  // A long answer is cut, the longest part first, and the line fits.
  const long = wrong();
  long.checks[1] = { ...long.checks[1]!, yours: `200 ${'x'.repeat(300)}` };
  const line = firstWrongLine(long, 100)!;
  assert.ok([...line].length <= 100, line);
  assert.match(line, /^First wrong answer: GET \/member\/verify-.*: the kit.s check 401 refused, yours 200 x+…$/);
  // The cut answer is then given whole, on a line of its own: what a fix threw is the part to read.
  assert.deepEqual(wrongInFull(long, 100), [line, `Yours in full: 200 ${'x'.repeat(300)}`]);
  assert.deepEqual(wrongInFull(wrong()), [firstWrongLine(wrong())]);
  assert.equal(cut('abcdef', 4), 'abc…');
  assert.equal(cut('abc', 4), 'abc');
  assert.deepEqual(fitParts(['short', 'a much longer part'], 0, 20), ['short', 'a much longer…']);
});

test('the summary says why nothing was timed, only where a fix is timed after its answers', () => {
  assert.deepEqual(answersSummary(right()), ["Answers: 2 checks, each answered as the kit's check answers it."]);
  const timed = answersSummary(wrong());
  assert.equal(timed[0], "Answers: 2 checks; 1 answered unlike the kit's check.");
  assert.equal(timed.at(-1), 'Nothing was timed: a fix is timed only once its answers are right.');
  assert.equal(answersSummary(wrong(), false).length, 2);
});

const report = fixReport(VERIFY_EXERCISE, { render, shape, hints });
const fixed = () => {
  const r = blockingResult();
  // The fix's blocking half reads as the pooled one.
  r.blocks[0] = { ...r.blocks[1]!, mode: 'blocking', route: 'verify-blocking' };
  return r;
};

test("a right fix's shape is its answers line, then the lesson's: expected-output/fixed/blocking.txt", () => {
  const lines = report.shape({ ...fixed(), answers: right() });
  assert.deepEqual(lines, expectedShape('fixed/blocking'));
  assert.equal(compareShape(expectedShape('fixed/blocking'), lines).holds, true);
  // Fast and wrong: the timing lines are never measured, so only the answers line is printed.
  const bad = report.shape({ machine: MACHINE, answers: wrong() });
  assert.deepEqual(bad, ['blocking  answers  wrong']);
  const cmp = compareShape(expectedShape('fixed/blocking'), bad, report.hints);
  assert.equal(cmp.holds, false);
  assert.deepEqual(
    cmp.lines.map((l) => l.status),
    ['failed', ...Array(expectedShape('fixed/blocking').length - 1).fill('missing')],
  );
  // Right answers with the loop still held fail on the lesson's own lines, not on the answers.
  const slow = compareShape(expectedShape('fixed/blocking'), report.shape({ ...blockingResult(), answers: right() }));
  assert.equal(slow.lines[0]!.status, 'held');
  assert.ok(slow.lines.some((l) => l.status === 'failed'));
});

test('with a wrong answer the comparison shows the answers ✗ first and no timing line as held', () => {
  const bad = report.shape({ machine: MACHINE, answers: wrong() });
  const cmp = compareShape(expectedShape('fixed/blocking'), bad, report.hints);
  const text = renderComparison(cmp, 'expected-output/fixed/blocking.txt', false, MACHINE, 'the answers are wrong');
  const rows = text.split('\n').filter((l) => /^ {2}\S/.test(l));
  assert.match(rows[0]!, /^ {2}✗ blocking {2}answers {2}same-as-healthy/);
  assert.ok(
    rows.slice(1).every((l) => l.startsWith('  · ') && l.endsWith('(not measured: the answers are wrong)')),
    text,
  );
  assert.doesNotMatch(text, /✓/);
  const table = report.render({ machine: MACHINE, answers: wrong() }, false);
  assert.match(table, /First wrong answer: GET \/member\/verify-blocking\?member=cam \(dee's password\)/);
  assert.match(table, /Nothing was timed/);
  assert.deepEqual(report.measures!({ machine: MACHINE, answers: wrong() }), []);
});

test('--shape puts the first wrong answer on stderr; --json and --save carry the exercise and its verdict', () => {
  const exp = { name: 'blocking', report, fix: { id: VERIFY_EXERCISE.id, expected: VERIFY_EXERCISE.expected } };
  const result = { machine: MACHINE, answers: wrong() };
  const { out, io } = collector();
  const code = showOutcome(
    exp,
    result,
    MACHINE,
    { expected: expectedShape('fixed/blocking'), format: 'shape', saveTo: undefined, answers: undefined, extra: {} },
    io,
  );
  assert.equal(code, 1);
  assert.equal(out.stdout, 'blocking  answers  wrong\n');
  assert.match(out.stderr, /First wrong answer: GET \/member\/verify-blocking/);
  const cmp = compareShape(expectedShape('fixed/blocking'), report.shape(result));
  const doc = JSON.parse(jsonDocument(exp, result, report.shape(result), cmp, MACHINE));
  assert.deepEqual(doc.exercise, { id: 'lesson-3', expected: 'fixed/blocking' });
  assert.equal(doc.holds, false);
  assert.equal(doc.result.answers.checks[1].same, false);
});

test('an exercise checked by its answers alone prints its answers line only, right or wrong', () => {
  const limiter = fixReport(LIMITER_EXERCISE, { render: () => 'table', shape: () => ['redis  x  y'] });
  assert.deepEqual(limiter.shape({ machine: MACHINE, answers: right() }), expectedShape('fixed/rate-limit'));
  assert.doesNotMatch(limiter.render({ machine: MACHINE, answers: wrong() }, false), /Nothing was timed/);
  // A fix's lines are the ones its exercise keeps: stages keeps part 4's.
  const stages = fixReport(EXPORT_EXERCISE, {
    render: () => '',
    shape: () => ['fresh  connect  cannot-show-on-this-machine', 'backpressure  queued  a-few-chunks'],
  });
  assert.deepEqual(stages.shape({ ...{ machine: MACHINE }, answers: right() } as never), [
    'stages  answers  same-as-healthy',
    'backpressure  queued  a-few-chunks',
  ]);
});

test("the roll-up names a wrong fix's first wrong answer and lists none of its unmeasured lines", () => {
  const result = { machine: MACHINE, answers: wrong() };
  const comparison = compareShape(expectedShape('fixed/blocking'), report.shape(result), report.hints);
  const listed = failures({
    runs: [{ student: 'ann', file: 'a.json', experiment: 'blocking --mine', machine: MACHINE, result, comparison }],
    graded: [],
    skipped: [],
  });
  assert.equal(listed.length, 1);
  assert.match(
    listed[0]!.text,
    /^ann · blocking --mine: blocking {2}answers {2}same-as-healthy \(this run: blocking {2}answers {2}wrong\)$/,
  );
  assert.match(listed[0]!.hint!, /^First wrong answer: /);
});
