/**
 * The class roll-up's rows (rollup.ts reads the runs): per student, per experiment and per shape
 * line, the cells the terminal table and the roll-up page show. Pure.
 */
import { answersRight, firstWrongLine, type FixAnswers } from '../../../results/report/answers.ts';
import { splitLine } from '../../../results/report/shape.ts';
import { byAttempt, gradedCell } from './graded.ts';
import type { Rollup, RunEntry } from './rollup.ts';

/** One cell: ✓ every run held the line, – none could show it, ✗ k/n otherwise (k runs failed of n). */
function cell(statuses: string[]): string {
  if (statuses.length === 0) return '';
  const failed = statuses.filter((s) => s === 'failed' || s === 'missing').length;
  if (failed > 0) return `✗ ${failed}/${statuses.length}`;
  return statuses.every((s) => s === 'not-shown') ? '–' : '✓';
}

/** The students (of runs and graded exercises alike), sorted, and the experiments, sorted, that the runs name. */
export function studentsAndExperiments(r: Rollup): { students: string[]; experiments: string[] } {
  return {
    students: [...new Set([...r.runs, ...r.graded].map((x) => x.student))].sort(),
    experiments: [...new Set(r.runs.map((x) => x.experiment))].sort(),
  };
}

/** The roll-up's first line: how many students, runs, graded attempts (when any) and skipped files. */
export function headline(r: Rollup): string {
  const { students } = studentsAndExperiments(r);
  const graded = r.graded.length ? `, ${r.graded.length} graded attempt(s)` : '';
  return `${students.length} student(s), ${r.runs.length} run(s), ${r.skipped.length} file(s) skipped${graded}`;
}

/**
 * What a student's runs say of a tool (nginx, Redis): its version, "missing" when a run found it
 * absent, "?" when no run recorded it (results saved before the kit recorded tools) or recorded
 * something that is not a version. Control characters are dropped: the files are the students'.
 */
function toolCell(mine: readonly RunEntry[], tool: 'nginx' | 'redis'): string {
  const seen = mine.map((x) => x.machine[tool] as unknown).filter((v) => v === null || typeof v === 'string');
  const found = [
    ...new Set(seen.filter((v): v is string => typeof v === 'string').map((v) => v.replace(/[\x00-\x1f\x7f]/g, ''))),
  ];
  if (found.length) return found.join(', ');
  return seen.length ? 'missing' : '?';
}

interface MachineRow {
  student: string;
  cores: number;
  /** The worst busy-before of the student's runs (cores' worth). */
  busy: number;
  nodes: string;
  platform: string;
  nginx: string;
  redis: string;
  runs: number;
}

/** One row per student with a run: the machine of their first run, the worst busy-before, every Node version seen, nginx and Redis. */
export function machineRows(r: Rollup, students: readonly string[]): MachineRow[] {
  return students
    .filter((s) => r.runs.some((x) => x.student === s))
    .map((student) => {
      const mine = r.runs.filter((x) => x.student === student);
      const m = mine[0]!.machine;
      const busy = Math.max(...mine.map((x) => x.machine.busyCoresAtStart ?? 0));
      const nodes = [...new Set(mine.map((x) => String(x.machine.node)))].join(', ');
      return {
        student,
        cores: m.cores,
        busy,
        nodes,
        platform: String(m.platform),
        nginx: toolCell(mine, 'nginx'),
        redis: toolCell(mine, 'redis'),
        runs: mine.length,
      };
    });
}

/** One shape line of one experiment across the class. */
interface LineRow {
  key: string;
  /** What the line should read: its verdict in expected-output/. */
  expected: string;
  /** One cell per student (cell()), '' for a student who did not run the experiment. */
  cells: string[];
  /** Per student, what their failing runs read instead (`missing` when a run lacked the line); empty when none failed. */
  reads: string[][];
}

/** Per expected line of `experiment`: its key, its expected verdict, and one cell per student. */
export function lineRows(
  r: Rollup,
  experiment: string,
  expected: Map<string, string[]>,
  students: readonly string[],
): LineRow[] {
  const runs = r.runs.filter((x) => x.experiment === experiment);
  return (expected.get(experiment) ?? []).map((line) => {
    const verdicts = students.map((s) =>
      runs
        .filter((x) => x.student === s)
        .map((x) => x.comparison.lines.find((l) => l.expected === line) ?? { status: 'missing' as const }),
    );
    const { key, verdict } = splitLine(line);
    return {
      key,
      expected: verdict,
      cells: verdicts.map((v) => cell(v.map((l) => l.status))),
      reads: verdicts.map((v) => [
        ...new Set(
          v
            .filter((l) => l.status === 'failed' || l.status === 'missing')
            .map((l) => (l.actual ? splitLine(l.actual).verdict : 'missing')),
        ),
      ]),
    };
  });
}

/** One experiment in the class summary: how many students ran it, how many held every line, and each line some did not hold. */
interface SummaryRow {
  experiment: string;
  students: number;
  heldAll: number;
  /** Lines that held for fewer than every student who could show them: held by `held` of `of`. */
  weak: { key: string; held: number; of: number }[];
}

/** The class at a glance, per experiment: students who held every line, and the lines that some did not. */
export function classSummary(r: Rollup, expected: Map<string, string[]>): SummaryRow[] {
  const { students, experiments } = studentsAndExperiments(r);
  return experiments.map((experiment) => {
    const ran = students.filter((s) => r.runs.some((x) => x.student === s && x.experiment === experiment));
    const rows = lineRows(r, experiment, expected, ran);
    const weak = rows
      .map((row) => ({
        key: row.key,
        held: row.cells.filter((c) => c === '✓').length,
        of: row.cells.filter((c) => c === '✓' || c.startsWith('✗')).length,
      }))
      .filter((w) => w.held < w.of);
    const heldAll = ran.filter((_, i) => rows.every((row) => !row.cells[i]!.startsWith('✗'))).length;
    return { experiment, students: ran.length, heldAll, weak };
  });
}

/** Per graded exercise (by lesson and number): its title, one cell per student (gradedCell), and how many were right. */
export function gradedRows(
  r: Rollup,
  students: readonly string[],
): { id: string; title: string; cells: string[]; right: number; of: number }[] {
  const ids = [
    ...new Map(r.graded.map((g) => [`${g.graded.lesson}.${g.graded.exercise}`, g.graded] as const)).entries(),
  ].sort(([, a], [, b]) => a.lesson - b.lesson || a.exercise - b.exercise);
  return ids.map(([id, first]) => {
    const mine = students.map((s) =>
      r.graded.filter((g) => g.student === s && `${g.graded.lesson}.${g.graded.exercise}` === id).map((g) => g.graded),
    );
    const last = mine.map((a) => [...a].sort(byAttempt).at(-1));
    return {
      id,
      title: first.title,
      cells: mine.map(gradedCell),
      right: last.filter((g) => g?.verdict === 'right').length,
      of: last.filter((g) => g?.verdict === 'right' || g?.verdict === 'wrong').length,
    };
  });
}

/**
 * Every line that did not hold, with its run: "<student> · <experiment>: <line> (this run: …)" and
 * the likely cause. A fix whose answers were wrong was timed no further: its answers line stands
 * alone, with its first wrong answer as the cause, and its other lines are not listed.
 */
export function failures(r: Rollup): { text: string; hint?: string }[] {
  return r.runs.flatMap((x) => {
    const answers = (x.result as { answers?: FixAnswers } | undefined)?.answers;
    const wrong = answers?.checks && !answersRight(answers) ? firstWrongLine(answers) : undefined;
    return x.comparison.lines
      .filter((l) => l.status === 'failed' || (l.status === 'missing' && wrong === undefined))
      .map((l) => {
        const hint = wrong !== undefined && / {2}answers {2}/.test(l.expected ?? '') ? wrong : l.hint;
        return {
          text: `${x.student} · ${x.experiment}: ${l.expected} (this run: ${l.actual ?? 'missing'})`,
          ...(hint ? { hint } : {}),
        };
      });
  });
}
