/**
 * Lesson 6 · graceful: does draining a replica matter?
 *
 * 3 replicas behind the balancer. Load on /fast (8 connections) or /slow-async?ms=500
 * (24 connections: about 8 requests in flight per replica); a second into the measured load, app3
 * gets SIGTERM. Graceful: it drains (stops accepting, finishes its requests, exits). Abrupt: the
 * replicas run with --abrupt and exit at once. Each case is repeated (3 runs; 1 with --quick).
 * The replica's own stop lines give the requests in flight and cut; the balancer's retry lines
 * give the retries. A run during which other programs or other virtual machines took CPU is taken
 * again (measure/lib/machine/steady.ts): a /fast p99 is a few ms of waiting for a core, and a steal burst
 * doubled it, which made the two stops look different when only the machine was.
 */
import { defineCommand, intFlag } from '../lib/cli.ts';
import { KitError } from '../lib/errors.ts';
import { STOP_LINE, stopFields } from '../servers/lib/serve/drain.ts';
import { COMMON_FLAGS, defineExperiment, runIfEntry, type RunContext } from './lib/harness/experiment.ts';
import { faultedLoad } from './lib/load/faulted-load.ts';
import { measureSteadily } from './lib/machine/steady.ts';
import { balancerKind, LB_FLAG, type BalancerKind, type Replica } from './lib/process/topology.ts';
import {
  GRACEFUL_SPEC,
  hints,
  render,
  shape,
  type GracefulResult,
  type StopCase,
  type StopMode,
  type StopRun,
} from '../results/graceful/report.ts';
import { measures, predictions } from '../results/graceful/predictions.ts';

const command = defineCommand({
  usage: 'npx tsx measure/graceful.ts [flags]',
  summary:
    'Stops one of three replicas under load, gracefully (drain) and abruptly, for short and for 500 ms requests, and ' +
    'prints what each stop cost: requests in flight, cut, retried, client errors, p99 and max.',
  flags: {
    ...COMMON_FLAGS,
    lb: LB_FLAG,
    runs: { type: 'string', valueName: 'n', description: 'runs per case (default 3; --quick 1)' },
  },
  epilogue: 'Example: npx tsx measure/graceful.ts --lb nginx',
});

interface Options {
  lb: BalancerKind;
  runs: number;
}

const { replicas: REPLICAS, cases: CASES, modes: MODES } = GRACEFUL_SPEC;
/** Longest a stopped replica may take to exit (its drain deadline is 5 s), ms. */
const EXIT_WAIT_MS = 10_000;

/** The stopped replica's own account of its stop: requests in flight at SIGTERM, and cut (its `stop:` lines). */
async function stopLines(victim: Replica): Promise<{ inFlight: number; cut: number }> {
  const exited = await Promise.race([
    victim.proc.closed.then(() => true),
    new Promise<boolean>((r) => setTimeout(() => r(false), EXIT_WAIT_MS).unref()),
  ]);
  if (!exited)
    throw new KitError('KIT_ERR_WAIT_TIMEOUT', `${victim.name} did not exit within ${EXIT_WAIT_MS} ms of SIGTERM`);
  const fields = victim.proc.lines
    .map((l) => STOP_LINE.exec(l))
    .filter((m) => m !== null)
    .map((m) => ({ kind: m[1]!, n: stopFields(m[2]!) }));
  const first = fields.find((f) => f.kind === 'graceful' || f.kind === 'abrupt');
  const end = fields.find((f) => f.kind === 'drained' || f.kind === 'abrupt');
  if (!first || !end)
    throw new KitError(
      'KIT_ERR_REQUEST',
      `${victim.name} printed no stop lines; it said: ${victim.proc.lines.slice(-3).join(' | ')}`,
    );
  return { inFlight: first.n['in-flight'] ?? 0, cut: end.n.cut ?? 0 };
}

async function stopOnce(
  ctx: RunContext<Options>,
  route: string,
  connections: number,
  mode: StopMode,
  label: string,
): Promise<StopRun> {
  const { lab, progress, options, quick, port } = ctx;
  const { load, retries, extra } = await faultedLoad(
    lab,
    progress,
    {
      label: `${label}${mode === 'abrupt' ? ' (--abrupt)' : ''}`,
      replicas: REPLICAS,
      replicaArgs: mode === 'abrupt' ? ['--abrupt'] : [],
      lb: options.lb,
      policy: 'round-robin',
      port,
      warmup: { route: '/fast', connections: 8, seconds: 1 },
      load: { route, connections, durationS: GRACEFUL_SPEC.durationS[quick ? 'quick' : 'full'] },
      fault: { signal: 'SIGTERM', atS: GRACEFUL_SPEC.stopAtS },
    },
    (t) => stopLines(t.victim),
  );
  return {
    ...extra,
    retried: retries.total,
    clientErrors: load.counts.non2xx + load.counts.errors,
    p99: load.latency.p99,
    mean: load.latency.mean,
    max: load.latency.max,
    requests: load.counts.completed,
  };
}

async function run(ctx: RunContext<Options>): Promise<GracefulResult> {
  const cases: StopCase[] = [];
  const total = CASES.length * MODES.length * ctx.options.runs;
  let n = 0;
  for (const c of CASES) {
    for (const mode of MODES) {
      const runs: StopRun[] = [];
      for (let i = 0; i < ctx.options.runs; i++) {
        const label = `${++n}/${total} ${c.route} ${mode}`;
        const { value, busyCores } = await measureSteadily(
          label,
          () => stopOnce(ctx, c.route, c.connections, mode, label),
          { progress: ctx.progress },
        );
        runs.push({ ...value, ...(busyCores !== undefined ? { busyCores } : {}) });
      }
      cases.push({ ...c, mode, runs });
    }
  }
  return {
    machine: ctx.machine,
    balancer: ctx.options.lb,
    victim: `app${REPLICAS}`,
    durationS: GRACEFUL_SPEC.durationS[ctx.quick ? 'quick' : 'full'],
    stopAtS: GRACEFUL_SPEC.stopAtS,
    cases,
  };
}

export const experiment = defineExperiment({
  name: 'graceful',
  command,
  options: (flags) => ({
    lb: balancerKind(flags.lb),
    runs: intFlag('runs', flags.runs, 1, 9, GRACEFUL_SPEC.runs[flags.quick ? 'quick' : 'full']),
  }),
  run,
  report: { render, shape, hints, measures, predictions },
});

await runIfEntry(import.meta, experiment);
