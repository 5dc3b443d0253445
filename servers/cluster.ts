/**
 * Cluster loan server (node:cluster): the lesson 3 server for several processes on one port.
 *
 * Every worker keeps its own loan counter in memory (with --state sqlite or redis, lesson 5, they
 * share one). These paths answer `{ pid, loanCounter }`:
 *   POST /loan                    increments the counter (with {"member": ...}, rate-limited per member)
 *   GET  /status                  reads it (no increment)
 *   GET  /member/verify-blocking  heavy scrypt on this worker's event loop, then reads it
 * and lesson 5's POST /login, GET /me, GET /loans (lib/state-routes.ts).
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
 * keep-alive clients reconnect to another worker; see serve() in lib/main.ts) and exits without
 * being replaced again. Messages to the launcher: `rolling-restart-step { old, pid }` per worker,
 * then `rolling-restart-done { replaced: [{ old, pid }] }` or `rolling-restart-failed { reason }`.
 *
 * Lesson 6. `--cpu-quota <cores>` holds every worker to a share of a core from the moment it
 * listens (a cgroup, or the in-process throttle whose pauses the primary delivers with SIGSTOP and
 * SIGCONT; lib/cpu-quota.ts), and workers report their CPU time over IPC. `--autoscale` runs the
 * HPA rule (lib/hpa.ts) every `--sync-ms`: the primary forks workers, or retires the newest ones
 * (SIGTERM: they drain and are not replaced), and sends the launcher an `autoscale` message per sync
 * `{ at, current, desired, recommendation, averageUtilization, reason, workers: [{ pid, ready,
 * utilization }], retiring: [pid] }`; it prints a line only when the count changes.
 */
import cluster from 'node:cluster';
import http from 'node:http';
import { defineCommand, intFlag } from '../lib/cli.ts';
import { describeError, KitError } from '../lib/errors.ts';
import { formatReady } from '../lib/ready.ts';
import { portInUse, router, sendJson } from './lib/http.ts';
import { exitWithLauncher } from './lib/lifeline.ts';
import { failStartup, serve, serverFlags } from './lib/main.ts';
import { formatCost, hashOnEventLoop, HEAVY_COST, heavyCostFrom } from './lib/scrypt-cost.ts';
import { openStateStore, stateFlags, stateOptions, stateRoutes, type StateOptions } from './lib/state-routes.ts';
import { CPU_SAMPLE_MS, limitProcess, MAX_PAUSE_MS, probeCgroup, QUOTA_MODES, releaseCgroup, removeGroup, reportCpu, startThrottle, utilizationFrom, wallMs, type CgroupSupport, type CpuSample, type PauseRequest, type QuotaMode } from './lib/cpu-quota.ts';
import { decide, DEFAULT_HPA, DEFAULT_SYNC_MS, initialHpaState, METRIC_WINDOW_SYNCS, validateHpaConfig, type HpaConfig, type WorkerSample } from './lib/hpa.ts';
import { parseCost } from './lib/scrypt-cost.ts';
import { SIGNUP_COST, workloadRoutes } from './lib/workload-routes.ts';
import { randomBytes } from 'node:crypto';

const spec = defineCommand({
  usage: 'npx tsx servers/cluster.ts [--port <n>] [--workers <n>] [--state memory|sqlite|redis] [--autoscale [--min <n>] [--max <n>] [--target <%>]] [--cpu-quota <cores>] [flags]',
  summary:
    'The cluster loan server of lesson 3: a node:cluster primary and N workers sharing one port, each ' +
    'with its own in-memory loan counter (or, with --state sqlite|redis, one shared counter: lesson 5). Killed workers are ' +
    'replaced; SIGHUP replaces them all, one at a time. Listens on 127.0.0.1 and prints one ready line once every worker is listening.',
  flags: {
    port: { type: 'string', valueName: 'n', description: 'port to listen on, 0 for any free port', default: '3001' },
    workers: { type: 'string', valueName: 'n', description: 'number of worker processes (1-32; with --autoscale, how many to start with, moved into [min, max])', default: '3' },
    cost: { type: 'string', valueName: 'N=..,r=..,p=..', description: `scrypt cost of /member/verify-blocking (default ${formatCost(HEAVY_COST)})` },
    'restart-budget': {
      type: 'string',
      valueName: 'n',
      description: 'worker deaths allowed within 30 s before the primary gives up and exits',
      default: '10',
    },
    'crash-at-start': { type: 'boolean', description: 'workers throw before listening (to see the restart budget work)' },
    autoscale: { type: 'boolean', description: 'lesson 6: the primary adds and removes workers by CPU utilization (HPA rule)' },
    min: { type: 'string', valueName: 'n', description: `with --autoscale: fewest workers (default ${DEFAULT_HPA.min})` },
    max: { type: 'string', valueName: 'n', description: `with --autoscale: most workers (default ${DEFAULT_HPA.max})` },
    target: { type: 'string', valueName: '%', description: `with --autoscale: target CPU utilization, % of the quota (default ${DEFAULT_HPA.target * 100})` },
    'sync-ms': { type: 'string', valueName: 'ms', description: `with --autoscale: how often the controller runs (default ${DEFAULT_SYNC_MS})` },
    'window-s': { type: 'string', valueName: 's', description: `with --autoscale: scale-down stabilization window (default ${DEFAULT_HPA.windowMs / 1000})` },
    'cpu-quota': { type: 'string', valueName: 'cores', description: 'CPU quota per worker, 0.05 to 4 cores, or none (default: 0.25 with --autoscale, else none)' },
    'quota-mode': { type: 'string', valueName: 'mode', description: 'how the quota is enforced: auto (cgroup if allowed, else throttle), cgroup, throttle (default: auto)' },
    'signup-cost': { type: 'string', valueName: 'N=..,r=..,p=..', description: `scrypt cost of POST /signup (default ${formatCost(SIGNUP_COST)})` },
    ...stateFlags(),
  },
  epilogue:
    'Routes: POST /loan, GET /status, GET /member/verify-blocking (answer { pid, loanCounter });\n' +
    '        POST /login, GET /me, GET /loans (lesson 5)\n' +
    '        POST /signup, POST /token/refresh, GET /books?q=, GET /work?ms= (lesson 6)\n' +
    'Try: curl -s -X POST 127.0.0.1:3001/loan   (run it a few times: the pid changes)\n' +
    '     kill -USR2 <primary pid>              (kills the oldest worker; watch its replacement)\n' +
    '     kill -HUP <primary pid>               (rolling restart: every worker replaced, one at a time)\n' +
    '     npx tsx servers/cluster.ts --workers 1 --autoscale   (then load it: measure/autoscale.ts does)',
});

/** Messages between the primary and its workers, and between the primary and its launcher. */
type WorkerMessage = { type: 'port-in-use'; port: number } | CpuSample | PauseRequest;
type LauncherMessage = { cmd: 'kill-worker'; pid?: number } | { cmd: 'rolling-restart' };

const BUDGET_WINDOW_MS = 30_000;
const SHUTDOWN_GRACE_MS = 2000;
const EXIT_PORT_IN_USE = 3;
/** How long a new worker may take to listen during a rolling restart, and an old one to drain, ms. */
const ROLLING_STEP_TIMEOUT_MS = 15_000;

/** Lesson 6's flags, checked: the autoscaler's config (undefined without --autoscale) and the quota. */
function scalingOptions(flags: ReturnType<typeof serverFlags<typeof spec.flags>>) {
  const autoscale = Boolean(flags.autoscale);
  for (const f of ['min', 'max', 'target', 'sync-ms', 'window-s'] as const) {
    if (!autoscale && flags[f] !== undefined) throw new KitError('KIT_ERR_USAGE', `--${f} only means something with --autoscale`);
  }
  const quotaText = flags['cpu-quota'] ?? (autoscale ? '0.25' : 'none');
  const quota = quotaText === 'none' ? undefined : Number(quotaText);
  if (quota !== undefined && !(quota >= 0.05 && quota <= 4)) {
    throw new KitError('KIT_ERR_USAGE', `--cpu-quota must be a number of cores from 0.05 to 4 (or none); got '${quotaText}'`);
  }
  if (flags['quota-mode'] !== undefined && quota === undefined) throw new KitError('KIT_ERR_USAGE', '--quota-mode only means something with a --cpu-quota (or --autoscale)');
  const mode = flags['quota-mode'] ?? 'auto';
  if (!QUOTA_MODES.includes(mode as QuotaMode)) throw new KitError('KIT_ERR_USAGE', `--quota-mode must be auto, cgroup or throttle; got '${mode}'`);
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
  return { hpa, syncMs, quota, mode: mode as QuotaMode };
}

function runPrimary(): void {
  const flags = serverFlags(spec);
  const port = intFlag('port', flags.port, 0, 65535, 3001);
  const workers = intFlag('workers', flags.workers, 1, 32, 3);
  const budget = intFlag('restart-budget', flags['restart-budget'], 0, 1000, 10);
  const costText = flags.cost ?? process.env.LAB_SCRYPT_COST;
  const state = stateOptions(flags);
  heavyCostFrom(costText); // fail here, once, rather than in every worker
  const signupCost = flags['signup-cost'] ?? formatCost(SIGNUP_COST);
  parseCost(signupCost);
  const scaling = scalingOptions(flags);
  const { hpa } = scaling;
  const initial = hpa ? Math.min(hpa.max, Math.max(hpa.min, workers)) : workers;
  let cgroup: CgroupSupport = { ok: false, reason: 'no quota' };
  let quotaMode: 'cgroup' | 'throttle' | 'off' = 'off';
  if (scaling.quota !== undefined) {
    if (scaling.mode !== 'throttle') cgroup = probeCgroup(`nsl-${process.pid}`);
    if (scaling.mode === 'cgroup' && !cgroup.ok) {
      throw new KitError('KIT_ERR_USAGE', `--quota-mode cgroup: ${cgroup.reason}`, 'use --quota-mode throttle (or auto), which needs no permission');
    }
    quotaMode = cgroup.ok ? 'cgroup' : 'throttle';
  }
  const quotaFraction = scaling.quota ?? 1;

  cluster.setupPrimary({ stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const workerEnv = {
    LAB_WORKER_PORT: String(port),
    LAB_SCRYPT_COST: costText ?? '',
    LAB_CRASH_AT_START: flags['crash-at-start'] ? '1' : '',
    LAB_LIFELINE: '',
    LAB_STATE_JSON: JSON.stringify(state),
    LAB_QUOTA_JSON: JSON.stringify({ mode: quotaMode, quota: quotaFraction, report: Boolean(hpa) || quotaMode !== 'off' }),
    LAB_SIGNUP_COST: signupCost,
    LAB_TOKEN_SECRET: randomBytes(16).toString('hex'),
  };

  const listened = new Set<number>(); // worker ids that reached 'listening'
  const listening = new Set<number>(); // ... and are still alive
  let boundPort: number | undefined;
  const replaces = new Map<number, number>(); // worker id -> pid of the worker it replaces
  const deaths: number[] = []; // times of unexpected deaths, for the budget
  let startupCrashes = 0;
  let readyPrinted = false;
  let shuttingDown = false;
  let exitCode = 0;

  const say = (line: string) => process.stdout.write(line + '\n');
  /** Per worker id: when it was forked and started listening (wall ms), its CPU reports, its pause. */
  const meta = new Map<number, { forkedAt: number; readyAt?: number; samples: CpuSample[]; pausedTimer?: NodeJS.Timeout }>();
  const groups = new Map<number, string>(); // worker id -> its cgroup directory
  process.on('exit', () => {
    // A worker the throttle paused cannot notice that the primary is gone: continue it first.
    for (const id of meta.keys()) resume(id);
    for (const dir of groups.values()) removeGroup(dir);
    releaseCgroup(cgroup);
  });
  const retiring = new Set<number>(); // worker ids stopped on purpose (rolling restart): not replaced
  let rolling = false;
  const fork = (replacing?: number) => {
    // The primary shares one socket per requested address, and closes it when its last worker
    // is gone. So while a worker listens, a replacement asks for the same port as the others did
    // (0 included); when none is left, it asks for the port that was bound, or with --port 0 it
    // would come back on a different random port.
    workerEnv.LAB_WORKER_PORT = String(listening.size > 0 ? port : boundPort ?? port);
    const w = cluster.fork(workerEnv);
    if (replacing !== undefined) replaces.set(w.id, replacing);
    meta.set(w.id, { forkedAt: wallMs(), samples: [] });
    return w;
  };
  /** Continues a worker the throttle paused (a no-op otherwise). */
  const resume = (id: number) => {
    const m = meta.get(id);
    if (m?.pausedTimer) {
      clearTimeout(m.pausedTimer);
      m.pausedTimer = undefined;
      const w = cluster.workers?.[id];
      try {
        w?.process.kill('SIGCONT');
      } catch {}
    }
  };
  const living = () => Object.values(cluster.workers ?? {}).filter((w) => w !== undefined);

  const shutdown = (code: number) => {
    if (shuttingDown) return;
    shuttingDown = true;
    exitCode = code;
    const left = living();
    if (left.length === 0) process.exit(exitCode);
    for (const w of left) resume(w.id);
    for (const w of left) w.process.kill('SIGTERM');
    setTimeout(() => {
      for (const w of living()) w.process.kill('SIGKILL');
    }, SHUTDOWN_GRACE_MS).unref();
  };

  cluster.on('listening', (worker, address) => {
    boundPort = address.port;
    listened.add(worker.id);
    listening.add(worker.id);
    const m = meta.get(worker.id);
    if (m) m.readyAt = wallMs();
    // The quota applies from the moment a worker listens: starting up (loading and compiling the
    // code) at a quarter of a core would take seconds. The start-up burst that this lets through is
    // why the autoscaler leaves starting workers out of its average.
    if (cgroup.ok && worker.process.pid !== undefined && !groups.has(worker.id)) {
      try {
        groups.set(worker.id, limitProcess(cgroup, worker.process.pid, quotaFraction));
      } catch (err) {
        say(`cpu quota: could not put worker ${worker.process.pid} in its cgroup: ${(err as Error).message}`);
      }
    }
    startupCrashes = 0;
    const old = replaces.get(worker.id);
    if (old !== undefined) {
      say(`worker ${worker.process.pid} listening, replacing ${old}`);
      process.send?.({ event: 'worker-replaced', old, pid: worker.process.pid });
    }
    if (!readyPrinted && listened.size >= initial) {
      readyPrinted = true;
      say(formatReady('cluster', address.port, process.pid));
    }
  });

  cluster.on('message', (worker, msg: WorkerMessage) => {
    if (msg?.type === 'cpu') {
      const m = meta.get(worker.id);
      if (!m) return;
      m.samples.push(msg);
      while (m.samples.length > 0 && msg.at - m.samples[0]!.at > (METRIC_WINDOW_SYNCS + 1) * scaling.syncMs) m.samples.shift();
      return;
    }
    if (msg?.type === 'pause') {
      const m = meta.get(worker.id);
      if (!m || m.pausedTimer || shuttingDown || retiring.has(worker.id)) return;
      try {
        worker.process.kill('SIGSTOP');
      } catch {
        return;
      }
      m.pausedTimer = setTimeout(() => resume(worker.id), Math.min(MAX_PAUSE_MS, Math.max(1, msg.ms)));
      return;
    }
    if (msg?.type === 'port-in-use' && !shuttingDown) {
      process.stderr.write(describeError(portInUse(msg.port)) + '\n');
      shutdown(1);
    }
  });

  // One replacement per death, keyed on 'exit' only ('disconnect' also fires for the same death).
  cluster.on('exit', (worker, code, signal) => {
    listening.delete(worker.id);
    const m = meta.get(worker.id);
    if (m?.pausedTimer) clearTimeout(m.pausedTimer);
    meta.delete(worker.id);
    const dir = groups.get(worker.id);
    if (dir !== undefined) {
      groups.delete(worker.id);
      removeGroup(dir);
    }
    if (retiring.delete(worker.id) && !shuttingDown) {
      say(`worker ${worker.process.pid} retired (${signal ? `killed by ${signal}` : `exit code ${code}`})`);
      return;
    }
    if (shuttingDown) {
      if (living().length === 0) process.exit(exitCode);
      return;
    }
    if (code === EXIT_PORT_IN_USE) return; // the 'port-in-use' message already stops everything
    const pid = worker.process.pid;
    const how = signal ? `killed by ${signal}` : `exited with code ${code}`;
    const now = Date.now();
    deaths.push(now);
    while (deaths.length && deaths[0]! < now - BUDGET_WINDOW_MS) deaths.shift();
    if (deaths.length > budget) {
      const err = new KitError(
        'KIT_ERR_RESTART_BUDGET',
        `${deaths.length} worker deaths within ${BUDGET_WINDOW_MS / 1000} s (budget ${budget}); last: worker ${pid} ${how}`,
        'the primary stopped replacing workers and is exiting; look at the workers\' errors above',
      );
      process.stderr.write(describeError(err) + '\n');
      shutdown(1);
      return;
    }
    if (hpa) {
      // The autoscaler owns the count: its next sync forks what is missing (at least min), so a
      // replacement here as well could take the count past max.
      say(`worker ${pid} ${how}; the autoscaler will start what is needed`);
      return;
    }
    // A worker that died before listening likely crashes at start-up: back off 100 ms, 200 ms, ...
    const delay = listened.has(worker.id) ? 0 : Math.min(100 * 2 ** startupCrashes++, 3000);
    say(`worker ${pid} ${how}; starting a replacement${delay ? ` in ${delay} ms` : ''}`);
    setTimeout(() => {
      if (!shuttingDown) fork(pid);
    }, delay);
  });

  const killWorker = (pid?: number) => {
    const target = pid === undefined ? living()[0] : living().find((w) => w.process.pid === pid);
    if (!target) {
      process.send?.({ event: 'kill-failed', pid, reason: 'no such worker' });
      return;
    }
    target.process.kill('SIGKILL');
    process.send?.({ event: 'worker-killed', pid: target.process.pid });
  };
  /** Resolves when `event` fires for worker `w` (a cluster event), rejects after `ms` or if it exits first. */
  const waitFor = (w: ReturnType<typeof fork>, event: 'listening' | 'exit', ms: number) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => done(new Error(`worker ${w.process.pid} did not reach '${event}' within ${ms} ms`)), ms);
      const onEvent = () => done();
      const onExit = () => done(event === 'exit' ? undefined : new Error(`worker ${w.process.pid} exited before listening`));
      const done = (err?: Error) => {
        clearTimeout(timer);
        w.off(event, onEvent);
        w.off('exit', onExit);
        if (err) reject(err);
        else resolve();
      };
      w.once(event, onEvent);
      if (event !== 'exit') w.once('exit', onExit);
    });

  /** Replaces every worker, one at a time: the new one listens before the old one drains. */
  const rollingRestart = async () => {
    if (rolling || shuttingDown) {
      process.send?.({ event: 'rolling-restart-failed', reason: rolling ? 'a rolling restart is already running' : 'shutting down' });
      return;
    }
    rolling = true;
    const replaced: { old: number; pid: number }[] = [];
    try {
      const old = living().filter((w) => listening.has(w.id) && !retiring.has(w.id));
      say(`rolling restart: replacing ${old.length} worker(s) one at a time`);
      for (const w of old) {
        if (shuttingDown) throw new Error('shutting down');
        const next = fork();
        await waitFor(next, 'listening', ROLLING_STEP_TIMEOUT_MS);
        retiring.add(w.id);
        const gone = waitFor(w, 'exit', ROLLING_STEP_TIMEOUT_MS);
        resume(w.id);
        w.process.kill('SIGTERM'); // the worker drains (serve() in lib/main.ts), then exits
        await gone;
        const step = { old: w.process.pid!, pid: next.process.pid! };
        replaced.push(step);
        say(`rolling restart: worker ${step.pid} took over from ${step.old}`);
        process.send?.({ event: 'rolling-restart-step', ...step });
      }
      say(`rolling restart: done, ${replaced.length} worker(s) replaced`);
      process.send?.({ event: 'rolling-restart-done', replaced });
    } catch (err) {
      say(`rolling restart: failed: ${(err as Error).message}`);
      process.send?.({ event: 'rolling-restart-failed', reason: (err as Error).message, replaced });
    } finally {
      rolling = false;
    }
  };

  process.on('message', (msg: LauncherMessage) => {
    if (msg?.cmd === 'kill-worker') killWorker(msg.pid);
    if (msg?.cmd === 'rolling-restart') void rollingRestart();
  });
  process.on('SIGHUP', () => void rollingRestart());
  process.on('disconnect', () => shutdown(0)); // the launcher's IPC channel closed: it is gone
  process.on('SIGUSR2', () => killWorker());
  process.on('SIGTERM', () => shutdown(0));
  process.on('SIGINT', () => shutdown(0));
  exitWithLauncher(() => shutdown(0));

  if (scaling.quota !== undefined) {
    say(
      `cpu quota: ${scaling.quota} core per worker, ` +
        (cgroup.ok ? `enforced by a cgroup v${cgroup.version} (${cgroup.base})` : `enforced by the in-process throttle${scaling.mode === 'auto' ? ` (no cgroup: ${cgroup.reason})` : ''}`),
    );
  }
  if (hpa) startAutoscaler(hpa);
  for (let i = 0; i < initial; i++) fork();

  /**
   * Lesson 6: every sync period, runs the HPA rule (lib/hpa.ts) on the workers' utilization and
   * forks or retires workers to match. A retired worker drains (SIGTERM, serve() in lib/main.ts)
   * and is not replaced. Each sync is sent to the launcher as an `autoscale` message.
   */
  function startAutoscaler(config: HpaConfig): void {
    let hpaState = initialHpaState();
    say(
      `autoscale: min ${config.min}, max ${config.max}, target ${Math.round(config.target * 100)}% of the quota, ` +
        `tolerance ${config.tolerance}, sync every ${scaling.syncMs} ms, scale-down window ${config.windowMs / 1000} s, ` +
        `start-up ignored for ${config.initializationMs / 1000} s, scale-up at most max(${config.scaleUp.workers}, ${config.scaleUp.percent}%) per ${config.scaleUp.periodMs / 1000} s ` +
        '(Kubernetes defaults: sync 15 s, window 300 s, max(4, 100%) per 15 s)',
    );
    const timer = setInterval(() => {
      if (shuttingDown || rolling) return;
      const now = wallMs();
      const active = living().filter((w) => !retiring.has(w.id));
      const samples: (WorkerSample & { id: number })[] = active.map((w) => {
        const m = meta.get(w.id);
        const utilization = m ? utilizationFrom(m.samples, METRIC_WINDOW_SYNCS * scaling.syncMs, quotaFraction, m.readyAt) : undefined;
        return { id: w.id, pid: w.process.pid!, ...(m?.readyAt !== undefined ? { readyAt: m.readyAt } : {}), ...(utilization !== undefined ? { utilization } : {}) };
      });
      const d = decide(config, hpaState, now, samples);
      hpaState = d.state;
      const before = samples.length;
      if (d.desired > before) {
        for (let i = before; i < d.desired; i++) fork();
      } else if (d.desired < before) {
        // Retire the newest workers: they hold the fewest keep-alive connections.
        const victims = [...active].sort((a, b) => b.id - a.id).slice(0, before - d.desired);
        for (const w of victims) {
          retiring.add(w.id);
          resume(w.id);
          w.process.kill('SIGTERM');
        }
      }
      if (d.desired !== before) {
        const avg = d.averageUtilization === undefined ? 'no metrics' : `average ${Math.round(d.averageUtilization * 100)}% of quota`;
        say(`autoscale: ${before} -> ${d.desired} workers (${avg}, target ${Math.round(config.target * 100)}%): ${d.reason}`);
      }
      process.send?.({
        event: 'autoscale',
        at: now,
        current: before,
        desired: d.desired,
        recommendation: d.recommendation,
        averageUtilization: d.averageUtilization,
        reason: d.reason,
        workers: samples.map((w) => ({ pid: w.pid, ready: w.readyAt !== undefined, utilization: w.utilization })),
        retiring: living().filter((w) => retiring.has(w.id)).map((w) => w.process.pid),
      });
    }, scaling.syncMs);
    timer.unref();
  }
}

async function runWorker(): Promise<void> {
  if (process.env.LAB_CRASH_AT_START) throw new Error('crashing at start-up, as asked by --crash-at-start');
  const port = Number(process.env.LAB_WORKER_PORT);
  const heavy = heavyCostFrom(undefined);
  const state = JSON.parse(process.env.LAB_STATE_JSON ?? '{}') as StateOptions;
  const quota = JSON.parse(process.env.LAB_QUOTA_JSON ?? '{}') as { mode?: string; quota?: number; report?: boolean };
  if (quota.report) reportCpu((sample) => process.send?.(sample));
  const signupCost = parseCost(process.env.LAB_SIGNUP_COST || formatCost(SIGNUP_COST));
  // With --state memory (the default) the counter lives in this worker alone: lesson 3's finding.
  const store = await openStateStore(state);
  const me = async () => ({ pid: process.pid, loanCounter: await store.counter('loans') });

  const server = http.createServer(
    router(
      {
        ...stateRoutes(store, state, () => ({ pid: process.pid }), (total) => ({ loanCounter: total })),
        ...workloadRoutes(process.env.LAB_TOKEN_SECRET || 'lesson-6', signupCost, () => ({ pid: process.pid })),
        '/status': { GET: async (_req, res) => sendJson(res, 200, await me()) },
        '/member/verify-blocking': {
          GET: async (_req, res) => {
            hashOnEventLoop('correct horse battery staple', heavy);
            sendJson(res, 200, await me());
          },
        },
      },
      () => ({ pid: process.pid }),
    ),
  );
  // Ctrl-C in a terminal reaches the whole process group; the primary decides when workers stop.
  process.on('SIGINT', () => {});
  serve('cluster-worker', server, port, { announce: false })
    .then(() => {
      // Like the cgroup (see the primary's 'listening'), the throttle starts once the worker listens.
      if (quota.mode === 'throttle' && quota.quota) startThrottle(quota.quota, (ms) => process.send?.({ type: 'pause', ms } satisfies PauseRequest));
    })
    .catch((err: unknown) => {
      if (err instanceof KitError && err.code === 'KIT_ERR_PORT_IN_USE') {
        process.send?.({ type: 'port-in-use', port } satisfies WorkerMessage, () => process.exit(EXIT_PORT_IN_USE));
        return;
      }
      failStartup(err);
    });
}

try {
  if (cluster.isPrimary) runPrimary();
  else await runWorker();
} catch (err) {
  failStartup(err);
}
