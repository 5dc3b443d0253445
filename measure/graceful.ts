/**
 * Lesson 4 · graceful: does draining a replica matter?
 *
 * 3 replicas behind the balancer. Load on /fast (8 connections) or /slow-async?ms=500
 * (24 connections: about 8 requests in flight per replica); a second into the measured load, app3
 * gets SIGTERM. Graceful: it drains (stops accepting, finishes its requests, exits). Abrupt: the
 * replicas run with --abrupt and exit at once. Each case is repeated (3 runs; 1 with --quick).
 * The replica's own stop lines give the requests in flight and cut; the balancer's retry lines
 * give the retries.
 */
import { defineCommand, intFlag } from '../lib/cli.ts';
import { KitError } from '../lib/errors.ts';
import { STOP_LINE, stopFields } from '../servers/lib/main.ts';
import { COMMON_FLAGS, runExperiment, type RunContext } from './lib/experiment.ts';
import { runLoad, startLoad } from './lib/load.ts';
import { balancerKind, LB_FLAG, retriesOf, startBalancer, startReplicas, type BalancerKind } from './lib/topology.ts';
import { hints, render, shape, type GracefulResult, type StopCase, type StopMode, type StopRun } from './report/graceful.ts';

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

const REPLICAS = 3;
const CASES: { key: string; route: string; connections: number }[] = [
  { key: 'fast', route: '/fast', connections: 8 },
  { key: 'slow-500ms', route: '/slow-async?ms=500', connections: 24 },
];
const MODES: StopMode[] = ['graceful', 'abrupt'];
/** Longest a stopped replica may take to exit (its drain deadline is 5 s), ms. */
const EXIT_WAIT_MS = 10_000;

async function stopOnce(ctx: RunContext<Options>, route: string, connections: number, mode: StopMode, label: string): Promise<StopRun> {
  const { lab, progress, options, quick, port } = ctx;
  const durationS = quick ? 3 : 4;
  const stopAtS = 1;
  progress.step(`${label}: starting ${REPLICAS} replicas${mode === 'abrupt' ? ' (--abrupt)' : ''} and ${options.lb}`);
  const replicas = await startReplicas(lab, REPLICAS, mode === 'abrupt' ? ['--abrupt'] : []);
  const victim = replicas.at(-1)!;
  const lb = await startBalancer(lab, options.lb, 'round-robin', replicas, port);
  progress.step(`${label}: warm-up`);
  await runLoad({ url: `${lb.url}/fast`, connections: 8, durationS: 1 });
  progress.step(`${label}: ${route} with ${connections} connections for ${durationS} s, SIGTERM to ${victim.name} at second ${stopAtS}`);
  const load = startLoad({ url: `${lb.url}${route}`, connections, durationS });
  const timer = setTimeout(() => victim.proc.signal('SIGTERM'), stopAtS * 1000);
  let result;
  try {
    result = await load.result;
  } finally {
    clearTimeout(timer);
  }
  const exited = await Promise.race([victim.proc.closed.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), EXIT_WAIT_MS).unref())]);
  if (!exited) throw new KitError('KIT_ERR_WAIT_TIMEOUT', `${victim.name} did not exit within ${EXIT_WAIT_MS} ms of SIGTERM`);
  const fields = victim.proc.lines.map((l) => STOP_LINE.exec(l)).filter((m) => m !== null).map((m) => ({ kind: m[1]!, n: stopFields(m[2]!) }));
  const first = fields.find((f) => f.kind === 'graceful' || f.kind === 'abrupt');
  const end = fields.find((f) => f.kind === 'drained' || f.kind === 'abrupt');
  if (!first || !end) throw new KitError('KIT_ERR_REQUEST', `${victim.name} printed no stop lines; it said: ${victim.proc.lines.slice(-3).join(' | ')}`);
  const retries = await retriesOf(lb);
  await lab.stop(lb);
  await Promise.all(replicas.map((r) => lab.stop(r.proc)));
  return {
    inFlight: first.n['in-flight'] ?? 0,
    cut: end.n.cut ?? 0,
    retried: retries.total,
    clientErrors: result.counts.non2xx + result.counts.errors,
    p99: result.latency.p99,
    max: result.latency.max,
    requests: result.counts.completed,
  };
}

async function run(ctx: RunContext<Options>): Promise<GracefulResult> {
  const cases: StopCase[] = [];
  const total = CASES.length * MODES.length * ctx.options.runs;
  let n = 0;
  for (const c of CASES) {
    for (const mode of MODES) {
      const runs: StopRun[] = [];
      for (let i = 0; i < ctx.options.runs; i++) runs.push(await stopOnce(ctx, c.route, c.connections, mode, `${++n}/${total} ${c.route} ${mode}`));
      cases.push({ ...c, mode, runs });
    }
  }
  return { machine: ctx.machine, balancer: ctx.options.lb, victim: `app${REPLICAS}`, durationS: ctx.quick ? 3 : 4, stopAtS: 1, cases };
}

process.exitCode = await runExperiment({
  name: 'graceful',
  command,
  options: (flags) => ({ lb: balancerKind(flags.lb), runs: intFlag('runs', flags.runs as string | undefined, 1, 9, flags.quick ? 1 : 3) }),
  run,
  report: { render, shape, hints },
});
