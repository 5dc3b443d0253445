/**
 * Runs a lesson's experiments in order (`npx tsx measure/lesson.ts 3`), each as its own process
 * with the terminal, then prints which shapes held. --quick, --shape and --port go to every
 * experiment; with --shape, headers and the summary go to stderr so stdout holds only shape lines.
 * Exit 0 when every shape held, 1 when one did not, 2 on a usage error, 3 when a run failed.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { describeError, KitError } from '../lib/errors.ts';
import { intFlag, parseFlags, defineCommand, helpText } from '../lib/cli.ts';
import { BALANCED_EXPERIMENTS, LESSONS } from './lib/lessons.ts';
import { EXIT } from './lib/experiment.ts';
import { ROOT } from './lib/paths.ts';
import { colorEnabled, makeChalk } from './lib/output.ts';
import { SignalRelay } from './lib/relay.ts';

const command = defineCommand({
  usage: 'npx tsx measure/lesson.ts <lesson number | all> [--quick] [--shape] [--port <n>] [--lb builtin|nginx]',
  summary: `Runs a lesson's experiments one after another (or, with "all", every lesson's, in order) and says which shapes held. Lessons: ${LESSONS.map((l) => `${l.id} (${l.experiments.join(', ')})`).join('; ')}.`,
  flags: {
    quick: { type: 'boolean', description: 'a smaller workload for every experiment' },
    shape: { type: 'boolean', description: 'only the shape lines on stdout (headers and summary go to stderr)' },
    port: { type: 'string', valueName: 'n', description: 'port for the lesson servers, 0 for any free port', default: '0' },
    lb: { type: 'string', valueName: 'builtin|nginx', description: 'load balancer for lessons that have one (env LB)' },
  },
  epilogue: 'Example: npx tsx measure/lesson.ts 3 --quick   (make lesson-3 ARGS=--quick)\n         npx tsx measure/lesson.ts all         (make lessons)\nFor JSON, run each experiment with --json (npx tsx measure/<experiment>.ts --json).',
});

const VERDICT: Record<number, string> = {
  [EXIT.holds]: 'shape holds',
  [EXIT.doesNotHold]: 'shape does not hold',
  [EXIT.usage]: 'usage error',
  [EXIT.failed]: 'run failed (see its error above)',
};

function runOne(name: string, flags: string[], relay: SignalRelay): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'measure', `${name}.ts`), ...flags], { cwd: ROOT, stdio: 'inherit' });
    relay.track(child);
    child.once('error', reject);
    child.once('exit', (code, signal) => resolve(code ?? (signal === 'SIGTERM' ? EXIT.sigterm : EXIT.sigint)));
  });
}

async function main(argv: string[]): Promise<number> {
  const [id, ...rest] = argv;
  if (id === undefined || id === '--help' || id === '-h') {
    process.stdout.write(helpText(command));
    return id === undefined ? EXIT.usage : EXIT.holds;
  }
  const lessons = id === 'all' ? LESSONS : LESSONS.filter((l) => String(l.id) === id);
  if (lessons.length === 0) throw new KitError('KIT_ERR_USAGE', `no lesson '${id}'; the lessons are ${LESSONS.map((l) => l.id).join(', ')}, or all`, 'run with --help');
  const parsed = parseFlags(command, rest);
  if (parsed.help) {
    process.stdout.write(helpText(command));
    return EXIT.holds;
  }
  const { quick, shape, lb } = parsed.flags;
  const port = intFlag('port', parsed.flags.port, 0, 65535, 0);
  for (const [what, value] of [['--lb', lb], ['LB', process.env.LB || undefined]] as const) {
    if (value !== undefined && value !== 'builtin' && value !== 'nginx') throw new KitError('KIT_ERR_USAGE', `${what} is builtin or nginx; got '${value}'`);
  }
  const flagsFor = (experiment: string) => [
    ...(quick ? ['--quick'] : []),
    ...(shape ? ['--shape'] : []),
    '--port',
    String(port),
    ...(lb && BALANCED_EXPERIMENTS.has(experiment) ? ['--lb', lb] : []),
  ];

  const relay = new SignalRelay();

  const out = shape ? process.stderr : process.stdout;
  const c = makeChalk(colorEnabled(out));
  const started = performance.now();
  const results: { lesson: number; name: string; code: number }[] = [];
  const total = lessons.reduce((n, l) => n + l.experiments.length, 0);
  for (const lesson of lessons) {
    if (lessons.length > 1) out.write(c.bold(`\n=== Lesson ${lesson.id}: ${lesson.title} ===`) + '\n');
    for (const name of lesson.experiments) {
      out.write(c.bold.underline(`\n[${results.length + 1}/${total}] ${name}`) + '\n\n');
      const code = await runOne(name, flagsFor(name), relay);
      results.push({ lesson: lesson.id, name, code });
      if (relay.interrupted || code === EXIT.sigint || code === EXIT.sigterm) return EXIT.sigint;
    }
  }
  const secs = ((performance.now() - started) / 1000).toFixed(1);
  const heading = lessons.length === 1 ? `Lesson ${lessons[0]!.id} (${lessons[0]!.title})` : `All ${lessons.length} lessons`;
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
  if (results.some((r) => r.code === EXIT.failed)) return EXIT.failed;
  return results.every((r) => r.code === EXIT.holds) ? EXIT.holds : EXIT.doesNotHold;
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (err) {
  process.stderr.write(describeError(err) + '\n');
  process.exitCode = err instanceof KitError && err.code === 'KIT_ERR_USAGE' ? EXIT.usage : EXIT.failed;
}
