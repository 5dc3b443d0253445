/**
 * Shared test helpers: run a script as a real process (or an experiment in this one), find a process's children, check that
 * pids are gone (polling against a deadline), and fail a test file on any process warning.
 */
import { findPostgres } from '../servers/lib/state/postgres-binary.ts';
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import net from 'node:net';
import path from 'node:path';
import { after, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { expectedFile, ROOT } from '../measure/lib/harness/paths.ts';
import { compareShape, NOT_SHOWN_PREFIX, NOTE_PREFIX, parseExpected } from '../results/report/shape.ts';
import { pidAlive, waitUntilGone } from '../lib/terminate.ts';
import { allStats, readStat } from '../lib/proc.ts';
import { findNginx } from '../servers/lib/balancer/nginx-config.ts';
import { findRedis } from '../servers/lib/state/redis-binary.ts';
import { runMain, type Main } from '../lib/entry.ts';
import { serverBuild, serverCommand } from '../measure/lib/process/bundle.ts';
import type { BalancerKind } from '../measure/lib/process/topology.ts';

export { ROOT };

/** Every warning this process has emitted, from one listener however many files share the process. */
let warnings: string[] | undefined;

/**
 * Fails the file (in an after hook) if the process emitted any warning while its tests ran. The
 * unit tests share one process (test/run-unit.ts), so one listener serves every file there, and
 * a warning fails the file whose after hook comes next.
 */
export function failOnWarnings(): void {
  if (!warnings) {
    const seen: string[] = (warnings = []);
    process.on('warning', (w: Error) => {
      // test/unit/throttle-pause.test.ts uses t.mock.timers knowingly; Node 20 to 22 call it
      // experimental. The warning is emitted on a later tick, so it reached an after hook only when
      // a later file's test waited on I/O (verify-exercise.test.ts): left out, not raced.
      if (w.name === 'ExperimentalWarning' && w.message.startsWith('The MockTimers API')) return;
      seen.push(`${w.name}: ${w.message}`);
    });
  }
  const seen = warnings;
  after(() => {
    assert.deepEqual(seen.splice(0), [], 'process warnings were emitted');
  });
}

export interface ScriptRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** The servers' bundle, built once per test file (see measure/lib/process/bundle.ts). */
let build: Promise<string | undefined> | undefined;

/**
 * Runs a script from the project root and collects its output: a lesson server (`servers/<name>.ts`)
 * from its bundle, as the experiments start it, which halves its start-up (0.4 s against 0.76 s
 * through tsx for a usage error, measured here); any other script through `node --import tsx`.
 */
export async function runScript(
  file: string,
  args: string[] = [],
  env: Record<string, string> = {},
  timeoutMs = 120_000,
): Promise<ScriptRun> {
  const server = /^servers\/([a-z-]+)\.ts$/.exec(file)?.[1];
  const command = server
    ? serverCommand(server, await (build ??= serverBuild()))
    : ['--import', 'tsx', path.join(ROOT, file)];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...command, ...args], {
      cwd: ROOT,
      env: { ...process.env, NO_COLOR: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', reject);
    // 'close', not 'exit': at 'exit' the last of stdout and stderr may not have been read yet, and
    // under load a usage error's line went missing (1 of 16 sim/run.ts runs started together).
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** How long an owned process has to end after SIGTERM before it gets SIGKILL, ms. */
const OWNED_GRACE_MS = 5000;

/**
 * Spawns `command` owned by test `t`: when the test ends, passed or failed, a process still running
 * gets SIGTERM (the kit's scripts then stop their servers), and SIGKILL after OWNED_GRACE_MS; the
 * test's end waits for it. A test that fails half-way thus leaves nothing running.
 */
export function spawnOwned(t: TestContext, command: string, args: string[], options: SpawnOptions = {}): ChildProcess {
  const child = spawn(command, args, options);
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  t.after(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), OWNED_GRACE_MS);
    await closed;
    clearTimeout(timer);
  });
  return child;
}

/** `node --import tsx <script> ...args` from the project root, owned by test `t` (spawnOwned), output piped, without colour. */
export function spawnScript(t: TestContext, script: string, args: string[] = []): ChildProcess {
  return spawnOwned(t, process.execPath, ['--import', 'tsx', path.join(ROOT, script), ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NO_COLOR: '1' },
  });
}

/**
 * `--save <class folder>/<student>` (an experiment or a lesson then writes <experiment>.json there)
 * when `make test-all` collects the end-to-end runs of both tiers for the class roll-up's test
 * (NSL_CLASS_DIR, set by the Makefile; test/e2e/class-rollup.test.ts reads it last); nothing
 * otherwise. The "student" says how the run was made (e.g. the balancer it went through).
 */
export function classSave(student: string): string[] {
  const dir = process.env.NSL_CLASS_DIR;
  return dir ? ['--save', path.join(dir, student)] : [];
}

/**
 * Where a test writes a screenshot named `name` (`rollup.png`): the folder NSL_SCREENSHOTS names
 * (`make screenshots` sets it to docs/, so the README's pictures are taken by the tests), else the
 * temporary folder, where a failing browser test's last screen can be looked at.
 */
export function screenshotPath(name: string): string {
  return path.join(process.env.NSL_SCREENSHOTS || os.tmpdir(), name);
}

/** An Io whose stdout and stderr are collected into `out`. */
export function collector() {
  const out = { stdout: '', stderr: '' };
  const io = {
    stdout: { write: (s: string) => (out.stdout += s) },
    stderr: { write: (s: string) => (out.stderr += s) },
  };
  return { out, io };
}

/**
 * Runs a script's exported `main` in this process, as the script would run it (errors become one
 * coded line and their exit code), with its output collected: for flag and help checks that need
 * no process of their own.
 */
export async function runMainInProcess(main: Main, args: string[]): Promise<ScriptRun> {
  const { out, io } = collector();
  const code = await runMain(main, args, io);
  return { code, signal: null, ...out };
}

/** Runs experiment `name` in this process, as `measure/<name>.ts ...args` would, output collected. */
export async function runInProcess(name: string, args: string[]): Promise<ScriptRun> {
  const { out, io } = collector();
  // Imported here: most test files never run an experiment in-process.
  const { runExperiment } = await import('../measure/lib/harness/experiment.ts');
  const { loadExperiment } = await import('../measure/lib/harness/experiments.ts');
  const code = await runExperiment(await loadExperiment(name), args, io);
  return { code, signal: null, ...out };
}

/**
 * Runs experiment `name` in this process for a call that must stop before it starts anything:
 * `--help` (exit 0) or a usage mistake (exit 2). Any other exit, or a "started" progress line,
 * means that the experiment ran, which a unit test must not do (unit test files run side by side,
 * and a run would share the cores with them): the test fails, saying so.
 */
export async function usageInProcess(name: string, args: string[]): Promise<ScriptRun> {
  const r = await runInProcess(name, args);
  const stopped = r.code === 2 || (r.code === 0 && (args.includes('--help') || args.includes('--list')));
  assert.ok(
    stopped && !/^started /m.test(r.stderr),
    `${name} ${args.join(' ')} ran (exit ${r.code}); a unit test may only ask for --help or --list or make a usage mistake:\n${r.stderr}`,
  );
  return r;
}

/**
 * Runs experiment `name` in this process as native Windows would (NSL_PLATFORM=win32, for the
 * call only), with `args` that must hold a usage mistake checked after the platform: the run
 * must stop at the platform check (exit 3, KIT_ERR_NEEDS_WSL), and without that check it stops at
 * the mistake (exit 2) and the caller's assertions fail; either way nothing is started.
 */
export async function onWindowsInProcess(name: string, args: string[]): Promise<ScriptRun> {
  const saved = process.env.NSL_PLATFORM;
  process.env.NSL_PLATFORM = 'win32';
  try {
    const r = await runInProcess(name, args);
    assert.ok(
      (r.code === 2 || r.code === 3) && !/^started /m.test(r.stderr),
      `${name} ${args.join(' ')} ran (exit ${r.code}); a unit test may not start an experiment:\n${r.stderr}`,
    );
    return r;
  } finally {
    if (saved === undefined) delete process.env.NSL_PLATFORM;
    else process.env.NSL_PLATFORM = saved;
  }
}

/**
 * For an end-to-end run of experiment `name`: `--predict <file>` choosing the first choice of every
 * question (a temporary file, removed when test `t` ends), and how many questions there are; no
 * arguments when the experiment has no questions.
 */
export async function predictFor(t: TestContext, name: string): Promise<{ args: string[]; questions: number }> {
  const { loadExperiment } = await import('../measure/lib/harness/experiments.ts');
  const questions = (await loadExperiment(name)).report.predictions ?? [];
  if (!questions.length) return { args: [], questions: 0 };
  const dir = mkdtempSync(path.join(os.tmpdir(), 'nsl-answers-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify(Object.fromEntries(questions.map((q) => [q.id, 1]))));
  return { args: ['--predict', file], questions: questions.length };
}

/** After a --shape run with predictFor's arguments: every prediction printed (on stderr) and settled by a measure of the run. */
export function assertPredicted(stderr: string, questions: number): void {
  if (!questions) return;
  assert.match(stderr, new RegExp(`Your predictions: \\d+ of ${questions} right`));
  assert.doesNotMatch(stderr, /not in this run/);
}

/** Pids whose parent is `pid` (Linux /proc). */
export function childrenOf(pid: number): number[] {
  return [...allStats().values()].filter((st) => st.ppid === pid).map((st) => st.pid);
}

/** CPU time (user + system) `pid` has used, in clock ticks (usually 10 ms each; Linux /proc). Throws if it is gone. */
export function cpuTicks(pid: number): number {
  const st = readStat(pid);
  if (!st) throw new Error(`no process ${pid}`);
  return st.ownTicks;
}

/** Asserts that every pid is gone within `deadlineMs` (zombies count as gone). */
export async function assertAllGone(pids: number[], deadlineMs = 5000): Promise<void> {
  const gone = await waitUntilGone(() => pids.some(pidAlive), deadlineMs);
  assert.ok(gone, `still alive after ${deadlineMs} ms: ${pids.filter(pidAlive).join(', ')}`);
}

/** True when nothing listens on 127.0.0.1:`port` (we can bind it ourselves). */
export function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/** Holds a port on 127.0.0.1 until `release()` is called. */
export async function holdPort(): Promise<{ port: number; release: () => Promise<void> }> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  return { port, release: () => new Promise((r) => s.close(() => r())) };
}

/** The lessons whose every experiment test/e2e/lessons-4-6.test.ts runs, through both balancers. */
export const LESSONS_RUN_WHOLE = [4, 5, 6];

/**
 * Asserts that a --shape output is exactly the expected file's lines, in order; comments allowed
 * beside them are the run's own notes (`# note:` when other programs kept the machine busy,
 * `# not shown here:`), which a healthy run on a busy machine prints and `diff` would show.
 */
export function assertShapeOutput(stdout: string, experiments: string | string[], context = ''): void {
  const names = Array.isArray(experiments) ? experiments : [experiments];
  const comments = stdout.split('\n').filter((l) => l.startsWith('#'));
  for (const c of comments)
    assert.ok(
      c.startsWith(NOTE_PREFIX) || c.startsWith(NOT_SHOWN_PREFIX),
      `an unexpected comment in the shape output: ${c}`,
    );
  assert.deepEqual(
    parseExpected(stdout),
    names.flatMap((n) => expectedShape(n)),
    context,
  );
}

/** The lines of expected-output/<experiment>.txt. */
export function expectedShape(experiment: string): string[] {
  return parseExpected(readFileSync(expectedFile(experiment), 'utf8'));
}

/** The expected lines that `actual` fails (a different verdict), for shape-rule tests. */
export function failedLines(expected: string[], actual: string[]): string[] {
  return compareShape(expected, actual)
    .lines.filter((l) => l.status === 'failed')
    .map((l) => l.expected!);
}

/**
 * The reason to skip a test that needs `tool`, or false when it can run. On a student's machine a
 * missing tool skips the test with `reason`. Where NSL_REQUIRE_TOOLS=1 (.ci/run sets it, since it
 * installs every tool), a missing tool throws instead, naming it: at a file's top level that fails
 * the file, in a test the test, so a green CI cannot have skipped the tool's tests quietly.
 */
export function toolSkip(tool: string, reason: string | false, env: NodeJS.ProcessEnv = process.env): string | false {
  if (reason && env.NSL_REQUIRE_TOOLS === '1')
    throw new Error(`${tool} is required here (NSL_REQUIRE_TOOLS=1) but it is missing: ${reason}`);
  return reason;
}

/**
 * Why tests that run nginx, redis-server or PostgreSQL skip here: the reason, or false when the binary is
 * installed. .ci/run installs them all and sets NSL_REQUIRE_TOOLS, so in CI a missing one fails (toolSkip).
 */
export function skipUnless(binary: 'nginx' | 'redis-server' | 'postgresql'): string | false {
  try {
    if (binary === 'nginx') findNginx();
    else if (binary === 'postgresql') findPostgres();
    else findRedis();
    return false;
  } catch {
    return toolSkip(
      binary,
      `${binary} is not installed (Debian/Ubuntu: apt-get install ${binary}); .ci/run installs it`,
    );
  }
}

/** Both balancers, each with why its tests skip here (nginx where it is not installed), for tests that run once per balancer. */
export function balancersToTest(): { kind: BalancerKind; skip: string | false }[] {
  return [
    { kind: 'builtin', skip: false },
    { kind: 'nginx', skip: skipUnless('nginx') },
  ];
}
