// Proves the overload report's rules beyond its examples (results/overload/examples.ts): a run whose
// generator sent late judges no line and says why in words; only the highest multiple judges the
// lines past capacity and only the lowest the line below it, so a pass between is shown, not judged;
// a pass's rate comes from the worker's loaded time, clamped by its time alone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rateServiceMs } from '../../measure/lib/overload/passes.ts';
import { examples } from '../../results/overload/examples.ts';
import { notShown } from '../../results/overload/hints.ts';
import { shape } from '../../results/overload/report.ts';
import { render } from '../../results/overload/render.ts';
import { CANNOT_SHOW, splitLine } from '../../results/report/shape.ts';
import { failOnWarnings } from '../helpers.ts';

failOnWarnings();

test('a late generator: every line but its own cannot show, and the run says why', () => {
  const r = examples.healthy();
  r.spikes[1]!.latenessP99Ms = 75;
  const lines = shape(r);
  assert.equal(lines[0], 'overload  generator  sent  late');
  for (const l of lines.slice(1)) assert.equal(splitLine(l).verdict, CANNOT_SHOW, l);
  assert.match(notShown(r).join(' '), /sent its users up to 75 ms late at p99 .*no line is judged/);
  assert.match(render(r, false), /over 50 ms, so it measured its own delay: no line is judged/);
  assert.deepEqual(notShown(examples.healthy()), []);
});

test('the passes between the lowest and the highest multiple are shown, not judged', () => {
  const r = examples.healthy();
  // 1.5× with a flat p99 (a capacity that read high there): the 2× pass still judges the line.
  const mid = r.passes.find((p) => p.kind === 'queue' && p.multiple === 1.5)!;
  mid.quarterP99Ms = [200, 200, 200, 200];
  assert.ok(shape(r).includes('overload  queue  above-capacity  p99  grows-with-the-run'));
  // Without a pass at 1.5× or more, the lines past capacity cannot show.
  r.passes = r.passes.filter((p) => p.multiple < 1.5);
  assert.ok(shape(r).includes(`overload  queue  above-capacity  p99  ${CANNOT_SHOW}`));
});

test("a pass's rate: the worker's loaded time, at most 1.3× its time alone, never faster than alone", () => {
  assert.equal(rateServiceMs([8, 8, 8], 7), 8);
  // The last 20 of a pass past capacity, held back by a busy event loop: clamped.
  assert.equal(rateServiceMs([11.1, 11.1], 6.7), 1.3 * 6.7);
  assert.equal(rateServiceMs([5, 5], 7), 7);
  assert.equal(rateServiceMs([], 7), 7);
});
