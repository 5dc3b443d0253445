/**
 * Lesson 6 · autoscaling: a fixed closed-loop workload against a cluster whose workers each get a
 * CPU quota (0.25 core by default), first with a fixed single worker, then with the HPA-style
 * autoscaler in the cluster primary (servers/lib/hpa.ts) adding and removing workers.
 *
 * Scenarios, each on a fresh cluster:
 *   fixed-1w-10u   1 worker, 10 users        the baseline p95
 *   fixed-1w-40u   1 worker, 40 users        the same worker, four times the users
 *   auto-40u       1..8 workers, 40 users    the autoscaler adds workers; then, after the load,
 *   auto-80u       1..8 workers, 80 users    removes them once the stabilization window has passed
 * A fixed scenario is the autoscaler held at min = max = 1, so every scenario reports its workers'
 * utilization the same way. Per second: completed requests, p95, errors, workers, and each
 * worker's CPU utilization (CPU time / quota, from process.cpuUsage() in the worker).
 */
import { defineCommand, intFlag } from '../lib/cli.ts';
import { KitError } from '../lib/errors.ts';
import { DEFAULT_HPA, DEFAULT_SYNC_MS } from '../servers/lib/hpa.ts';
import { formatCost } from '../servers/lib/scrypt-cost.ts';
import { SIGNUP_COST } from '../servers/lib/workload-routes.ts';
import { probeOk } from './lib/probe.ts';
import { wallMs } from '../servers/lib/cpu-quota.ts';
import { COMMON_FLAGS, runExperiment, type RunContext } from './lib/experiment.ts';
import type { Lab } from './lib/lab.ts';
import type { Progress } from './lib/progress.ts';
import { startUsers } from './lib/users.ts';
import { hints, render, shape, steadyWindow, type AutoscaleResult, type Scenario, type ScenarioResult, type SyncSample } from './report/autoscale.ts';

/**
 * The think time is set from what one user iteration costs on this machine, so that 10 users keep
 * one worker's quota TEN_USER_LOAD busy on any laptop, fast or slow (40 users then ask for four
 * times that: about twice what one worker can give). Measured before the scenarios: a few users
 * without think time against one worker with the scenarios' quota (after a 1 s warm-up), and the
 * worker's CPU time before and after. (An unthrottled worker measured about a quarter less per
 * iteration than a throttled one, so the quota matters here.)
 */
const TEN_USER_LOAD = 0.45;
const CALIBRATION = { users: 4, durationS: 3 };

const command = defineCommand({
  usage: 'npx tsx measure/autoscale.ts [flags]',
  summary:
    'Runs a fixed closed-loop workload (virtual users: sign up, then refresh a token and search, with think time) against a ' +
    'cluster whose workers each get a CPU quota: on 1 worker with 10 and 40 users, then with an HPA-style autoscaler ' +
    '(1 to 8 workers) with 40 and 80 users. Shows req/s, p95, workers and CPU per worker over time.',
  flags: {
    ...COMMON_FLAGS,
    'cpu-quota': { type: 'string', valueName: 'cores', description: 'CPU quota per worker', default: '0.25' },
    'quota-mode': { type: 'string', valueName: 'mode', description: 'auto (cgroup if allowed, else the in-process throttle), cgroup or throttle', default: 'auto' },
    'think-ms': {
      type: 'string',
      valueName: 'ms',
      description: `mean think time after each user iteration (default: measured, so that 10 users keep one worker ${TEN_USER_LOAD * 100}% busy)`,
    },
    'window-s': { type: 'string', valueName: 's', description: 'the autoscaler\'s scale-down stabilization window', default: String(DEFAULT_HPA.windowMs / 1000) },
  },
  epilogue:
    'By hand: npx tsx servers/cluster.ts --workers 1 --autoscale, and watch its "autoscale:" lines while you load it.\n' +
    'The controller\'s settings (target 60% of the quota, sync 1 s, window 10 s) are printed with the results.',
});

interface Options {
  quota: string;
  quotaMode: string;
  /** Undefined: scaled to the machine. */
  thinkMs?: number;
  windowS: number;
}

const SCENARIOS: { name: Scenario; users: number; autoscale: boolean }[] = [
  { name: 'fixed-1w-10u', users: 10, autoscale: false },
  { name: 'fixed-1w-40u', users: 40, autoscale: false },
  { name: 'auto-40u', users: 40, autoscale: true },
  { name: 'auto-80u', users: 80, autoscale: true },
];

/** Load lengths, s: fixed scenarios, autoscaled ones (full run / --quick). */
const DURATIONS = { full: { fixed: 20, auto: 36 }, quick: { fixed: 12, auto: 24 } };
/** After the load: how long to wait for the workers to return to min, beyond the window, s. */
const COOL_DOWN_SLACK_S = 10;

/** Mean CPU one user iteration costs a worker here, ms (see TEN_USER_LOAD). */
async function cpuPerIteration(lab: Lab, o: Options & { port: number; signupCost: string }): Promise<number> {
  const server = await lab.start({
    server: 'cluster',
    args: ['--port', String(o.port), '--workers', '1', '--signup-cost', o.signupCost, '--cpu-quota', o.quota, '--quota-mode', o.quotaMode],
  });
  const cpu = async () => (await probeOk(`${server.url}/__worker/cpu`)).body.cpuUs as number;
  await startUsers({ url: server.url, users: CALIBRATION.users, durationS: 1, thinkMs: 0 }).result; // warm-up: JIT
  const before = await cpu();
  const users = await startUsers({ url: server.url, users: CALIBRATION.users, durationS: CALIBRATION.durationS, thinkMs: 0 }).result;
  const after = await cpu();
  await lab.stop(server);
  if (users.errors > 0 || users.iterations === 0) throw new KitError('KIT_ERR_REQUEST', `measuring one user's cost failed: ${users.failures.slice(0, 2).join('; ') || 'no iteration completed'}`);
  return (after - before) / 1000 / users.iterations;
}

/** Think time (ms) at which 10 users with iterations of `iterationMs` CPU load a `quota`-core worker TEN_USER_LOAD busy. */
function thinkFor(iterationMs: number, quota: number): number {
  return Math.round(Math.min(10_000, Math.max(500, (10 * iterationMs) / (TEN_USER_LOAD * quota))) / 10) * 10;
}

type AutoscaleMessage = {
  event: 'autoscale';
  at: number;
  current: number;
  desired: number;
  averageUtilization?: number;
  reason: string;
  workers: { pid: number; ready: boolean; utilization?: number }[];
  retiring: number[];
};
const isAutoscale = (m: any): m is AutoscaleMessage => m?.event === 'autoscale';

async function runScenario(
  lab: Lab,
  progress: Progress,
  s: (typeof SCENARIOS)[number],
  o: Options & { thinkMs: number; loadS: number; port: number; signupCost: string },
): Promise<ScenarioResult> {
  const scaling = s.autoscale ? ['--window-s', String(o.windowS)] : ['--min', '1', '--max', '1'];
  progress.step(`${s.name}: starting the cluster (1 worker${s.autoscale ? ', autoscaled' : ''})`);
  const server = await lab.start({
    server: 'cluster',
    args: ['--port', String(o.port), '--workers', '1', '--autoscale', ...scaling, '--cpu-quota', o.quota, '--quota-mode', o.quotaMode, '--signup-cost', o.signupCost],
    ipc: true,
  });
  const quotaLine = server.lines.find((l) => l.startsWith('cpu quota:')) ?? '';
  const from = server.messageCount;
  const start = wallMs();
  let workersNow = 1;
  const users = startUsers({
    url: server.url,
    users: s.users,
    durationS: o.loadS,
    thinkMs: o.thinkMs,
    steadyFromS: steadyWindow({ loadS: o.loadS, autoscale: s.autoscale })[0],
    onSecond: (sec) => progress.step(`${s.name}: ${s.users} users, second ${sec.second + 1} of ${o.loadS}: ${sec.completed} req/s, p95 ${sec.p95.toFixed(0)} ms, ${workersNow} worker(s)`),
  });
  const watcher = setInterval(() => {
    const last = server.messagesFrom(from).filter(isAutoscale).at(-1);
    if (last) workersNow = last.desired;
  }, 250);
  let workload;
  try {
    workload = await users.result;
  } finally {
    clearInterval(watcher);
  }
  const loadEndS = (wallMs() - start) / 1000;

  // After the load: an autoscaled cluster should return to min once the window has passed.
  let backToMinS: number | undefined;
  if (s.autoscale) {
    const deadlineS = loadEndS + o.windowS + COOL_DOWN_SLACK_S;
    progress.step(`${s.name}: load over; waiting up to ${Math.round(deadlineS - loadEndS)} s for the workers to return to ${DEFAULT_HPA.min}`);
    try {
      await server.waitForMessage(
        (m): m is AutoscaleMessage => isAutoscale(m) && (m.at - start) / 1000 > loadEndS && m.current + m.retiring.length <= DEFAULT_HPA.min && m.desired <= DEFAULT_HPA.min,
        (deadlineS - loadEndS) * 1000,
        from,
      );
      backToMinS = (wallMs() - start) / 1000 - loadEndS;
    } catch (err) {
      if (!(err instanceof KitError && err.code === 'KIT_ERR_WAIT_TIMEOUT')) throw err;
    }
  }
  const syncs: SyncSample[] = server
    .messagesFrom(from)
    .filter(isAutoscale)
    .map((m) => ({
      t: Math.round((m.at - start)) / 1000,
      workers: m.current,
      alive: m.desired + m.retiring.length,
      desired: m.desired,
      retiring: m.retiring.length,
      reason: m.reason,
      ...(m.averageUtilization !== undefined ? { average: m.averageUtilization } : {}),
      perWorker: m.workers.map((w) => ({ pid: w.pid, utilization: w.utilization ?? null })),
    }));
  await lab.stop(server);
  return {
    name: s.name,
    users: s.users,
    autoscale: s.autoscale,
    loadS: o.loadS,
    loadEndS,
    quotaLine,
    workload,
    syncs,
    ...(backToMinS !== undefined ? { backToMinS } : {}),
  };
}

async function run({ lab, progress, options, quick, port, machine }: RunContext<Options>): Promise<AutoscaleResult> {
  progress.step(`measuring what one user iteration costs here (${CALIBRATION.users} users, no think time, ${CALIBRATION.durationS} s)`);
  const iterationMs = await cpuPerIteration(lab, { ...options, port, signupCost: formatCost(SIGNUP_COST) });
  const thinkMs = options.thinkMs ?? thinkFor(iterationMs, Number(options.quota));
  const durations = quick ? DURATIONS.quick : DURATIONS.full;
  const scenarios: ScenarioResult[] = [];
  for (const s of SCENARIOS) {
    const loadS = s.autoscale ? durations.auto : durations.fixed;
    scenarios.push(await runScenario(lab, progress, s, { ...options, thinkMs, loadS, port, signupCost: formatCost(SIGNUP_COST) }));
  }
  return {
    machine,
    quota: Number(options.quota),
    quotaLine: scenarios[0]?.quotaLine ?? '',
    thinkMs,
    signupCost: formatCost(SIGNUP_COST),
    iterationCpuMs: Math.round(iterationMs * 10) / 10,
    thinkScaled: options.thinkMs === undefined,
    hpa: { ...DEFAULT_HPA, windowMs: options.windowS * 1000, syncMs: DEFAULT_SYNC_MS },
    scenarios,
  };
}

process.exitCode = await runExperiment({
  name: 'autoscale',
  command,
  options: (flags): Options => {
    const quota = String(flags['cpu-quota'] ?? '0.25');
    if (!(Number(quota) >= 0.05 && Number(quota) <= 1)) throw new KitError('KIT_ERR_USAGE', `--cpu-quota must be a number of cores from 0.05 to 1; got '${quota}'`);
    const quotaMode = String(flags['quota-mode'] ?? 'auto');
    if (!['auto', 'cgroup', 'throttle'].includes(quotaMode)) throw new KitError('KIT_ERR_USAGE', `--quota-mode must be auto, cgroup or throttle; got '${quotaMode}'`);
    return {
      quota,
      quotaMode,
      ...(flags['think-ms'] !== undefined ? { thinkMs: intFlag('think-ms', flags['think-ms'] as string, 100, 10_000, 0) } : {}),
      windowS: intFlag('window-s', flags['window-s'] as string | undefined, 0, 60, DEFAULT_HPA.windowMs / 1000),
    };
  },
  run,
  report: { render, shape, hints },
});
