/**
 * What check-exercise says about a verdict (measure/check-exercise.ts): on a number done by hand,
 * the question, the answer and right or wrong; on a run, the numbers behind it. For self-study also
 * the range, the worked answer and where the written answers are; with --grade, none of those.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { KitError } from '../../../lib/errors.ts';
import type { Io } from '../../../lib/entry.ts';
import { colorEnabled, makeChalk } from '../../../results/report/format.ts';
import { ROOT } from '../harness/paths.ts';
import type { CheckOutcome } from './exercises.ts';
import type { NumberAnswer } from './exercise-numbers.ts';
import { gradedExercise, type GradedExercise } from './graded.ts';

/** Where lesson `lesson`'s answers are, or a sentence saying there are none yet. */
export function answers(lesson: number): string {
  const file = `instructors/lesson-${lesson}.md`;
  return existsSync(path.join(ROOT, file))
    ? `answers: ${file}`
    : 'no written answers for this lesson yet (instructors/)';
}

/**
 * A student's number: "3000", "3,000" or "3 000" (thousands), "1.7" or "1,7" (a decimal comma, as
 * many countries write it); NaN for anything else.
 */
function parseAnswer(text: string): number {
  const t = text.trim().replace(/[\s_]/g, '');
  if (/^-?\d{1,3}(,\d{3})+(\.\d+)?$/.test(t)) return Number(t.replace(/,/g, ''));
  if (/^-?\d+,\d{1,2}$/.test(t)) return Number(t.replace(',', '.'));
  return /^-?\d+(\.\d+)?$/.test(t) ? Number(t) : NaN;
}

/**
 * What a checked number prints after its title: the question, the answer and the verdict; for
 * self-study also the range and the worked answer, for grading (`grade`) only "too low" or "too high".
 */
export function numberReport(a: NumberAnswer, value: number, grade: boolean, color = false): string {
  const c = makeChalk(color);
  const held = value >= a.low && value <= a.high;
  const lines = [`asked: ${a.ask}`];
  if (grade) {
    lines.push(
      `your answer: ${value} ${a.unit}`,
      held ? c.green('✓ right') : c.red(`✗ not right: ${value < a.low ? 'too low' : 'too high'}`),
    );
  } else {
    const range = a.low === a.high ? `is ${a.low}` : `falls in ${a.low}–${a.high}`;
    lines.push(`your answer: ${value} ${a.unit}; a right answer ${range} ${a.unit}`);
    lines.push(
      held
        ? c.green('✓ within the range')
        : c.red('✗ outside the range: check your arithmetic against the lesson, then the written answer'),
    );
    lines.push(c.dim(`why: ${a.why}; ${answers(a.lesson)}`));
  }
  return lines.join('\n') + '\n';
}

/** Prints the verdict on a number; returns it as a graded record. KIT_ERR_USAGE when `text` is no number. */
export function checkNumber(a: NumberAnswer, text: string, grade: boolean, io: Io): GradedExercise {
  const value = parseAnswer(text);
  if (text.trim() === '' || !Number.isFinite(value))
    throw new KitError('KIT_ERR_USAGE', `--answer is a number (${a.unit}); got '${text}'`);
  const color = colorEnabled(io.stdout);
  io.stdout.write(makeChalk(color).bold(`Lesson ${a.lesson}, exercise ${a.n}: ${a.title}`) + '\n');
  io.stdout.write(numberReport(a, value, grade, color));
  if (value >= a.low && value <= a.high) return gradedExercise(a.lesson, a.n, a.title, 'right');
  return gradedExercise(a.lesson, a.n, a.title, 'wrong', value < a.low ? 'too low' : 'too high');
}

/**
 * What a checked run prints after it: for self-study the numbers behind the verdict and where the
 * answers are; for grading (`grade`) only whether the run shows the exercise's finding.
 */
export function runReport(lesson: number, outcome: CheckOutcome, grade: boolean, color = false): string {
  const c = makeChalk(color);
  if (grade) {
    if (outcome.cannotShow) return c.yellow('– this machine cannot show this exercise: not counted') + '\n';
    return (
      (outcome.held ? c.green('✓ right: the run shows it') : c.red('✗ not right: the run does not show it')) + '\n'
    );
  }
  const lines = outcome.saw.map((x) => `  ${x}`);
  // As a shape line this machine cannot show: said in words, and not a failure.
  if (outcome.cannotShow) lines.push(c.yellow(`– this machine cannot show it: ${outcome.cannotShow}`));
  else
    lines.push(
      outcome.held
        ? c.green('✓ the run shows it')
        : c.red('✗ the run does not show it: compare with the expected sentence above'),
    );
  lines.push(c.dim(answers(lesson)));
  return lines.join('\n') + '\n';
}
