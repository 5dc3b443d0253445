/**
 * Runs a lesson's experiments in order (`npx tsx measure/lesson.ts 3`), each as its own process
 * with the terminal, then prints which shapes held. Extra flags (e.g. --quick) go to every
 * experiment. Exit 0 when every shape held, 1 otherwise, 2 on a usage error.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { LESSONS } from './lessons.ts';
import { ROOT } from './lib/paths.ts';
import { colorEnabled, makeChalk } from './lib/output.ts';

const HELP = `Usage: npx tsx measure/lesson.ts <lesson number> [flags for every experiment]

Runs the lesson's experiments one after another and says which shapes held.
Lessons: ${LESSONS.map((l) => `${l.id} (${l.experiments.join(', ')})`).join('; ')}
Example: npx tsx measure/lesson.ts 3 --quick
`;

function runOne(name: string, flags: string[], running: Set<ChildProcess>): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'measure', `${name}.ts`), ...flags], { cwd: ROOT, stdio: 'inherit' });
    running.add(child);
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      running.delete(child);
      resolve(code ?? (signal === 'SIGINT' ? 130 : 1));
    });
  });
}

async function main(argv: string[]): Promise<number> {
  if (argv.length === 0 || argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(HELP);
    return argv.length === 0 ? 2 : 0;
  }
  const [id, ...flags] = argv;
  const lesson = LESSONS.find((l) => String(l.id) === id);
  if (!lesson) {
    process.stderr.write(`error KIT_ERR_USAGE: no lesson '${id}'; the lessons are ${LESSONS.map((l) => l.id).join(', ')}\n`);
    return 2;
  }
  // Pass a stop signal on to the running experiment, which stops its servers and exits (a
  // terminal's Ctrl-C reaches it directly as well; it ignores the repeat), and start no more.
  let interrupted = false;
  const running = new Set<ChildProcess>();
  const onSignal = (signal: NodeJS.Signals) => {
    interrupted = true;
    for (const child of running) child.kill(signal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const c = makeChalk(colorEnabled(process.stdout));
  const started = performance.now();
  const results: { name: string; code: number }[] = [];
  for (const [i, name] of lesson.experiments.entries()) {
    process.stdout.write(c.bold.underline(`\n[${i + 1}/${lesson.experiments.length}] ${name}`) + '\n\n');
    const code = await runOne(name, flags, running);
    results.push({ name, code });
    if (interrupted || code === 130) return 130;
  }
  const secs = ((performance.now() - started) / 1000).toFixed(1);
  process.stdout.write(c.bold(`\nLesson ${lesson.id} (${lesson.title}): ${secs} s`) + '\n');
  for (const r of results) {
    const verdict = r.code === 0 ? c.green('shape holds') : r.code === 1 ? c.red('shape does not hold (or the run failed)') : c.red(`exit code ${r.code}`);
    process.stdout.write(`  ${r.name.padEnd(12)} ${verdict}\n`);
  }
  return results.every((r) => r.code === 0) ? 0 : 1;
}

process.exitCode = await main(process.argv.slice(2));
