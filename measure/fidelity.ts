/**
 * Fidelity: does every experiment hold its shape in every run? (`make fidelity`)
 *
 * Runs each experiment (all of them, or those named) `--runs` times, in rounds (one run of each
 * per round, so a noisy minute does not land on one experiment only), each as its own process with
 * `--json`, and counts per experiment how many runs held and which lines failed how often. Every
 * run's JSON is kept in `--out` for a closer look; `summary.json` there holds the tally.
 * Exit 0 when every run held, 1 when one did not, 2 on a usage error, 130 when interrupted; a run
 * that stopped on a setup error (lib/class/fidelity.ts SETUP_ERRORS) ends it at once with that error.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { defineCommand, intFlag } from '../lib/cli.ts';
import { EXIT, KitError } from '../lib/errors.ts';
import { commandMain, runIfMain } from '../lib/entry.ts';
import { LESSONS } from './lib/harness/lessons.ts';
import { balancedExperiments } from './lib/harness/experiments.ts';
import { colorEnabled, makeChalk, makeTable } from '../results/report/format.ts';
import { expectedFile, ROOT } from './lib/harness/paths.ts';
import { Progress } from './lib/harness/progress.ts';
import { SignalRelay } from './lib/harness/relay.ts';
import { readExpected } from './lib/harness/expected.ts';
import { newTally, setupError, tallyRun, type Outcome, type Tally } from './lib/class/fidelity.ts';
import { assertSignals } from '../lib/platform.ts';

const ALL = LESSONS.flatMap((l) => l.experiments);

const command = defineCommand({
  usage: 'npx tsx measure/fidelity.ts [--runs <n>] [--full] [--only <a,b>] [--lb builtin|nginx] [--out <dir>]',
  summary:
    'Runs every experiment (or those given with --only) again and again, --quick unless --full, and counts how many runs held ' +
    'their shape and which lines failed. A line that does not hold in every healthy run is a bug in the kit, not noise to ignore.',
  flags: {
    runs: { type: 'string', valueName: 'n', description: 'runs of each experiment', default: '20' },
    full: { type: 'boolean', description: 'the full workload instead of --quick' },
    only: { type: 'string', valueName: 'a,b', description: `experiments to run, comma-separated (${ALL.join(', ')})` },
    lb: { type: 'string', valueName: 'builtin|nginx', description: 'load balancer for the experiments that have one' },
    out: {
      type: 'string',
      valueName: 'dir',
      description: "where each run's JSON goes (default: a new folder under the OS temp folder)",
    },
  },
  epilogue: 'Example: npx tsx measure/fidelity.ts --runs 5 --only blocking,pool   (make fidelity ARGS="--runs 5")',
});

function runOnce(name: string, args: string[], relay: SignalRelay): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'measure', `${name}.ts`), ...args], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NO_COLOR: '1' },
    });
    relay.track(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.once('error', reject);
    child.once('close', (code, signal) => {
      resolve({ code: code ?? (signal === 'SIGTERM' ? EXIT.sigterm : EXIT.sigint), stdout, stderr });
    });
  });
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)]! : 0;
}

/**
 * Runs experiment `name` once (round `round`), keeps its JSON (or, when it printed none, its stderr)
 * in `dir`, and counts it in `tally`. True when the run was interrupted. Throws the run's own error
 * when it stopped before measuring anything (a missing program, say): every run would.
 */
async function runAndTally(
  r: { name: string; round: number; args: string[]; dir: string; expected: string[]; tally: Tally },
  relay: SignalRelay,
  progress: Progress,
): Promise<boolean> {
  const file = (ext: string) => path.join(r.dir, `${r.name}-${String(r.round).padStart(2, '0')}${ext}`);
  const t0 = performance.now();
  const outcome = await runOnce(r.name, r.args, relay);
  if (relay.interrupted || outcome.code === EXIT.sigint || outcome.code === EXIT.sigterm) return true;
  const secs = (performance.now() - t0) / 1000;
  writeFileSync(file('.json'), outcome.stdout);
  if (outcome.stdout.trim() === '') writeFileSync(file('.stderr.txt'), outcome.stderr);
  const setup = setupError(outcome);
  if (setup) {
    progress.done();
    relay.dispose();
    throw new KitError(
      setup.code,
      `${r.name} (round ${r.round}) stopped before measuring anything, and every run would: ${setup.message}`,
    );
  }
  const before = r.tally.held;
  tallyRun(r.tally, r.expected, outcome, secs);
  if (r.tally.held === before) progress.note(`round ${r.round}: ${r.name} did not hold (${file('.json')})`);
  return false;
}

/** The summary: per experiment, runs held, the median run's length, busy runs, and each line that did not hold with its count and its last wrong form. */
function summaryTable(tallies: Map<string, Tally>, color: boolean): ReturnType<typeof makeTable> {
  const c = makeChalk(color);
  const table = makeTable(
    ['experiment', 'held', 'median run', 'busy machine\n(did not hold)', 'lines that did not hold (runs)'],
    ['left', 'right', 'right', 'right', 'left'],
  );
  for (const [name, t] of tallies) {
    const lines = Object.entries(t.failed)
      .map(([l, f]) => `${l}  ×${f.count} (last: ${f.last})`)
      .join('\n');
    const held = `${t.held}/${t.runs}`;
    table.push([
      name,
      t.held === t.runs ? c.green(held) : c.red(held),
      `${median(t.seconds).toFixed(1)} s`,
      t.busy ? `${t.busy} (${t.busyNotHeld})` : '0',
      lines || '',
    ]);
  }
  return table;
}

/** The command: exit 0 when every run of every experiment held, 1 otherwise; throws KIT_ERR_USAGE. */
export const main = commandMain(command, async (parsed, io) => {
  const { full, only, lb, out } = parsed.flags;
  assertSignals('fidelity');
  const runs = intFlag('runs', parsed.flags.runs, 1, 1000, 20);
  const names =
    only === undefined
      ? ALL
      : only
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean);
  for (const n of names) {
    if (!ALL.includes(n))
      throw new KitError('KIT_ERR_USAGE', `--only: no experiment '${n}'; the experiments are ${ALL.join(', ')}`);
  }
  if (lb !== undefined && lb !== 'builtin' && lb !== 'nginx')
    throw new KitError('KIT_ERR_USAGE', `--lb is builtin or nginx; got '${lb}'`);
  const dir = out ?? path.join(os.tmpdir(), `nsl-fidelity-${new Date().toISOString().replace(/[:.]/g, '-')}`);
  mkdirSync(dir, { recursive: true });
  const expected = new Map<string, string[]>();
  for (const n of names) expected.set(n, await readExpected(expectedFile(n)));

  const balanced = await balancedExperiments(names);
  const relay = new SignalRelay();

  const progress = new Progress(io.stderr);
  const tallies = new Map<string, Tally>(names.map((n) => [n, newTally()]));
  io.stderr.write(
    `${runs} ${full ? 'full' : '--quick'} run(s) of ${names.length} experiment(s); each run's JSON goes to ${dir}\n`,
  );
  const started = performance.now();
  for (let round = 1; round <= runs && !relay.interrupted; round++) {
    for (const name of names) {
      if (relay.interrupted) break;
      const t = tallies.get(name)!;
      progress.step(`round ${round}/${runs} · ${name} (held so far: ${t.held}/${t.runs})`);
      const args = ['--json', ...(full ? [] : ['--quick']), ...(lb && balanced.has(name) ? ['--lb', lb] : [])];
      const stopped = await runAndTally(
        { name, round, args, dir, expected: expected.get(name)!, tally: t },
        relay,
        progress,
      );
      if (stopped) break;
    }
  }
  progress.done();
  relay.dispose();

  const table = summaryTable(tallies, colorEnabled(io.stdout));
  const c = makeChalk(colorEnabled(io.stdout));
  const mins = ((performance.now() - started) / 60_000).toFixed(1);
  io.stdout.write(
    `${c.bold(`Fidelity: ${full ? 'full' : '--quick'} runs, ${os.availableParallelism()} cores, Node ${process.versions.node}, ${mins} min`)}\n${table.toString()}\n`,
  );
  writeFileSync(
    path.join(dir, 'summary.json'),
    JSON.stringify(
      { full: Boolean(full), runs, node: process.versions.node, tallies: Object.fromEntries(tallies) },
      null,
      2,
    ) + '\n',
  );
  io.stdout.write(
    `busy machine: runs during which other programs kept the cores busy (each says so in its caveats).\nEach run's JSON: ${dir}\n`,
  );
  if (relay.interrupted) return EXIT.sigint;
  return [...tallies.values()].every((t) => t.held === t.runs && t.runs === runs) ? EXIT.holds : EXIT.doesNotHold;
});

await runIfMain(import.meta, main);
