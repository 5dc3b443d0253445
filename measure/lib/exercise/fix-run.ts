/**
 * A write-the-fix run, as the harness makes it of an experiment (runExperiment, when the
 * experiment's `exercise` names one): the starting point copied on first use, then the answers
 * battery, then, only when every answer is right, the experiment's own run. Its report puts the
 * answers line first; with a wrong answer it is the only line measured, and the first wrong answer
 * is named in one line, so that no timing line can read as a pass.
 */
import path from 'node:path';
import {
  answersLine,
  answersRight,
  answersSummary,
  wrongInFull,
  type FixAnswers,
} from '../../../results/report/answers.ts';
import type { MachineInfo } from '../../../results/report/format.ts';
import { makeChalk } from '../../../results/report/format.ts';
import type { FlagSpecs } from '../../../lib/cli.ts';
import type { Experiment, RunContext } from '../harness/experiment.ts';
import type { Report } from '../harness/outcome.ts';
import { copyOnce } from '../harness/exercise-copy.ts';
import { expectedFile } from '../harness/paths.ts';
import type { ExerciseSpec, FixTarget } from './spec.ts';

/**
 * A fix run's result: the experiment's own with the answers beside it, or the answers alone (one
 * was wrong, or the exercise is checked by its answers only).
 */
type FixResult<R> = (R & { answers: FixAnswers }) | { machine: MachineInfo; answers: FixAnswers };

/** True when the experiment's own run went ahead after the answers. */
function timedOf(spec: ExerciseSpec) {
  return <R>(r: FixResult<R>): r is R & { answers: FixAnswers } => !spec.answersOnly && answersRight(r.answers);
}

/** The answers line's likely cause; the first wrong answer is named above it (on stderr under --shape). */
function answersHint(spec: ExerciseSpec): string {
  return `your fix answers a request unlike the healthy code: the first wrong answer is named above${spec.answersOnly ? '' : '; until every answer is right, nothing is timed'}`;
}

/**
 * `report` for a fix run of `spec`: the answers line first, then the experiment's lines the
 * exercise keeps; the table, caveats and measures of the experiment's own result when it ran.
 */
export function fixReport<R>(
  spec: ExerciseSpec,
  report: Report<R>,
  shown = `exercises/${spec.student}`,
): Report<FixResult<R>> {
  const keep = spec.keeps ?? (() => true);
  const timed = timedOf(spec);
  return {
    render(r, color, caption) {
      const c = makeChalk(color);
      const lines = answersSummary(r.answers, !spec.answersOnly).map((l, i) => (i === 1 ? c.bold(l) : l));
      if (timed(r)) return `${report.render(r, color, caption)}\n${c.green(lines[0]!)}`;
      if (answersRight(r.answers))
        return [c.bold(`${spec.command}: your fix in ${shown}`), c.green(lines[0]!)].join('\n');
      return [
        c.bold(`${spec.command}: your fix in ${shown}, its answers checked first`),
        ...lines.map((l, i) => (i === 0 ? c.red(l) : l)),
      ].join('\n');
    },
    shape: (r) => [answersLine(spec.group, r.answers), ...(timed(r) ? report.shape(r).filter(keep) : [])],
    hints: { ...report.hints, ...spec.hints, [`${spec.group}  answers`]: answersHint(spec) },
    caveats: (r) => (timed(r) ? (report.caveats?.(r) ?? []) : []),
    notShown: (r) => (timed(r) ? (report.notShown?.(r) ?? []) : []),
    measures: (r) => (timed(r) ? (report.measures?.(r) ?? []) : []),
    // A wrong fix measured nothing: its predictions read "not in this run".
    ...(report.predictions ? { predictions: report.predictions } : {}),
    verdictNotes: (r) => wrongInFull(r.answers),
  };
}

/** What the run is compared with: the exercise's expected file, labelled with what a right fix does. */
export function fixExpected(spec: ExerciseSpec): { file: string; label: string } {
  return { file: expectedFile(spec.expected), label: `expected-output/${spec.expected}.txt (${spec.does})` };
}

/**
 * `exp` as a run of the fix `target`: copies the starting point (once), runs the answers battery
 * with the profiler off (its servers are not the lesson's load), and then `exp`'s own run if every
 * answer was right.
 */
export function asFixRun<S extends FlagSpecs, O, R>(
  exp: Experiment<S, O, R>,
  target: FixTarget,
): Experiment<S, O, FixResult<R>> {
  const { spec, file } = target;
  return {
    ...exp,
    report: fixReport(
      spec,
      exp.report,
      file
        .split(',')
        .map((f) => path.relative(process.cwd(), f))
        .join(', '),
    ),
    exercise: undefined,
    // After a fix's table nothing is asked (a seeded incident asks for its name; a fix names its own).
    conclude: undefined,
    fix: { id: spec.id, expected: spec.expected },
    async run(ctx: RunContext<O>): Promise<FixResult<R>> {
      if (target.copy && copyOnce(spec.start, file))
        ctx.progress.note(
          `copied ${spec.start} to ${path.relative(process.cwd(), file)}: edit it, then run this again`,
        );
      // The battery's servers are not the lesson's load: neither profiled nor in the event-loop table.
      const { profile, loops } = ctx.lab;
      ctx.lab.profile = ctx.lab.loops = undefined;
      let answers: FixAnswers;
      try {
        answers = await spec.answers({ lab: ctx.lab, progress: ctx.progress, quick: ctx.quick, file });
      } finally {
        Object.assign(ctx.lab, { profile, loops });
      }
      if (spec.answersOnly || !answersRight(answers)) return { machine: ctx.machine, answers };
      return { ...(await exp.run(ctx)), answers };
    },
  };
}
