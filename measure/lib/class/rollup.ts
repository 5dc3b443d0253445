/**
 * A class roll-up (the pure half of measure/rollup.ts): students' `--json` files read from a
 * folder, each run's shape compared with expected-output/, and tables by shape line and student.
 * A file that is not JSON, not a kit result or names no known experiment is skipped with its
 * reason; nothing aborts the roll-up. Graded exercises (`check-exercise --grade --save`,
 * measure/lib/class/graded.ts) in the same folders are tabled by exercise and student.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { compareShape, splitLine, type Comparison } from '../../../results/report/shape.ts';
import { makeChalk, makeTable, type MachineInfo } from '../../../results/report/format.ts';
import { byAttempt, gradedCell, isGradedDocument, readGraded, type GradedExercise } from './graded.ts';

/** One student's run of one experiment, compared. */
interface RunEntry {
  student: string;
  file: string;
  experiment: string;
  machine: MachineInfo;
  /** The run's `result`, as its experiment wrote it (read, not trusted: measures are taken from it with care). */
  result: unknown;
  comparison: Comparison;
}

/** One student's graded exercise, as check-exercise --save wrote it. */
interface GradedEntry {
  student: string;
  file: string;
  graded: GradedExercise;
}

export interface Rollup {
  runs: RunEntry[];
  graded: GradedEntry[];
  skipped: { file: string; reason: string }[];
}

/**
 * The JSON files under `dir`: `<dir>/<student>/*.json` (one folder per student), or
 * `<dir>/<student>.<anything>.json` (the student is the name up to the first dot).
 */
export function listRuns(dir: string): { student: string; file: string }[] {
  const out: { student: string; file: string }[] = [];
  for (const name of readdirSync(dir).sort()) {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) {
      for (const f of readdirSync(full).sort()) if (f.endsWith('.json')) out.push({ student: name, file: path.join(full, f) });
    } else if (name.endsWith('.json')) {
      out.push({ student: name.split('.')[0]!, file: full });
    }
  }
  return out;
}

/** Reads and compares every run; `hints` gives each experiment's likely causes by line. */
export function rollUp(files: { student: string; file: string }[], expected: Map<string, string[]>, hints: (experiment: string) => Record<string, string>): Rollup {
  const runs: RunEntry[] = [];
  const graded: GradedEntry[] = [];
  const skipped: Rollup['skipped'] = [];
  for (const { student, file } of files) {
    let data: any;
    try {
      data = JSON.parse(readFileSync(file, 'utf8'));
    } catch (err) {
      skipped.push({ file, reason: `not JSON (truncated, or another format?): ${(err as Error).message}` });
      continue;
    }
    if (isGradedDocument(data)) {
      const g = readGraded(data);
      if ('badField' in g) skipped.push({ file, reason: `a graded exercise whose '${g.badField}' is missing or not what check-exercise --save writes` });
      else graded.push({ student, file, graded: g });
      continue;
    }
    const machine = data?.result?.machine;
    if (typeof data?.experiment !== 'string' || !Array.isArray(data.shape) || typeof machine?.cores !== 'number') {
      skipped.push({ file, reason: 'not a kit result: it needs experiment, shape and result.machine, as --json writes them' });
      continue;
    }
    const exp = expected.get(data.experiment);
    if (!exp) {
      skipped.push({ file, reason: `no experiment '${data.experiment}' in this kit's expected-output/` });
      continue;
    }
    const shape = (data.shape as unknown[]).filter((l): l is string => typeof l === 'string');
    runs.push({ student, file, experiment: data.experiment, machine, result: data.result, comparison: compareShape(exp, shape, hints(data.experiment)) });
  }
  return { runs, graded, skipped };
}

/** One cell: ✓ every run held the line, – none could show it, ✗ k/n otherwise (k runs failed of n). */
function cell(statuses: string[]): string {
  if (statuses.length === 0) return '';
  const failed = statuses.filter((s) => s === 'failed' || s === 'missing').length;
  if (failed > 0) return `✗ ${failed}/${statuses.length}`;
  return statuses.every((s) => s === 'not-shown') ? '–' : '✓';
}

/** The students (of runs and graded exercises alike), sorted, and the experiments, sorted, that the runs name. */
export function studentsAndExperiments(r: Rollup): { students: string[]; experiments: string[] } {
  return { students: [...new Set([...r.runs, ...r.graded].map((x) => x.student))].sort(), experiments: [...new Set(r.runs.map((x) => x.experiment))].sort() };
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
  const found = [...new Set(seen.filter((v): v is string => typeof v === 'string').map((v) => v.replace(/[\x00-\x1f\x7f]/g, '')))];
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
  return students.filter((s) => r.runs.some((x) => x.student === s)).map((student) => {
    const mine = r.runs.filter((x) => x.student === student);
    const m = mine[0]!.machine;
    const busy = Math.max(...mine.map((x) => x.machine.busyCoresAtStart ?? 0));
    const nodes = [...new Set(mine.map((x) => String(x.machine.node)))].join(', ');
    return { student, cores: m.cores, busy, nodes, platform: String(m.platform), nginx: toolCell(mine, 'nginx'), redis: toolCell(mine, 'redis'), runs: mine.length };
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
export function lineRows(r: Rollup, experiment: string, expected: Map<string, string[]>, students: readonly string[]): LineRow[] {
  const runs = r.runs.filter((x) => x.experiment === experiment);
  return (expected.get(experiment) ?? []).map((line) => {
    const verdicts = students.map((s) => runs.filter((x) => x.student === s).map((x) => x.comparison.lines.find((l) => l.expected === line) ?? { status: 'missing' as const }));
    const { key, verdict } = splitLine(line);
    return {
      key,
      expected: verdict,
      cells: verdicts.map((v) => cell(v.map((l) => l.status))),
      reads: verdicts.map((v) => [...new Set(v.filter((l) => l.status === 'failed' || l.status === 'missing').map((l) => (l.actual ? splitLine(l.actual).verdict : 'missing')))]),
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
      .map((row) => ({ key: row.key, held: row.cells.filter((c) => c === '✓').length, of: row.cells.filter((c) => c === '✓' || c.startsWith('✗')).length }))
      .filter((w) => w.held < w.of);
    const heldAll = ran.filter((_, i) => rows.every((row) => !row.cells[i]!.startsWith('✗'))).length;
    return { experiment, students: ran.length, heldAll, weak };
  });
}

/** Per graded exercise (by lesson and number): its title, one cell per student (gradedCell), and how many were right. */
export function gradedRows(r: Rollup, students: readonly string[]): { id: string; title: string; cells: string[]; right: number; of: number }[] {
  const ids = [...new Map(r.graded.map((g) => [`${g.graded.lesson}.${g.graded.exercise}`, g.graded] as const)).entries()].sort(
    ([, a], [, b]) => a.lesson - b.lesson || a.exercise - b.exercise,
  );
  return ids.map(([id, first]) => {
    const mine = students.map((s) => r.graded.filter((g) => g.student === s && `${g.graded.lesson}.${g.graded.exercise}` === id).map((g) => g.graded));
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

/** Every line that did not hold, with its run: "<student> · <experiment>: <line> (this run: …)" and the likely cause. */
export function failures(r: Rollup): { text: string; hint?: string }[] {
  return r.runs.flatMap((x) =>
    x.comparison.lines
      .filter((l) => l.status === 'failed' || l.status === 'missing')
      .map((l) => ({ text: `${x.student} · ${x.experiment}: ${l.expected} (this run: ${l.actual ?? 'missing'})`, ...(l.hint ? { hint: l.hint } : {}) })),
  );
}

/** The roll-up for people: machines, one table per experiment, the failures with their likely causes, the skipped files. Pure. */
export function renderRollup(r: Rollup, expected: Map<string, string[]>, color: boolean): string {
  const c = makeChalk(color);
  const { students, experiments } = studentsAndExperiments(r);
  const parts = [c.bold(`Class roll-up: ${headline(r)}`)];
  const summary = classSummary(r, expected);
  if (summary.length) {
    parts.push('', c.bold('Class summary:'));
    for (const x of summary) {
      const weak = x.weak.map((w) => `${w.key} held by ${w.held} of ${w.of}`).join('; ');
      parts.push(`  ${x.experiment}: ${x.heldAll} of ${x.students} student(s) held every line${weak ? `; ${weak}` : ''}`);
    }
  }
  const machines = makeTable(['student', 'cores', 'busy before', 'Node', 'platform', 'nginx', 'Redis', 'runs'], ['left', 'right', 'right', 'left', 'left', 'left', 'left', 'right']);
  for (const m of machineRows(r, students)) machines.push([m.student, String(m.cores), `${m.busy.toFixed(2)} (worst)`, m.nodes, m.platform, m.nginx, m.redis, String(m.runs)]);
  parts.push('', machines.toString());
  for (const experiment of experiments) {
    const table = makeTable(['shape line', 'expected', ...students], ['left', 'left', ...students.map(() => 'center' as const)]);
    for (const row of lineRows(r, experiment, expected, students)) table.push([row.key, row.expected, ...row.cells.map((v) => (v.startsWith('✗') ? c.red(v) : v))]);
    parts.push('', c.bold(experiment), table.toString());
  }
  const graded = gradedRows(r, students);
  if (graded.length) {
    const table = makeTable(['exercise', 'right', ...students], ['left', 'right', ...students.map(() => 'center' as const)]);
    for (const row of graded) table.push([`${row.id} ${row.title}`, `${row.right} of ${row.of}`, ...row.cells.map((v) => (v.startsWith('✗') ? c.red(v) : v))]);
    parts.push('', c.bold('Graded exercises (check-exercise --grade --save): ✓ right, ✗ wrong, – not counted on that machine; attempts in order'), table.toString());
  }
  const failed = failures(r);
  if (failed.length) {
    parts.push('', c.bold('Lines that did not hold, with the likely cause:'));
    for (const f of failed) parts.push(`  ${f.text}${f.hint ? `\n      likely cause: ${f.hint}` : ''}`);
  }
  if (r.skipped.length) {
    parts.push('', c.bold('Skipped files:'));
    for (const s of r.skipped) parts.push(`  ${s.file}: ${s.reason}`);
  }
  return parts.join('\n');
}
