/**
 * A class roll-up (the pure half of measure/rollup.ts): students' `--json` files read from a
 * folder, each run's shape compared with expected-output/, and tables by shape line and student.
 * A file that is not JSON, not a kit result or names no known experiment is skipped with its
 * reason; nothing aborts the roll-up. Graded exercises (`check-exercise --grade --save`,
 * measure/lib/class/graded.ts) in the same folders are tabled by exercise and student.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { compareShape, withoutProfileLines, type Comparison } from '../../../results/report/shape.ts';
import { makeChalk, makeTable, type MachineInfo } from '../../../results/report/format.ts';
import { isGradedDocument, readGraded, type GradedExercise } from './graded.ts';
import {
  classSummary,
  failures,
  gradedRows,
  headline,
  lineRows,
  machineRows,
  studentsAndExperiments,
} from './rollup-rows.ts';

/** One student's run of one experiment, compared. */
export interface RunEntry {
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
      for (const f of readdirSync(full).sort())
        if (f.endsWith('.json')) out.push({ student: name, file: path.join(full, f) });
    } else if (name.endsWith('.json')) {
      out.push({ student: name.split('.')[0]!, file: full });
    }
  }
  return out;
}

/**
 * Reads and compares every run; `hints` gives each experiment's likely causes by line. A fix's
 * run (--mine: its document names the exercise) is filed under the exercise's command in
 * `fixes` (exercise id → `blocking --mine`), whose lines `expected` holds too: it is held to the
 * fix's expected file, its answers line first, not to the lesson's.
 */
export function rollUp(
  files: { student: string; file: string }[],
  expected: Map<string, string[]>,
  hints: (experiment: string) => Record<string, string>,
  fixes: Map<string, string> = new Map(),
): Rollup {
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
      if ('badField' in g)
        skipped.push({
          file,
          reason: `a graded exercise whose '${g.badField}' is missing or not what check-exercise --save writes`,
        });
      else graded.push({ student, file, graded: g });
      continue;
    }
    const machine = data?.result?.machine;
    if (typeof data?.experiment !== 'string' || !Array.isArray(data.shape) || typeof machine?.cores !== 'number') {
      skipped.push({
        file,
        reason: 'not a kit result: it needs experiment, shape and result.machine, as --json writes them',
      });
      continue;
    }
    const fixId = typeof data.exercise?.id === 'string' ? (data.exercise.id as string) : undefined;
    const name = fixId === undefined ? (data.experiment as string) : fixes.get(fixId);
    if (name === undefined) {
      skipped.push({ file, reason: `a fix of an exercise this kit does not have ('${fixId}')` });
      continue;
    }
    const exp = expected.get(name);
    if (!exp) {
      skipped.push({ file, reason: `no experiment '${data.experiment}' in this kit's expected-output/` });
      continue;
    }
    const shape = withoutProfileLines((data.shape as unknown[]).filter((l): l is string => typeof l === 'string'));
    runs.push({
      student,
      file,
      experiment: name,
      machine,
      result: data.result,
      comparison: compareShape(exp, shape, hints(name)),
    });
  }
  return { runs, graded, skipped };
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
      parts.push(
        `  ${x.experiment}: ${x.heldAll} of ${x.students} student(s) held every line${weak ? `; ${weak}` : ''}`,
      );
    }
  }
  const machines = makeTable(
    ['student', 'cores', 'busy before', 'Node', 'platform', 'nginx', 'Redis', 'runs'],
    ['left', 'right', 'right', 'left', 'left', 'left', 'left', 'right'],
  );
  for (const m of machineRows(r, students))
    machines.push([
      m.student,
      String(m.cores),
      `${m.busy.toFixed(2)} (worst)`,
      m.nodes,
      m.platform,
      m.nginx,
      m.redis,
      String(m.runs),
    ]);
  parts.push('', machines.toString());
  for (const experiment of experiments) {
    const table = makeTable(
      ['shape line', 'expected', ...students],
      ['left', 'left', ...students.map(() => 'center' as const)],
    );
    for (const row of lineRows(r, experiment, expected, students))
      table.push([row.key, row.expected, ...row.cells.map((v) => (v.startsWith('✗') ? c.red(v) : v))]);
    parts.push('', c.bold(experiment), table.toString());
  }
  const graded = gradedRows(r, students);
  if (graded.length) {
    const table = makeTable(
      ['exercise', 'right', ...students],
      ['left', 'right', ...students.map(() => 'center' as const)],
    );
    for (const row of graded)
      table.push([
        `${row.id} ${row.title}`,
        `${row.right} of ${row.of}`,
        ...row.cells.map((v) => (v.startsWith('✗') ? c.red(v) : v)),
      ]);
    parts.push(
      '',
      c.bold(
        'Graded exercises (check-exercise --grade --save): ✓ right, ✗ wrong, – not counted on that machine; attempts in order',
      ),
      table.toString(),
    );
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
