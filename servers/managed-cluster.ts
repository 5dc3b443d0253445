/**
 * The cluster loan server of lessons 6 to 8: lesson 3's cluster (servers/cluster.ts, which shows
 * the idea in one screen) with what running it for real adds: a rolling restart (lesson 6), state
 * shared through SQLite or Redis (lesson 7), a CPU quota per worker and an autoscaler (lesson 8).
 * This file reads the flags and wires the primary's parts together: lib/cluster/supervisor.ts
 * (forking, replacing, retiring workers, on keeper.ts), rolling.ts,
 * autoscaler.ts, quota.ts (lesson 8's CPU quota), worker.ts (a worker),
 * and the messages they exchange with the launcher, messages.ts.
 *
 * Every worker keeps its own loan counter in memory (with --state sqlite or redis, lesson 7, they
 * share one). These paths answer `{ pid, loanCounter }`:
 *   POST /loan                    increments the counter (with {"member": ...}, rate-limited per member)
 *   GET  /status                  reads it (no increment)
 *   GET  /member/verify-blocking  heavy scrypt on this worker's event loop, then reads it
 * and lesson 7's POST /login, GET /me, GET /loans (lib/state/routes.ts).
 *
 * The primary prints its ready line only when every worker is listening. A worker that dies is
 * replaced (once per death, keyed on 'exit'), within a restart budget and with a backoff for
 * workers that die before they listen, so a crash at start-up cannot become a fork loop.
 * SIGTERM/SIGINT to the primary stops all workers; workers exit when the primary's IPC channel
 * closes (Node's cluster does this), so even `kill -9` of the primary leaves no worker behind.
 *
 * To kill a worker for an experiment: send the primary `{ cmd: 'kill-worker', pid? }` over IPC,
 * or SIGUSR2 (kills the oldest worker). Killing uses SIGKILL, so it works even on a worker stuck in
 * scryptSync, which would never answer the IPC disconnect that `worker.kill()` starts with.
 *
 * Rolling restart (`{ cmd: 'rolling-restart' }` over IPC, or SIGHUP): every worker is replaced, one
 * at a time. A new worker is forked and listening before the old one gets SIGTERM; the old one then
 * drains (it stops taking connections, finishes its requests, answers with `Connection: close` so
 * keep-alive clients reconnect to another worker; see serve() in lib/serve/main.ts) and exits without
 * being replaced again. Messages to the launcher: `rolling-restart-step { old, pid }` per worker,
 * then `rolling-restart-done { replaced: [{ old, pid }] }` or `rolling-restart-failed { reason }`.
 *
 * Lesson 8. `--cpu-quota <cores>` holds every worker to a share of a core from the moment it
 * listens (a cgroup, or the in-process throttle whose pauses the primary delivers with SIGSTOP and
 * SIGCONT; lib/cpu/quota.ts), and workers report their CPU time over IPC. `--autoscale` runs the
 * HPA rule (lib/hpa.ts) every `--sync-ms`: the primary forks workers, or retires the newest ones
 * (SIGTERM: they drain and are not replaced), and sends the launcher an `autoscale` message per sync
 * `{ at, current, desired, recommendation, averageUtilization, reason, workers: [{ pid, ready,
 * utilization }], retiring: [pid] }`; it prints a line only when the count changes.
 */
import cluster from 'node:cluster';
import { randomBytes } from 'node:crypto';
import { defineCommand, intFlag } from '../lib/cli.ts';
import { KitError } from '../lib/errors.ts';
import { startAutoscaler } from './lib/cluster/autoscaler.ts';
import { QuotaDelivery } from './lib/cluster/quota.ts';
import { rollingRestart } from './lib/cluster/rolling.ts';
import { Supervisor } from './lib/cluster/supervisor.ts';
import { runWorker } from './lib/cluster/worker.ts';
import { CPU_SAMPLE_MS, quotaMode, QUOTA_PERIOD_MS, QUOTA_PERIOD_RANGE_MS } from './lib/cpu/quota.ts';
import { DEFAULT_HPA, DEFAULT_SYNC_MS, METRIC_WINDOW_SYNCS, validateHpaConfig, type HpaConfig } from '../core/hpa.ts';
import { failStartup, serverFlags } from './lib/serve/main.ts';
import { importFromStudentFile } from './lib/serve/student-file.ts';
import { formatCost, HEAVY_COST, heavyCostFrom, parseCost } from './lib/cpu/scrypt-cost.ts';
import { stateFlags, stateOptions } from './lib/state/routes.ts';
import { SIGNUP_COST } from './lib/cluster/workload-routes.ts';

const spec = defineCommand({
  usage:
    'npx tsx servers/managed-cluster.ts [--port <n>] [--workers <n>] [--state memory|sqlite|redis] [--autoscale [--min <n>] [--max <n>] [--target <%>]] [--cpu-quota <cores>] [flags]',
  summary:
    'The cluster loan server of lessons 6 to 8: a node:cluster primary and N workers sharing one port, each ' +
    'with its own in-memory loan counter (or, with --state sqlite|redis, one shared counter: lesson 7). Killed workers are ' +
    "replaced; SIGHUP replaces them all, one at a time (lesson 6); --autoscale and --cpu-quota are lesson 8's. " +
    "Listens on 127.0.0.1 and prints one ready line once every worker is listening. Lesson 3's is servers/cluster.ts.",
  flags: {
    port: { type: 'string', valueName: 'n', description: 'port to listen on, 0 for any free port', default: '3001' },
    workers: {
      type: 'string',
      valueName: 'n',
      description: 'number of worker processes (1-32; with --autoscale, how many to start with, moved into [min, max])',
      default: '3',
    },
    cost: {
      type: 'string',
      valueName: 'N=..,r=..,p=..',
      description: `scrypt cost of /member/verify-blocking (default ${formatCost(HEAVY_COST)})`,
    },
    'restart-budget': {
      type: 'string',
      valueName: 'n',
      description: 'worker deaths allowed within 30 s before the primary gives up and exits',
      default: '10',
    },
    'crash-at-start': {
      type: 'boolean',
      description: 'workers throw before listening (to see the restart budget work)',
    },
    autoscale: {
      type: 'boolean',
      description: 'lesson 8: the primary adds and removes workers by CPU utilization (HPA rule)',
    },
    min: {
      type: 'string',
      valueName: 'n',
      description: `with --autoscale: fewest workers (default ${DEFAULT_HPA.min})`,
    },
    max: { type: 'string', valueName: 'n', description: `with --autoscale: most workers (default ${DEFAULT_HPA.max})` },
    target: {
      type: 'string',
      valueName: '%',
      description: `with --autoscale: target CPU utilization, % of the quota (default ${DEFAULT_HPA.target * 100})`,
    },
    'sync-ms': {
      type: 'string',
      valueName: 'ms',
      description: `with --autoscale: how often the controller runs (default ${DEFAULT_SYNC_MS})`,
    },
    'window-s': {
      type: 'string',
      valueName: 's',
      description: `with --autoscale: scale-down stabilization window (default ${DEFAULT_HPA.windowMs / 1000})`,
    },
    'cpu-quota': {
      type: 'string',
      valueName: 'cores',
      description: 'CPU quota per worker, 0.05 to 4 cores, or none (default: 0.25 with --autoscale, else none)',
    },
    'quota-mode': {
      type: 'string',
      valueName: 'mode',
      description:
        'how the quota is enforced: auto (cgroup if allowed, else throttle), cgroup, throttle (default: auto)',
    },
    'quota-period-ms': {
      type: 'string',
      valueName: 'ms',
      description: `the quota's period, ${QUOTA_PERIOD_RANGE_MS[0]} to ${QUOTA_PERIOD_RANGE_MS[1]} ms: a worker gets quota × period of CPU per period (default: ${QUOTA_PERIOD_MS}; CFS and Kubernetes use 100)`,
    },
    'signup-cost': {
      type: 'string',
      valueName: 'N=..,r=..,p=..',
      description: `scrypt cost of POST /signup (default ${formatCost(SIGNUP_COST)})`,
    },
    ...stateFlags(),
  },
  epilogue:
    'Routes: POST /loan, GET /status, GET /member/verify-blocking (answer { pid, loanCounter });\n' +
    '        POST /login, GET /me, GET /loans (lesson 7)\n' +
    '        POST /signup, POST /token/refresh, GET /books?q=, GET /work?ms= (lesson 8)\n' +
    'Try: curl -s -X POST 127.0.0.1:3001/loan   (run it a few times: the pid changes)\n' +
    '     kill -USR2 <primary pid>              (kills the oldest worker; watch its replacement)\n' +
    '     kill -HUP <primary pid>               (rolling restart: every worker replaced, one at a time)\n' +
    '     npx tsx servers/managed-cluster.ts --workers 1 --autoscale   (then load it: measure/autoscale.ts does)',
});

/** Lesson 8's flags, checked: the autoscaler's config (undefined without --autoscale) and the quota. */
function scalingOptions(flags: ReturnType<typeof serverFlags<typeof spec.flags>>) {
  const autoscale = Boolean(flags.autoscale);
  for (const f of ['min', 'max', 'target', 'sync-ms', 'window-s'] as const) {
    if (!autoscale && flags[f] !== undefined)
      throw new KitError('KIT_ERR_USAGE', `--${f} only means something with --autoscale`);
  }
  const quotaText = flags['cpu-quota'] ?? (autoscale ? '0.25' : 'none');
  const quota = quotaText === 'none' ? undefined : Number(quotaText);
  if (quota !== undefined && !(quota >= 0.05 && quota <= 4)) {
    throw new KitError(
      'KIT_ERR_USAGE',
      `--cpu-quota must be a number of cores from 0.05 to 4 (or none); got '${quotaText}'`,
    );
  }
  if (flags['quota-mode'] !== undefined && quota === undefined)
    throw new KitError('KIT_ERR_USAGE', '--quota-mode only means something with a --cpu-quota (or --autoscale)');
  if (flags['quota-period-ms'] !== undefined && quota === undefined)
    throw new KitError('KIT_ERR_USAGE', '--quota-period-ms only means something with a --cpu-quota (or --autoscale)');
  const periodMs =
    flags['quota-period-ms'] === undefined
      ? undefined
      : intFlag('quota-period-ms', flags['quota-period-ms'], ...QUOTA_PERIOD_RANGE_MS, QUOTA_PERIOD_MS);
  const mode = quotaMode(flags['quota-mode']);
  let hpa: HpaConfig | undefined;
  if (autoscale) {
    const min = intFlag('min', flags.min, 1, 32, DEFAULT_HPA.min);
    const max = intFlag('max', flags.max, 1, 32, DEFAULT_HPA.max);
    if (max < min) throw new KitError('KIT_ERR_USAGE', `--max (${max}) must be at least --min (${min})`);
    hpa = {
      ...DEFAULT_HPA,
      min,
      max,
      target: intFlag('target', flags.target, 5, 100, DEFAULT_HPA.target * 100) / 100,
      windowMs: intFlag('window-s', flags['window-s'], 0, 3600, DEFAULT_HPA.windowMs / 1000) * 1000,
    };
    validateHpaConfig(hpa);
  }
  // A utilization needs two CPU reports (every CPU_SAMPLE_MS) within a sync period.
  const syncMs = intFlag('sync-ms', flags['sync-ms'], 2 * CPU_SAMPLE_MS, 60_000, DEFAULT_SYNC_MS);
  return { hpa, syncMs, quota, periodMs, mode };
}

async function runPrimary(): Promise<void> {
  const flags = serverFlags(spec);
  const port = intFlag('port', flags.port, 0, 65535, 3001);
  const workers = intFlag('workers', flags.workers, 1, 32, 3);
  const budget = intFlag('restart-budget', flags['restart-budget'], 0, 1000, 10);
  const costText = flags.cost ?? process.env.LAB_SCRYPT_COST;
  const state = stateOptions(flags);
  // The student's limiter file, loaded once here, so that a mistake in it is one line, not a
  // worker failing at start-up again and again.
  if (state.limiterFile !== undefined) await importFromStudentFile(state.limiterFile, 'hit', 'function');
  heavyCostFrom(costText); // fail here, once, rather than in every worker
  const signupCost = flags['signup-cost'] ?? formatCost(SIGNUP_COST);
  parseCost(signupCost);
  const scaling = scalingOptions(flags);
  const { hpa } = scaling;
  const initial = hpa ? Math.min(hpa.max, Math.max(hpa.min, workers)) : workers;
  // CPU reports are kept for the autoscaler's window, and a period more.
  const quota = new QuotaDelivery(
    scaling.quota,
    scaling.mode,
    (METRIC_WINDOW_SYNCS + 1) * scaling.syncMs,
    scaling.periodMs,
  );
  if (scaling.mode === 'cgroup' && !quota.cgroup.ok) {
    throw new KitError(
      'KIT_ERR_USAGE',
      `--quota-mode cgroup: ${quota.cgroup.reason}`,
      'use --quota-mode throttle (or auto), which needs no permission',
    );
  }
  const supervisor = new Supervisor({
    port,
    initial,
    budget,
    autoscaled: hpa !== undefined,
    quota,
    workerEnv: {
      LAB_SCRYPT_COST: costText ?? '',
      LAB_CRASH_AT_START: flags['crash-at-start'] ? '1' : '',
      LAB_LIFELINE: '',
      LAB_STATE_JSON: JSON.stringify(state),
      LAB_QUOTA_JSON: JSON.stringify({
        mode: quota.mode,
        quota: quota.fraction,
        periodMs: quota.periodMs,
        report: Boolean(hpa) || quota.mode !== 'off',
      }),
      LAB_SIGNUP_COST: signupCost,
      LAB_TOKEN_SECRET: randomBytes(16).toString('hex'),
    },
  });
  supervisor.obeyLauncher((msg) => {
    if (msg.cmd === 'rolling-restart') void rollingRestart(supervisor);
  });
  process.on('SIGHUP', () => void rollingRestart(supervisor));
  const line = quota.describe();
  if (line) supervisor.say(line);
  if (hpa) startAutoscaler(supervisor, quota, hpa, scaling.syncMs);
  for (let i = 0; i < initial; i++) supervisor.fork();
}

try {
  if (cluster.isPrimary) await runPrimary();
  else await runWorker();
} catch (err) {
  failStartup(err);
}
