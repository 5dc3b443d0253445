/**
 * The tally behind measure/fidelity.ts: per experiment, how many runs held their shape and which
 * expected lines failed how often. Pure, apart from the tally each call fills.
 */
import { machineWasBusy, type MachineInfo } from '../../../results/report/format.ts';
import { compareShape } from '../../../results/report/shape.ts';

export interface Tally {
  runs: number;
  held: number;
  /** Runs that did not finish (exit 3): a server did not start, a request failed. */
  errors: number;
  /** Expected line → how many runs did not hold it, with the last value seen instead. */
  failed: Record<string, { count: number; last: string }>;
  seconds: number[];
  /** Runs during which other programs kept the cores busy (the run's own caveat), and how many of them did not hold. */
  busy: number;
  busyNotHeld: number;
}

export interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Errors that say this machine cannot run the kit as installed (a native module built for another
 * Node, a Node too old): every later run would fail the same way, so fidelity stops at the first.
 */
const SETUP_ERRORS = ['KIT_ERR_NATIVE_BUILD', 'KIT_ERR_NODE_TOO_OLD'] as const;

/** The run's setup error (its code and message, from the coded `error KIT_ERR_…: …` line on stderr), if it stopped on one. */
export function setupError(outcome: Outcome): { code: (typeof SETUP_ERRORS)[number]; message: string } | undefined {
  for (const l of outcome.stderr.split('\n')) {
    const m = /^error (KIT_ERR_[A-Z_]+): (.*)$/.exec(l.trim());
    if (m && (SETUP_ERRORS as readonly string[]).includes(m[1]!))
      return { code: m[1] as (typeof SETUP_ERRORS)[number], message: m[2]! };
  }
  return undefined;
}

/** A tally with nothing counted yet. */
export function newTally(): Tally {
  return { runs: 0, held: 0, errors: 0, failed: {}, seconds: [], busy: 0, busyNotHeld: 0 };
}

/** Turns one run's output into the tally (pure, apart from the tally it fills). */
export function tallyRun(t: Tally, expected: string[], outcome: Outcome, seconds: number): void {
  t.runs++;
  t.seconds.push(seconds);
  let parsed: { shape?: string[]; result?: { machine?: MachineInfo } } | undefined;
  try {
    parsed = JSON.parse(outcome.stdout) as typeof parsed;
  } catch {
    parsed = undefined;
  }
  if (!parsed?.shape) {
    t.errors++;
    const why =
      outcome.stderr
        .trim()
        .split('\n')
        .filter((l) => l.startsWith('error'))
        .at(-1) ?? `exit code ${outcome.code}`;
    const f = (t.failed['(the run failed)'] ??= { count: 0, last: '' });
    f.count++;
    f.last = why;
    return;
  }
  const cmp = compareShape(expected, parsed.shape);
  if (cmp.holds) t.held++;
  const machine = parsed.result?.machine;
  if (machine && machineWasBusy(machine)) {
    t.busy++;
    if (!cmp.holds) t.busyNotHeld++;
  }
  for (const l of cmp.lines) {
    if (l.status === 'held' || l.status === 'not-shown') continue;
    const key = l.expected ?? `(unexpected) ${l.actual}`;
    const f = (t.failed[key] ??= { count: 0, last: '' });
    f.count++;
    f.last = l.actual ?? '(no such line)';
  }
}
