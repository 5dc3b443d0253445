/**
 * The entry point every experiment shares: flags and --help, one Lab for the run, cleanup on
 * success, failure, SIGINT and SIGTERM, and the three ways to show a result:
 *   (default)  the tables, then the shape compared line by line with expected-output/<name>.txt
 *   --shape    only the shape lines (what instructors diff)
 *   --json     the whole result, with its shape and verdict
 * A fix's run (--mine: the experiment names its exercise) checks the fix's answers first and is
 * compared with the exercise's expected file (measure/lib/exercise/fix-run.ts).
 * Exit code (lib/errors.ts EXIT): 0 the shape holds, 1 it does not, 2 a usage error, 3 the run
 * itself failed (a server did not start, a request failed), 130/143 interrupted by SIGINT/SIGTERM.
 */

import { assertNodeVersion, describeError, EXIT, exitCodeFor, KitError } from '../../../lib/errors.ts';

export { EXIT };
import { isEntry, parseOrHelp, TERMINAL, type Io } from '../../../lib/entry.ts';
import { intFlag, type CommandSpec, type FlagSpecs, type ParsedFlags } from '../../../lib/cli.ts';
import { Lab } from '../process/lab.ts';
import { ContentionMonitor, formatPrograms } from '../machine/contention.ts';
import { colorEnabled, machineWasBusy, type MachineInfo } from '../../../results/report/format.ts';
import { showOutcome, type Report } from './outcome.ts';
import { machineInfo } from '../machine/machine.ts';
import { savePath } from './save.ts';
import { expectedFile } from './paths.ts';
import { Progress } from './progress.ts';
import { collectAnswers, listQuestions, normalizePredictFlag } from './predict.ts';
import { readExpected, readProfileExpected } from './expected.ts';
import { assertSignals } from '../../../lib/platform.ts';
import { ProfileSession } from '../profile/session.ts';
import { LoopWatch, renderLoops } from '../profile/loops.ts';
import { showProfiles } from '../profile/show.ts';
import { profileDir, profileExpectedFile } from './paths.ts';
import { asFixRun, fixExpected } from '../exercise/fix-run.ts';
import type { FixTarget } from '../exercise/spec.ts';
import { answersRight, type FixAnswers } from '../../../results/report/answers.ts';

/** Flags every experiment has, besides --help. Spread into each experiment's own flags. */
export const COMMON_FLAGS = {
  shape: { type: 'boolean', description: 'print only the shape lines (diff them with expected-output/)' },
  json: { type: 'boolean', description: 'print the whole result as JSON' },
  quick: { type: 'boolean', description: 'a smaller workload (tests and CI use it): the same shapes in less time' },
  port: {
    type: 'string',
    valueName: 'n',
    description: 'port for the lesson server, 0 for any free port',
    default: '0',
  },
  predict: {
    type: 'string',
    valueName: 'answers.json',
    valueOptional: true,
    description:
      'predict, then measure: alone, asks its questions (one to four) before the run starts; with a file, reads the answers from it ({"<question id>": <choice number>}); after the run, each prediction is printed beside what was measured',
  },
  list: {
    type: 'boolean',
    description:
      'with --predict: print the questions with their ids and choices (for an answers file) and start nothing',
  },
  profile: {
    type: 'boolean',
    description:
      "profile every Node process the run starts (V8's CPU profiler) while it is under load, and write each one's .cpuprofile and flame graph page to profiles/",
  },
  save: {
    type: 'string',
    valueName: 'folder|file.json',
    description:
      'also write the --json document to <folder>/<experiment>.json (or to a file named *.json), for the class roll-up',
  },
} as const satisfies FlagSpecs;

/** What an experiment's run gets. */
export interface RunContext<O> {
  lab: Lab;
  progress: Progress;
  options: O;
  quick: boolean;
  port: number;
  machine: MachineInfo;
  /** With --profile: name the windows to profile (the load, each half of it) with profile.window(). */
  profile?: ProfileSession;
}

/**
 * An experiment as data: its command (flags, --help), how its flags become options, its run and
 * its report. Each measure/<name>.ts exports one (`experiment`) and runs it when it is the script
 * that was started (runIfEntry), so tests can import it and run it in-process.
 */
export interface Experiment<S extends FlagSpecs, O, R> {
  /** Names expected-output/<name>.txt. */
  name: string;
  command: CommandSpec<S>;
  /**
   * Checks the experiment's own flags (typed by the command) and resolves everything that depends
   * on --quick, once, for the run and its Result alike; throws KIT_ERR_USAGE.
   */
  options(flags: ParsedFlags<S>): O;
  run(ctx: RunContext<O>): Promise<R>;
  report: Report<R>;
  /**
   * The lines this run's shape is compared with, when they depend on its options (the incident
   * the run plants): the file, and how to name it to the reader. Default expected-output/<name>.txt.
   */
  expected?(options: O): { file: string; label: string; hideComparison?: boolean } | undefined;
  /**
   * After the table (not with --shape or --json): anything the experiment asks of the reader
   * once they have seen it (the incident's name). Returns an exit code to use instead, or undefined.
   */
  conclude?(result: R, options: O, io: Io): Promise<number | undefined>;
  /**
   * The write-the-fix exercise this run measures (--mine), if any: the harness then checks the
   * fix's answers before anything else and compares the run with the exercise's expected file.
   */
  exercise?(options: O): FixTarget | undefined;
  /** Set on a fix run (exercise/fix-run.ts): which exercise, and its expected file, for the --json document. */
  fix?: { id: string; expected: string } | undefined;
}

/** Declares an experiment; keeps its flags' literal types so `options` gets typed flags. */
export function defineExperiment<const S extends FlagSpecs, O, R>(exp: Experiment<S, O, R>): Experiment<S, O, R> {
  return exp;
}

/**
 * Runs `exp` as a command, with the process's arguments, when `meta` is the module that was
 * started (`npx tsx measure/blocking.ts`), and not when a test or the lesson runner imports it.
 */
export async function runIfEntry<S extends FlagSpecs, O, R>(meta: ImportMeta, exp: Experiment<S, O, R>): Promise<void> {
  if (!isEntry(meta)) return;
  // `--json | head`: the reader went away; the run still ends (and stops its servers) as usual.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
  });
  process.exitCode = await runExperiment(exp);
}

/**
 * Runs `run` while a ContentionMonitor watches the other programs, and adds what it saw (average
 * and busiest-second cores, steal) to `machine`. It stops before the servers do: a cluster's
 * workers killed with their primary are nobody's to reap.
 */
async function runWatched<R>(machine: MachineInfo, run: () => Promise<R>): Promise<R> {
  const contention = new ContentionMonitor();
  contention.start();
  try {
    return await run();
  } finally {
    const other = contention.stop();
    if (other) {
      machine.busyCoresDuringRun = other.averageCores;
      machine.busiestSecondDuringRun = other.peakCores;
      machine.stealCoresDuringRun = other.stealCores;
      machine.cpuSource = other.source;
      // Named only when they made the run busy: a class's saved runs need not list its programs.
      if (other.programs.length && machineWasBusy(machine)) machine.busiestPrograms = formatPrograms(other.programs);
    }
  }
}

/**
 * What a run needs before it starts, from its flags: the options; for a fix (--mine) the
 * experiment made a fix run (exercise/fix-run.ts); the lines to compare with and where they come
 * from; where to save; --predict's answers.
 */
async function prepare<S extends FlagSpecs, O, R>(exp: Experiment<S, O, R>, parsedFlags: ParsedFlags<S>, io: Io) {
  const flags = parsedFlags as Record<string, string | boolean | undefined>;
  const port = intFlag('port', flags.port as string | undefined, 0, 65535, 0);
  const options = exp.options(parsedFlags);
  const target = exp.exercise?.(options);
  // A fix's run: its answers first, then the experiment's own run (exercise/fix-run.ts).
  const e = (target ? asFixRun(exp, target) : exp) as Experiment<S, O, unknown>;
  const against: { file: string; label: string; hideComparison?: boolean } | undefined = target
    ? fixExpected(target.spec)
    : exp.expected?.(options);
  const expected = [
    ...(await readExpected(against?.file ?? expectedFile(exp.name))),
    ...(flags.profile ? await readProfileExpected(profileExpectedFile(exp.name)) : []),
  ];
  const saveTo = typeof flags.save === 'string' ? savePath(flags.save, exp.name) : undefined;
  const answers = typeof flags.predict === 'string' ? await collectAnswers(exp, flags.predict, io) : undefined;

  return { port, options, target, e, against, expected, saveTo, answers };
}

/**
 * Runs an experiment as a command and resolves with its exit code. Only this function (called
 * from the experiment's entry file) writes to the terminal.
 */
export async function runExperiment<S extends FlagSpecs, O, R>(
  exp: Experiment<S, O, R>,
  argv: string[] = process.argv.slice(2),
  io: Io = TERMINAL,
): Promise<number> {
  let lab: Lab | undefined;
  let loops: LoopWatch | undefined;
  const progress = new Progress(io.stderr);
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    // A second Ctrl-C (or the same signal relayed by a wrapper such as npx/tsx) must not kill
    // this process before its servers are stopped: stay subscribed and ignore repeats.
    if (stopping) return;
    stopping = true;
    progress.done();
    io.stderr.write(`\n${signal === 'SIGINT' ? 'Interrupted' : 'Stopped'}: stopping ${lab?.size ?? 0} server(s)…\n`);
    void (lab?.close() ?? Promise.resolve()).finally(() =>
      process.exit(signal === 'SIGINT' ? EXIT.sigint : EXIT.sigterm),
    );
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    assertNodeVersion();
    const parsed = parseOrHelp(exp.command, normalizePredictFlag(argv), io);
    if (!parsed) return EXIT.holds;
    if (parsed.flags.list) return listQuestions(exp, parsed.flags.predict, io);
    // Before any other check: on native Windows, nothing a student could fix in the flags helps.
    assertSignals(exp.name);
    const flags = parsed.flags as Record<string, string | boolean | undefined>;
    if (flags.shape && flags.json)
      throw new KitError('KIT_ERR_USAGE', '--shape and --json are two different outputs; pick one');
    const { port, options, target, e, against, expected, saveTo, answers } = await prepare(exp, parsed.flags, io);
    progress.step('checking how busy the machine is');
    const machine = await machineInfo();
    lab = new Lab();
    lab.log = (l) => progress.note(l);
    loops = lab.loops = new LoopWatch();
    const profile = flags.profile ? (lab.profile = new ProfileSession(profileDir(exp.name))) : undefined;
    const ctx = { lab, progress, options, quick: Boolean(flags.quick), port, machine, ...(profile ? { profile } : {}) };
    loops.begin();
    const result = await runWatched(machine, () => e.run(ctx)).finally(() => loops?.end());
    // A fix with a wrong answer was not timed: its expected timing lines read "not measured".
    const wrong = target && !answersRight((result as { answers: FixAnswers }).answers);
    if (profile) Object.assign(profile, { run: loops.run, loads: loops.loads });
    progress.step('stopping servers');
    await lab.close();
    progress.done();
    const loopRows = loops.rows();
    if (profile && !wrong) await showProfiles(profile, progress, io, (l) => (lab = l));

    const format = flags.json ? 'json' : flags.shape ? 'shape' : 'table';
    const loopTable = loopRows.length ? renderLoops(loopRows, colorEnabled(io.stdout)) : undefined;
    const extra = {
      loopTable,
      expectedLabel: against?.label,
      hideComparison: against?.hideComparison,
      notMeasured: wrong ? 'the answers are wrong' : undefined,
    };
    const code = showOutcome(e, result, machine, { expected, format, saveTo, answers, extra }, io);
    return (format === 'table' ? await e.conclude?.(result, options, io) : undefined) ?? code;
  } catch (err) {
    progress.done();
    // Stopping servers on a signal makes the run's pending requests fail; that is not news.
    if (stopping) return EXIT.sigint;
    io.stderr.write(describeError(err) + '\n');
    return exitCodeFor(err);
  } finally {
    await lab?.close();
    loops?.dispose();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
