/**
 * What an experiment's finished run shows: its report (the pure half of an experiment), and the
 * three ways the harness writes it: the tables with the shape compared line by line (default), the
 * shape lines alone (--shape), or the whole result as JSON (--json, --save).
 */
import type { Io } from '../../../lib/entry.ts';
import {
  busyMachineCaveat,
  colorEnabled,
  machineWasBusy,
  makeChalk,
  type MachineInfo,
} from '../../../results/report/format.ts';
import {
  compareShape,
  NOT_SHOWN_PREFIX,
  NOTE_PREFIX,
  splitLine,
  type Comparison,
  type ReportExamples,
} from '../../../results/report/shape.ts';
import type { Measure } from '../../../results/report/measures.ts';
import { grade, renderPredictions, type Answers as PredictAnswers } from '../../../results/report/predictions.ts';
import type { Question } from '../../../results/report/predictions.ts';
import { EXIT } from '../../../lib/errors.ts';
import { writeSaved } from './save.ts';

/** The pure half of an experiment: turn a result into a table and into shape lines. */
export interface Report<R> {
  /** Tables and sentences for people. Pure; `color` switches ANSI codes on. */
  render(result: R, color: boolean, caption?: string): string;
  /** The shape lines: deterministic for any healthy run. Pure. */
  shape(result: R): string[];
  /** Key (or first token) → the likely cause when that line does not hold. */
  hints?: Record<string, string>;
  /** Sentences a reader of the table should know (the load generator used a core, say). */
  caveats?(result: R): string[];
  /**
   * Why lines that print CANNOT_SHOW were not shown ("redis-server was not found ..."). They go
   * with the shape lines, as `# not shown here:` comments, so a student's --shape file carries them.
   */
  notShown?(result: R): string[];
  /** The numbers behind the shape lines, named (results/report/measures.ts): for the class roll-up's charts. */
  measures?(result: R): Measure[];
  /** --predict's questions, each answered by one of `measures` (results/report/predictions.ts). */
  predictions?: readonly Question[];
  /** A healthy result and a change that breaks each shape line (results/report/shape.ts ReportExamples). */
  examples?: ReportExamples<R>;
  /**
   * Sentences that say why the shape did not hold when the table says it in its own words (a
   * fix's first wrong answer): under --shape, where no table is printed, they go to stderr.
   */
  verdictNotes?(result: R): string[];
}

/**
 * What writing an outcome needs of an experiment: its name (expected-output/<name>.txt) and its
 * report; on a fix run, which exercise and which expected file (the --json document carries them).
 */
interface Reported<R> {
  name: string;
  report: Report<R>;
  fix?: { id: string; expected: string } | undefined;
}

/** How a finished run is written, besides its result. */
interface OutcomeExtra {
  /** Each server process's event loop during the load (profile/loops.ts), under the table. */
  loopTable?: string | undefined;
  /** What the shape was compared with, as the reader should see it (default expected-output/<name>.txt). */
  expectedLabel?: string | undefined;
  /** Leave the comparison out of the table (a seeded incident: its lines would name it before the reader does). */
  hideComparison?: boolean | undefined;
  /** Why the expected lines this run has none of were not measured (a fix whose answers are wrong). */
  notMeasured?: string | undefined;
}

/**
 * Formats the comparison for people. When other programs kept the cores busy (`machine`), a line
 * that did not hold is not judged: it reads "busy" (~) rather than ✗, and the caveat names the
 * busiest programs once; otherwise each line's own hint is its likely cause, and no hint blames
 * the machine. The verdict and the exit code stay "does not hold" either way: the run did not
 * show the finding.
 */
export function renderComparison(
  cmp: Comparison,
  file: string,
  color: boolean,
  machine?: MachineInfo,
  notMeasured?: string,
): string {
  const c = makeChalk(color);
  const out = [c.bold(`Shape, compared with ${file}:`)];
  const busy = machine && machineWasBusy(machine) ? busyMachineCaveat(machine) : undefined;
  let notJudged = 0;
  for (const l of cmp.lines) {
    if (l.status === 'held') out.push(`  ${c.green('✓')} ${l.expected}`);
    else if (l.status === 'not-shown')
      out.push(`  ${c.yellow('-')} ${l.expected}   ${c.yellow('(not shown on this machine)')}`);
    else if (l.status === 'missing' && notMeasured)
      out.push(`  ${c.dim('·')} ${l.expected}   ${c.dim(`(not measured: ${notMeasured})`)}`);
    else if (l.status === 'unexpected')
      out.push(`  ${c.red('✗')} ${l.actual}   ${c.red('(not in the expected file)')}`);
    else {
      const saw = l.status === 'missing' ? 'this run has no such line' : `this run: ${l.actual}`;
      if (busy) {
        notJudged++;
        out.push(`  ${c.yellow('~')} ${l.expected}   ${c.yellow(`(busy: ${saw})`)}`);
        continue;
      }
      out.push(`  ${c.red('✗')} ${l.expected}   ${c.red(`(${saw})`)}`);
      if (l.hint) out.push(`      ${c.dim('likely cause:')} ${l.hint}`);
    }
  }
  if (busy && notJudged) out.push(`  ${c.yellow('~')} busy: ${notJudged} line(s) not judged, because ${busy}`);
  if (cmp.holds) out.push(c.green.bold('The shape holds.'));
  else if (busy && notJudged === cmp.lines.filter((l) => l.status !== 'held' && l.status !== 'not-shown').length) {
    out.push(
      c.yellow.bold('The shape was not shown: the machine was busy.') +
        ' Every line it judged held; the diff below shows the rest.',
      '',
      cmp.diff.trimEnd(),
    );
  } else
    out.push(
      c.red.bold('The shape does not hold.') + ' The diff below shows where; the likely causes are above.',
      '',
      cmp.diff.trimEnd(),
    );
  return out.join('\n') + '\n';
}

/** The --json document: the result with its shape, verdict, caveats and measures. */
export function jsonDocument<R>(
  exp: Reported<R>,
  result: R,
  shape: string[],
  cmp: Comparison,
  machine: MachineInfo,
): string {
  const notShown = exp.report.notShown?.(result) ?? [];
  const caveats = [busyMachineCaveat(machine), ...notShown, ...(exp.report.caveats?.(result) ?? [])].filter(
    (c): c is string => c !== undefined,
  );
  const measures = exp.report.measures?.(result) ?? [];
  return JSON.stringify(
    {
      experiment: exp.name,
      ...(exp.fix ? { exercise: exp.fix } : {}),
      result,
      shape,
      holds: cmp.holds,
      caveats,
      notShown,
      measures,
    },
    null,
    2,
  );
}

/**
 * The numbers behind the lines that did not hold, for stderr under --shape: `<line key>: <value>
 * <unit> (threshold <t>)`. A failed line's number is what tells a lockstep or a busy second from a
 * lost mechanism, and --shape prints no table.
 */
export function failedMeasures(cmp: Comparison, measures: readonly Measure[]): string[] {
  const failedKeys = new Set(
    cmp.lines.filter((l) => l.status === 'failed' || l.status === 'missing').map((l) => splitLine(l.expected!).key),
  );
  return measures
    .filter((m) => m.line !== undefined && failedKeys.has(m.line))
    .map(
      (m) =>
        `${m.line}: ${Number(m.value.toPrecision(3))} ${m.unit}${m.threshold !== undefined ? ` (threshold ${m.threshold})` : ''}`,
    );
}

/** Writes a finished run as the table (default), the shape lines (--shape) or JSON (--json). */
function writeOutcome<R>(
  exp: Reported<R>,
  result: R,
  shape: string[],
  cmp: Comparison,
  machine: MachineInfo,
  format: 'table' | 'shape' | 'json',
  io: Io,
  extra: OutcomeExtra = {},
): void {
  const { loopTable, expectedLabel = `expected-output/${exp.name}.txt` } = extra;
  const notShown = exp.report.notShown?.(result) ?? [];
  const busy = busyMachineCaveat(machine);
  const caveats = [busy, ...notShown, ...(exp.report.caveats?.(result) ?? [])].filter(
    (c): c is string => c !== undefined,
  );
  if (format === 'json') {
    io.stdout.write(jsonDocument(exp, result, shape, cmp, machine) + '\n');
  } else if (format === 'shape') {
    // A busy machine goes with the lines too: an instructor comparing files should see it.
    io.stdout.write(
      [...shape, ...notShown.map((why) => NOT_SHOWN_PREFIX + why), ...(busy ? [NOTE_PREFIX + busy] : [])].join('\n') +
        '\n',
    );
    for (const c of caveats) io.stderr.write(`Note: ${c}\n`);
    if (!cmp.holds) {
      io.stderr.write(
        `${busy ? 'The shape was not shown (the machine was busy)' : 'The shape does not hold'}: diff it with ${expectedLabel}\n`,
      );
      for (const m of failedMeasures(cmp, exp.report.measures?.(result) ?? [])) io.stderr.write(`  ${m}\n`);
      for (const n of exp.report.verdictNotes?.(result) ?? []) io.stderr.write(`  ${n}\n`);
    }
  } else {
    const color = colorEnabled(io.stdout);
    io.stdout.write(exp.report.render(result, color) + '\n');
    if (loopTable) io.stdout.write(loopTable + '\n');
    for (const c of caveats) io.stdout.write(`Note: ${c}\n`);
    if (!extra.hideComparison) io.stdout.write(renderComparison(cmp, expectedLabel, color, machine, extra.notMeasured));
  }
}

/**
 * Shows a finished run: its shape compared with the expected lines, written as `format` asks; the
 * --json document saved to `saveTo`; and --predict's `answers` graded against its measures (beside
 * the table, or on stderr when stdout carries lines or JSON). Returns the exit code.
 */
export function showOutcome<R>(
  exp: Reported<R> & { fix?: { id: string; expected: string } | undefined },
  result: R,
  machine: MachineInfo,
  o: {
    expected: string[];
    format: 'table' | 'shape' | 'json';
    saveTo: string | undefined;
    answers: PredictAnswers | undefined;
    /** Each server process's event loop during the load (profile/loops.ts), and what the shape is compared with. */
    extra: OutcomeExtra;
  },
  io: Io,
): number {
  const shape = exp.report.shape(result);
  const cmp = compareShape(o.expected, shape, exp.report.hints);
  writeOutcome(exp, result, shape, cmp, machine, o.format, io, o.extra);
  if (o.saveTo)
    io.stderr.write(
      (writeSaved(o.saveTo, jsonDocument(exp, result, shape, cmp, machine) + '\n') ?? `saved: ${o.saveTo}`) + '\n',
    );
  if (o.answers) {
    const graded = grade(exp.report.predictions!, o.answers, exp.report.measures?.(result) ?? []);
    const out = o.format === 'table' ? io.stdout : io.stderr;
    out.write('\n' + renderPredictions(graded, colorEnabled(out)) + '\n');
  }
  return cmp.holds ? EXIT.holds : EXIT.doesNotHold;
}
