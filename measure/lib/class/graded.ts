/**
 * A graded exercise as a file: what `check-exercise --grade --save <folder>` writes for the class
 * roll-up (measure/lib/class/rollup.ts), one file per exercise. It holds the verdict only (right, wrong
 * and which way for a number, or not counted on a machine that cannot show it), never the range,
 * the worked answer, the expected finding or the numbers behind the verdict, so a student may see
 * the file without learning the answer from it.
 */

/** The verdict of one graded exercise. */
type GradedVerdict = 'right' | 'wrong' | 'not-counted';

export interface GradedExercise {
  kind: 'graded-exercise';
  lesson: number;
  exercise: number;
  /** The exercise's bold title in its lesson text. */
  title: string;
  verdict: GradedVerdict;
  /** For a number answered wrong: which way it missed. */
  off?: 'too low' | 'too high';
  /** When it was checked (ISO 8601): the roll-up orders a student's attempts by it. */
  at: string;
  /** The attempt's number in its folder (exercise-1.2-2.json is the second): orders attempts saved within one millisecond. */
  attempt: number;
  node: string;
  platform: string;
}

/** A record for the exercise just checked, stamped with this process's time, Node and platform; a first attempt until check-exercise says otherwise. */
export function gradedExercise(
  lesson: number,
  exercise: number,
  title: string,
  verdict: GradedVerdict,
  off?: GradedExercise['off'],
): GradedExercise {
  return {
    kind: 'graded-exercise',
    lesson,
    exercise,
    title,
    verdict,
    ...(off ? { off } : {}),
    at: new Date().toISOString(),
    attempt: 1,
    node: process.versions.node,
    platform: `${process.platform}-${process.arch}`,
  };
}

/** Whether a parsed JSON document claims to be a graded exercise (its fields are checked by readGraded). */
export function isGradedDocument(data: unknown): boolean {
  return typeof data === 'object' && data !== null && (data as { kind?: unknown }).kind === 'graded-exercise';
}

/**
 * A graded exercise read from a student's file, or the name of its first missing or bad field. The
 * file is the student's: strings lose their control characters and are cut to 200 characters.
 */
export function readGraded(data: unknown): GradedExercise | { badField: string } {
  const d = data as Record<string, unknown>;
  const count = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= 99;
  if (!count(d.lesson)) return { badField: 'lesson' };
  if (!count(d.exercise)) return { badField: 'exercise' };
  if (typeof d.title !== 'string') return { badField: 'title' };
  if (d.verdict !== 'right' && d.verdict !== 'wrong' && d.verdict !== 'not-counted') return { badField: 'verdict' };
  if (d.off !== undefined && d.off !== 'too low' && d.off !== 'too high') return { badField: 'off' };
  if (typeof d.at !== 'string' || Number.isNaN(Date.parse(d.at))) return { badField: 'at' };
  // Files written before attempts were numbered have none: they count as first attempts.
  if (d.attempt !== undefined && !count(d.attempt)) return { badField: 'attempt' };
  const clean = (v: unknown) => (typeof v === 'string' ? v.replace(/[\x00-\x1f\x7f]/g, '').slice(0, 200) : '?');
  return {
    kind: 'graded-exercise',
    lesson: d.lesson as number,
    exercise: d.exercise as number,
    title: clean(d.title),
    verdict: d.verdict,
    ...(d.off ? { off: d.off as GradedExercise['off'] } : {}),
    at: d.at,
    attempt: (d.attempt as number | undefined) ?? 1,
    node: clean(d.node),
    platform: clean(d.platform),
  };
}

/** Orders one student's attempts: by time, then (within one millisecond) by their number. */
export function byAttempt(a: GradedExercise, b: GradedExercise): number {
  return Date.parse(a.at) - Date.parse(b.at) || a.attempt - b.attempt;
}

/** One student's attempts at one exercise as a table cell: `✓`, `✗ too low`, `–` (not counted), joined in time order by `, `. */
export function gradedCell(attempts: readonly GradedExercise[]): string {
  return [...attempts]
    .sort(byAttempt)
    .map((a) => (a.verdict === 'right' ? '✓' : a.verdict === 'not-counted' ? '–' : `✗${a.off ? ` ${a.off}` : ''}`))
    .join(', ');
}
