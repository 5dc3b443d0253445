// The virtual users' think pauses (measure/lib/load/users.ts): exponential, so users that one saturated
// worker served side by side do not come back together in waves.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { THINK_CAP, thinkPauseMs } from '../../measure/lib/load/users.ts';
import { failOnWarnings } from '../helpers.ts';

failOnWarnings();

/** Mean and coefficient of variation (standard deviation / mean) of n pauses drawn by `draw`. */
function spread(draw: (u: number) => number, n = 20_000): { mean: number; cv: number } {
  const xs = Array.from({ length: n }, (_, i) => draw((i + 0.5) / n));
  const mean = xs.reduce((a, b) => a + b, 0) / n;
  const sd = Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / n);
  return { mean, cv: sd / mean };
}

/** Pauses are wide enough to break a lockstep: a spread near the exponential's (1), not a narrow one's. */
const WIDE_CV = 0.9;

test('think pauses keep their mean, are cut at THINK_CAP means, and spread like an exponential', () => {
  const { mean, cv } = spread((u) => thinkPauseMs(2000, u));
  assert.ok(mean > 0.98 * 2000 && mean < 2000, `mean ${mean}`);
  assert.ok(cv >= WIDE_CV, `coefficient of variation ${cv.toFixed(2)}`);
  assert.equal(thinkPauseMs(2000, 0), 0);
  assert.equal(thinkPauseMs(2000, 1 - 1e-12), THINK_CAP * 2000);
});

test('the check can fail: pauses uniform in [0.5, 1.5] × the mean are too narrow', () => {
  const { mean, cv } = spread((u) => 2000 * (0.5 + u));
  assert.ok(Math.abs(mean - 2000) < 1);
  assert.ok(cv < WIDE_CV, `coefficient of variation ${cv.toFixed(2)}`);
});
