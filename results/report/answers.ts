/**
 * A write-the-fix run's answers (lessons 3, 7, 9 and 10). Before anything is timed, the same
 * requests go to the healthy code and to the student's fix, and each pair of answers is compared:
 * a fix that answers one of them differently fails, however fast it is. The batteries that send
 * the requests are in measure/lib/exercise/; this file holds what they find and how it reads.
 */
import { line } from './shape.ts';

/** One request of a battery, and what the healthy code and the fix answered, in a few words each. */
export interface AnswerCheck {
  /** The request, as a reader would type it: `GET /search?title=Où sont`. */
  request: string;
  /** The healthy code's answer: `200 [1 book: #40001]`. */
  healthy: string;
  /** The fix's answer, in the same words. */
  yours: string;
  same: boolean;
}

/** Every request of a battery, in the order sent. */
export interface FixAnswers {
  /** Whose answers the fix's are compared with, as a reader would name it: `the healthy service`. */
  healthyIs: string;
  checks: AnswerCheck[];
}

/** The answers line's verdicts: every answer the healthy one, or at least one not. */
export const SAME_AS_HEALTHY = 'same-as-healthy';
const WRONG = 'wrong';

/** True when the battery asked something and every answer was the healthy code's. */
export function answersRight(a: FixAnswers): boolean {
  return a.checks.length > 0 && a.checks.every((c) => c.same);
}

/** The shape line of a fix's answers, first among its lines: `blocking  answers  same-as-healthy`. */
export function answersLine(group: string, a: FixAnswers): string {
  return line(group, 'answers', answersRight(a) ? SAME_AS_HEALTHY : WRONG);
}

/** `text` cut to at most `width` characters, an ellipsis marking the cut. */
export function cut(text: string, width: number): string {
  const chars = [...text];
  return chars.length <= width
    ? text
    : chars
        .slice(0, Math.max(0, width - 1))
        .join('')
        .trimEnd() + '…';
}

/**
 * `parts` cut, the longest first, until `fixed` characters and theirs fit in `width`: a request
 * and two answers share one line whichever of them is long.
 */
export function fitParts(parts: string[], fixed: number, width: number): string[] {
  const out = [...parts];
  const len = (s: string) => [...s].length;
  for (let total = fixed + out.reduce((n, p) => n + len(p), 0); total > width; total--) {
    const longest = out.reduce((best, p, i) => (len(p) > len(out[best]!) ? i : best), 0);
    if (len(out[longest]!) <= 8) break; // nothing left worth cutting
    out[longest] = cut(out[longest]!, len(out[longest]!) - 1);
  }
  return out;
}

/** The widest a first-wrong-answer line gets, characters: the incident's tables are about this wide. */
const LINE_WIDTH = 140;

/**
 * The first wrong answer as one plain line of at most `width` characters: the request, what the
 * healthy code answered, and what the fix answered. Undefined when every answer was right.
 */
export function firstWrongLine(a: FixAnswers, width = LINE_WIDTH): string | undefined {
  const wrong = a.checks.find((c) => !c.same);
  if (!wrong) return a.checks.length ? undefined : 'the battery sent no request';
  const head = 'First wrong answer: ';
  const mid = `: ${a.healthyIs} `;
  const tail = ', yours ';
  const [request, healthy, yours] = fitParts(
    [wrong.request, wrong.healthy, wrong.yours],
    head.length + mid.length + tail.length,
    width,
  );
  return `${head}${request}${mid}${healthy}${tail}${yours}`;
}

/**
 * The first wrong answer's line, and when the fix's answer had to be cut to fit it, that answer
 * whole on a line of its own: what the fix threw, say, is the part a student needs.
 */
export function wrongInFull(a: FixAnswers, width = LINE_WIDTH): string[] {
  const first = firstWrongLine(a, width);
  const wrong = a.checks.find((c) => !c.same);
  if (first === undefined) return [];
  return wrong && !first.endsWith(wrong.yours) ? [first, `Yours in full: ${wrong.yours}`] : [first];
}

/**
 * The answers in sentences, for the table: how many requests were sent and answered alike, and,
 * when one was not, the first wrong answer and (`timedAfter`: the fix is timed once they are right)
 * why nothing was timed.
 */
export function answersSummary(a: FixAnswers, timedAfter = true): string[] {
  const n = a.checks.length;
  const wrong = a.checks.filter((c) => !c.same).length;
  if (wrong === 0 && n > 0) return [`Answers: ${n} checks, each answered as ${a.healthyIs} answers it.`];
  return [
    `Answers: ${n} checks; ${wrong} answered unlike ${a.healthyIs}.`,
    ...wrongInFull(a),
    ...(timedAfter ? ['Nothing was timed: a fix is timed only once its answers are right.'] : []),
  ];
}
