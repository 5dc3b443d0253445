/**
 * Shapes: the qualitative facts a run shows, as lines of tokens (`blocking  light-1
 * waited-for-heavy`). The last token is the verdict; the tokens before it are the key. A healthy
 * run prints the same lines on any machine, so instructors can diff them with
 * expected-output/<experiment>.txt, and a run compares itself with that file.
 * A machine that cannot show a finding (one core, say) prints CANNOT_SHOW as the verdict: the line
 * is reported as not shown, not as failed, and the script says why in words.
 */
import { createTwoFilesPatch } from 'diff';

/** Verdict token for a finding this machine cannot show. */
export const CANNOT_SHOW = 'cannot-show-on-this-machine';

/** The comment that carries a reason a line was not shown, in --shape output (parseExpected skips it). */
export const NOT_SHOWN_PREFIX = '# not shown here: ';
/** The comment that carries a note on the run (other programs kept the cores busy), in --shape output. */
export const NOTE_PREFIX = '# note: ';

/** Joins tokens into one shape line (two spaces between tokens). */
export function line(...tokens: (string | number)[]): string {
  return tokens.map(String).join('  ');
}

/**
 * The shape without the lines a --profile run adds (`profile  ...`, from expected-output/profile/):
 * the class tools (compare, the roll-up) hold a run to its experiment's expected file, which a run
 * without --profile prints exactly, so a student's profiled run is judged by the same lines.
 */
export function withoutProfileLines(shape: readonly string[]): string[] {
  return shape.filter((l) => !l.startsWith('profile  '));
}

/** A shape line's key (every token but the last) and verdict (the last token). */
export function splitLine(l: string): { key: string; verdict: string } {
  const tokens = l.trim().split(/\s{2,}/);
  return { key: tokens.slice(0, -1).join('  '), verdict: tokens.at(-1) ?? '' };
}

/**
 * An experiment's report, shown by example: a healthy result, and for each shape line (by key) a
 * change that breaks that line. test/unit/report-examples.test.ts checks that the healthy result
 * prints expected-output/<experiment>.txt exactly, and that each change fails its own line and no
 * other, so every rule is seen to fail when its mechanism is gone.
 */
export interface ReportExamples<R> {
  healthy(): R;
  broken: Record<string, (r: R) => void>;
}

/**
 * What is wrong with `examples` against the `expected` lines, for `shape`: the healthy result
 * does not print them; a line has no breaking change; a change does not fail its line, or fails
 * another one too.
 */
export function examplesProblems<R>(
  examples: ReportExamples<R>,
  shape: (r: R) => string[],
  expected: string[],
): string[] {
  const problems: string[] = [];
  const healthy = shape(examples.healthy());
  if (healthy.join('\n') !== expected.join('\n'))
    problems.push(`the healthy example prints ${JSON.stringify(healthy)}, not the expected lines`);
  const keys = expected.map((l) => splitLine(l).key);
  for (const key of keys) if (!(key in examples.broken)) problems.push(`no broken example for '${key}'`);
  for (const [key, breakIt] of Object.entries(examples.broken)) {
    if (!keys.includes(key)) problems.push(`broken example '${key}' is not a line of the expected output`);
    const r = examples.healthy();
    breakIt(r);
    const lines = compareShape(expected, shape(r)).lines;
    const keyOf = (l: (typeof lines)[number]) => splitLine(l.expected ?? l.actual ?? '').key;
    const failed = lines.filter((l) => l.status !== 'held').map(keyOf);
    if (!failed.includes(key)) problems.push(`breaking '${key}' leaves it holding`);
    // A line the change leaves unjudged (CANNOT_SHOW, as a late generator leaves every other) is not failed by it.
    const others = lines
      .filter((l) => l.status !== 'held' && l.status !== 'not-shown')
      .map(keyOf)
      .filter((k) => k !== key);
    if (others.length) problems.push(`breaking '${key}' fails ${others.map((k) => `'${k}'`).join(', ')} too`);
  }
  return problems;
}

type LineStatus = 'held' | 'failed' | 'missing' | 'unexpected' | 'not-shown';

interface LineVerdict {
  status: LineStatus;
  expected?: string;
  actual?: string;
  /** For a failed/missing line: the likely cause, from the experiment's hints. */
  hint?: string;
}

export interface Comparison {
  /** True when every expected line held (lines not shown on this machine do not count against it). */
  holds: boolean;
  lines: LineVerdict[];
  /** Unified diff of expected vs actual, empty when they are equal. */
  diff: string;
}

/** Parses an expected-output file: one shape line per line, blank lines and `#` comments skipped. */
export function parseExpected(text: string): string[] {
  return text
    .split('\n')
    .map((l) => l.trimEnd())
    .filter((l) => l.trim() !== '' && !l.startsWith('#'));
}

/**
 * Compares a run's shape lines with the expected ones, key by key.
 * `hints` maps a key (or a key's first token) to a sentence on the likely cause when it fails.
 */
export function compareShape(expected: string[], actual: string[], hints: Record<string, string> = {}): Comparison {
  const actualByKey = new Map(actual.map((l) => [splitLine(l).key, l] as const));
  const expectedKeys = new Set<string>();
  const lines: LineVerdict[] = [];
  const hintFor = (key: string) => hints[key] ?? hints[key.split('  ')[0]!];
  for (const exp of expected) {
    const { key, verdict } = splitLine(exp);
    expectedKeys.add(key);
    const act = actualByKey.get(key);
    if (act === undefined) {
      lines.push({ status: 'missing', expected: exp, hint: hintFor(key) });
    } else if (splitLine(act).verdict === verdict) {
      lines.push({ status: 'held', expected: exp, actual: act });
    } else if (splitLine(act).verdict === CANNOT_SHOW) {
      lines.push({ status: 'not-shown', expected: exp, actual: act });
    } else {
      lines.push({ status: 'failed', expected: exp, actual: act, hint: hintFor(key) });
    }
  }
  for (const act of actual) {
    if (!expectedKeys.has(splitLine(act).key)) lines.push({ status: 'unexpected', actual: act });
  }
  const holds = lines.every((l) => l.status === 'held' || l.status === 'not-shown');
  const same = expected.join('\n') === actual.join('\n');
  const diff = same
    ? ''
    : createTwoFilesPatch('expected', 'this run', expected.join('\n') + '\n', actual.join('\n') + '\n', '', '', {
        context: 1,
      });
  return { holds, lines, diff };
}
