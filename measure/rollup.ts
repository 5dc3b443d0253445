/**
 * A class roll-up for instructors (`npx tsx measure/rollup.ts <folder>`): reads every student's
 * `--json` files and prints which shape lines held for whom, each student's machine, and the
 * likely cause of every line that did not hold, and the graded exercises saved beside the runs.
 * Broken or foreign files are named and skipped.
 * Exit 0 when every run held, 1 when one did not, 2 on a usage error (no such folder, no JSON in it).
 */
import { existsSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { defineCommand } from '../lib/cli.ts';
import { EXIT, KitError } from '../lib/errors.ts';
import { commandMain, runIfMain } from '../lib/entry.ts';
import { loadExpected, readExpectedFile } from './lib/class/compare.ts';
import { EXERCISE_SPECS, handlersCheck } from './lib/exercise/specs.ts';
import { fixReport } from './lib/exercise/fix-run.ts';
import { loadExperiment } from './lib/harness/experiments.ts';
import { listRuns, renderRollup, rollUp } from './lib/class/rollup.ts';
import { chartData, renderRollupHtml } from './lib/class/rollup-html.ts';
import type { Report } from './lib/harness/outcome.ts';
import { colorEnabled } from '../results/report/format.ts';

const command = defineCommand({
  usage: 'npx tsx measure/rollup.ts <folder> [--html <file>]',
  summary:
    "Reads a class's --json files (one folder per student, or files named <student>.<anything>.json) and prints, per experiment, each shape line by student " +
    "(✓ held in every run, ✗ k/n failed in k of n runs, – not shown on that machine) beside the value it should read, a class summary, each student's machine, the likely cause of every line that did not hold, " +
    'and the graded exercises that check-exercise --grade --save wrote there.',
  flags: {
    html: {
      type: 'string',
      valueName: 'file',
      description:
        'also write the roll-up as one self-contained HTML page for a projector (1,400 x 900): the class summary first, a page-wide chart per measure (every run a point, y from zero)',
    },
  },
  epilogue:
    'Example: each student runs npx tsx measure/cluster.ts --json > class/alice/cluster.json; then npx tsx measure/rollup.ts class\nExit: 0 every run held, 1 one did not, 2 usage error.',
  positionals: true,
});

/** The command; throws KIT_ERR_USAGE for a missing folder or one without JSON files. */
export const main = commandMain(command, async (parsed, io) => {
  const [dir, ...extra] = parsed.positionals;
  if (dir === undefined || extra.length > 0)
    throw new KitError(
      'KIT_ERR_USAGE',
      'name one folder of --json files (make rollup DIR=<folder>)',
      'run with --help',
    );
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new KitError('KIT_ERR_USAGE', `no folder '${dir}'`);
  const files = listRuns(dir);
  if (files.length === 0)
    throw new KitError(
      'KIT_ERR_USAGE',
      `no .json files in '${dir}' or its subfolders`,
      "collect each student's npx tsx measure/<experiment>.ts --json output there",
    );
  const expected = loadExpected();
  const misplaced = files.find(
    (f) =>
      path.resolve(path.dirname(f.file)) === path.resolve(dir) &&
      (expected.has(f.student) || f.student.startsWith('exercise-')),
  );
  if (misplaced) {
    throw new KitError(
      'KIT_ERR_USAGE',
      `'${dir}' looks like one student's folder: it holds ${path.basename(misplaced.file)}, a kit file, not <student>.<anything>.json`,
      'name the class folder, the one that holds a folder per student',
    );
  }
  const reports = new Map<string, Report<unknown>>();
  for (const name of expected.keys()) reports.set(name, (await loadExperiment(name)).report as Report<unknown>);
  // A fix's run is held to its exercise's expected file, under the exercise's command (blocking --mine).
  const fixes = new Map<string, string>();
  for (const spec of [...EXERCISE_SPECS, handlersCheck('').spec]) {
    fixes.set(spec.id, spec.command);
    expected.set(spec.command, readExpectedFile(spec.expected));
    reports.set(spec.command, fixReport(spec, reports.get(spec.experiment)!) as Report<unknown>);
  }
  const r = rollUp(files, expected, (name) => reports.get(name)?.hints ?? {}, fixes);
  io.stdout.write(renderRollup(r, expected, colorEnabled(io.stdout)) + '\n');
  const html = parsed.flags.html;
  if (html !== undefined) {
    const measuresOf = (name: string, result: unknown) => {
      try {
        return reports.get(name)?.measures?.(result) ?? [];
      } catch {
        return []; // a result from another version of the kit: its table still counts, its numbers are left out
      }
    };
    writeFileSync(html, renderRollupHtml(r, expected, chartData(r, measuresOf)));
    io.stdout.write(`\nWrote ${html}: open it in a browser.\n`);
  }
  return r.runs.every((x) => x.comparison.holds) ? EXIT.holds : EXIT.doesNotHold;
});

await runIfMain(import.meta, main);
