/**
 * A class roll-up (the pure half of measure/rollup.ts): students' `--json` files read from a
 * folder, each run's shape compared with expected-output/, and tables by shape line and student.
 * A file that is not JSON, not a kit result or names no known experiment is skipped with its
 * reason; nothing aborts the roll-up.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { compareShape, splitLine, type Comparison } from '../../results/shape.ts';
import { makeChalk, makeTable, type MachineInfo } from '../../results/format.ts';

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

export interface Rollup {
  runs: RunEntry[];
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
  const skipped: Rollup['skipped'] = [];
  for (const { student, file } of files) {
    let data: any;
    try {
      data = JSON.parse(readFileSync(file, 'utf8'));
    } catch (err) {
      skipped.push({ file, reason: `not JSON (truncated, or another format?): ${(err as Error).message}` });
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
  return { runs, skipped };
}

/** One cell: ✓ every run held the line, – none could show it, ✗ k/n otherwise (k runs failed of n). */
function cell(statuses: string[]): string {
  if (statuses.length === 0) return '';
  const failed = statuses.filter((s) => s === 'failed' || s === 'missing').length;
  if (failed > 0) return `✗ ${failed}/${statuses.length}`;
  return statuses.every((s) => s === 'not-shown') ? '–' : '✓';
}

/** The roll-up for people: machines, one table per experiment, the failures with their likely causes, the skipped files. Pure. */
export function renderRollup(r: Rollup, expected: Map<string, string[]>, color: boolean): string {
  const c = makeChalk(color);
  const students = [...new Set(r.runs.map((x) => x.student))].sort();
  const parts = [c.bold(`Class roll-up: ${students.length} student(s), ${r.runs.length} run(s), ${r.skipped.length} file(s) skipped`)];
  const machines = makeTable(['student', 'cores', 'busy before', 'Node', 'platform', 'runs'], ['left', 'right', 'right', 'left', 'left', 'right']);
  for (const s of students) {
    const mine = r.runs.filter((x) => x.student === s);
    const m = mine[0]!.machine;
    const busy = Math.max(...mine.map((x) => x.machine.busyCoresAtStart ?? 0));
    machines.push([s, String(m.cores), `${busy.toFixed(2)} (worst)`, [...new Set(mine.map((x) => x.machine.node))].join(', '), m.platform, String(mine.length)]);
  }
  parts.push('', machines.toString());
  for (const experiment of [...new Set(r.runs.map((x) => x.experiment))].sort()) {
    const runs = r.runs.filter((x) => x.experiment === experiment);
    const table = makeTable(['shape line', ...students], ['left', ...students.map(() => 'center' as const)]);
    for (const line of expected.get(experiment)!) {
      const key = splitLine(line).key;
      const row = students.map((s) => cell(runs.filter((x) => x.student === s).map((x) => x.comparison.lines.find((l) => l.expected === line)?.status ?? 'missing')));
      table.push([key, ...row.map((v) => (v.startsWith('✗') ? c.red(v) : v))]);
    }
    parts.push('', c.bold(experiment), table.toString());
  }
  const failures = r.runs.flatMap((x) => x.comparison.lines.filter((l) => l.status === 'failed' || l.status === 'missing').map((l) => ({ x, l })));
  if (failures.length) {
    parts.push('', c.bold('Lines that did not hold, with the likely cause:'));
    for (const { x, l } of failures) parts.push(`  ${x.student} · ${x.experiment}: ${l.expected} (this run: ${l.actual ?? 'missing'})${l.hint ? `\n      likely cause: ${l.hint}` : ''}`);
  }
  if (r.skipped.length) {
    parts.push('', c.bold('Skipped files:'));
    for (const s of r.skipped) parts.push(`  ${s.file}: ${s.reason}`);
  }
  return parts.join('\n');
}
