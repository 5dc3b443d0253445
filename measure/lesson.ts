/**
 * Runs a lesson's experiments in order (`npx tsx measure/lesson.ts 3`), one after another in this
 * process (each experiment is data: measure/lib/harness/experiments.ts), then prints which shapes held.
 * --quick, --shape and --port go to every experiment; with --shape, headers and the summary go to
 * stderr so stdout holds only shape lines.
 * Exit 0 when every shape held, 1 when one did not, 3 when a run failed, 2 on a usage error (the
 * lesson's own or an experiment's), as every script of the kit (lib/errors.ts EXIT).
 */
import { performance } from 'node:perf_hooks';
import { EXIT, KitError } from '../lib/errors.ts';
import { parseOrHelp, runIfMain, type Io } from '../lib/entry.ts';
import { defineCommand, helpText, intFlag } from '../lib/cli.ts';
import { runExperiment } from './lib/harness/experiment.ts';
import { balancedExperiments, loadExperiment } from './lib/harness/experiments.ts';
import { LESSONS } from './lib/harness/lessons.ts';
import { savePath } from './lib/harness/save.ts';
import { colorEnabled, makeChalk } from '../results/report/format.ts';
import { findNginx } from '../servers/lib/balancer/nginx-config.ts';
import { assertSignals } from '../lib/platform.ts';

const command = defineCommand({
  usage:
    'npx tsx measure/lesson.ts <lesson number | all> [--quick] [--shape] [--port <n>] [--lb builtin|nginx] [--save <folder>]',
  summary: `Runs a lesson's experiments one after another (or, with "all", every lesson's, in order) and says which shapes held. Lessons: ${LESSONS.map((l) => `${l.id} (${l.experiments.join(', ')})`).join('; ')}.`,
  flags: {
    quick: { type: 'boolean', description: 'a smaller workload for every experiment' },
    shape: { type: 'boolean', description: 'only the shape lines on stdout (headers and summary go to stderr)' },
    port: {
      type: 'string',
      valueName: 'n',
      description: 'port for the lesson servers, 0 for any free port',
      default: '0',
    },
    lb: { type: 'string', valueName: 'builtin|nginx', description: 'load balancer for lessons that have one (env LB)' },
    save: {
      type: 'string',
      valueName: 'folder',
      description:
        "also write each experiment's --json document to <folder>/<experiment>.json, for the class roll-up (make rollup)",
    },
  },
  epilogue:
    'Example: npx tsx measure/lesson.ts 3 --quick   (make lesson-3 ARGS=--quick)\n         npx tsx measure/lesson.ts 3 --save runs/ann    (make lesson-3 ARGS="--save runs/ann"; then make rollup DIR=runs)\n         npx tsx measure/lesson.ts all         (make lessons)\nFor JSON, run each experiment with --json (npx tsx measure/<experiment>.ts --json).',
});

const VERDICT: Record<number, string> = {
  [EXIT.holds]: 'shape holds',
  [EXIT.doesNotHold]: 'shape does not hold',
  [EXIT.usage]: 'usage error',
  [EXIT.failed]: 'run failed (see its error above)',
};

/** The command; throws KIT_ERR_USAGE for a bad lesson or flag before running anything. */
export async function main(argv: string[], io: Io): Promise<number> {
  const [id, ...rest] = argv;
  if (id === undefined || id === '--help' || id === '-h') {
    io.stdout.write(helpText(command));
    return id === undefined ? EXIT.usage : EXIT.holds;
  }
  const lessons = id === 'all' ? LESSONS : LESSONS.filter((l) => String(l.id) === id);
  if (lessons.length === 0)
    throw new KitError(
      'KIT_ERR_USAGE',
      `no lesson '${id}'; the lessons are ${LESSONS.map((l) => l.id).join(', ')}, or all`,
      'run with --help',
    );
  const parsed = parseOrHelp(command, rest, io);
  if (!parsed) return EXIT.holds;
  const { quick, shape, lb, save } = parsed.flags;
  assertSignals(id === 'all' ? 'every lesson' : `lesson ${id}`);
  if (typeof save === 'string' && /\.json$/i.test(save))
    throw new KitError(
      'KIT_ERR_USAGE',
      `--save takes a folder for a lesson (one file per experiment); got '${save}'`,
      'e.g. --save runs/ann',
    );
  // Checked (and made) now, so that a folder it cannot make stops the lesson before its first run.
  if (typeof save === 'string') savePath(save, 'lesson');
  const saveDir = typeof save === 'string' ? save : undefined;
  const port = intFlag('port', parsed.flags.port, 0, 65535, 0);
  for (const [what, value] of [
    ['--lb', lb],
    ['LB', process.env.LB || undefined],
  ] as const) {
    if (value !== undefined && value !== 'builtin' && value !== 'nginx')
      throw new KitError('KIT_ERR_USAGE', `${what} is builtin or nginx; got '${value}'`);
  }
  // Through nginx, every balanced experiment needs it: say once, up front, when it is missing,
  // rather than once per experiment after the first ones ran.
  const balanced = await balancedExperiments(lessons.flatMap((l) => l.experiments));
  if ((lb ?? process.env.LB) === 'nginx' && balanced.size > 0) findNginx();
  const flagsFor = (experiment: string) => [
    ...(quick ? ['--quick'] : []),
    ...(shape ? ['--shape'] : []),
    '--port',
    String(port),
    ...(lb && balanced.has(experiment) ? ['--lb', lb] : []),
    ...(saveDir ? ['--save', saveDir] : []),
  ];

  const out = shape ? io.stderr : io.stdout;
  const c = makeChalk(colorEnabled(out));
  const started = performance.now();
  const results: { lesson: number; name: string; code: number }[] = [];
  const total = lessons.reduce((n, l) => n + l.experiments.length, 0);
  for (const lesson of lessons) {
    if (lessons.length > 1) out.write(c.bold(`\n=== Lesson ${lesson.id}: ${lesson.title} ===`) + '\n');
    for (const name of lesson.experiments) {
      out.write(c.bold.underline(`\n[${results.length + 1}/${total}] ${name}`) + '\n\n');
      // In this process: the experiment stops its own servers, and exits 130 on Ctrl-C.
      const code = await runExperiment(await loadExperiment(name), flagsFor(name), io);
      results.push({ lesson: lesson.id, name, code });
      if (code === EXIT.sigint || code === EXIT.sigterm) return code;
    }
  }
  const secs = ((performance.now() - started) / 1000).toFixed(1);
  const heading =
    lessons.length === 1 ? `Lesson ${lessons[0]!.id} (${lessons[0]!.title})` : `All ${lessons.length} lessons`;
  out.write(c.bold(`\n${heading}: ${secs} s`) + '\n');
  for (const r of results) {
    const text = VERDICT[r.code] ?? `exit code ${r.code}`;
    const where = lessons.length > 1 ? `${r.lesson}  ` : '';
    out.write(`  ${where}${r.name.padEnd(16)} ${r.code === EXIT.holds ? c.green(text) : c.red(text)}\n`);
  }
  if (lessons.length > 1) {
    const held = results.filter((r) => r.code === EXIT.holds).length;
    out.write(`  ${held} of ${results.length} shapes held\n`);
  }
  // The most telling code of the experiments': a usage mistake, then a run that failed, then a shape that did not hold.
  for (const code of [EXIT.usage, EXIT.failed, EXIT.doesNotHold]) if (results.some((r) => r.code === code)) return code;
  return results.every((r) => r.code === EXIT.holds) ? EXIT.holds : EXIT.failed;
}

await runIfMain(import.meta, main);
