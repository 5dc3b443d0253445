/**
 * One lesson-8 scenario: a fresh cluster (servers/managed-cluster.ts, started with `clusterArgs`), virtual
 * users against it for `loadS` seconds (users.ts), and every sync the primary reported
 * (`autoscale` events: workers, their utilization and throttling). An autoscaled scenario then
 * waits for the workers to return to min, up to the scale-down window plus COOL_DOWN_SLACK_S.
 * Used by the autoscale and shared-compute experiments.
 */
import { KitError } from '../../../lib/errors.ts';
import { isEvent, type AutoscaleEvent } from '../../../servers/lib/cluster/messages.ts';
import { quotaMode, wallMs } from '../../../servers/lib/cpu/quota.ts';
import { DEFAULT_HPA } from '../../../core/hpa.ts';
import { steadyWindow, type ScenarioResult, type SyncSample } from '../../../results/autoscale/result.ts';
import type { Lab } from '../process/lab.ts';
import type { ServerProcess } from '../process/launch.ts';
import type { Progress } from '../harness/progress.ts';
import { startUsers } from './users.ts';

/** After the load: how long to wait for the workers to return to min, beyond the window, s. */
const COOL_DOWN_SLACK_S = 10;
/**
 * The users' per-request timeout, ms. In a closed loop a short CPU makes requests wait, not fail
 * (lesson 8), and at the start of auto-80u, before the autoscaler has caught up, a request can wait
 * for the whole backlog on the first worker: the slowest took 3.6-10.2 s over 13 --quick runs on a
 * slow 2-core virtual machine (Node 20), and users.ts's 10 s default failed 3 sign-ups in one of
 * them. With 30 s such a wait shows in the latencies, and a hung request is still an error.
 */
const REQUEST_TIMEOUT_MS = 30_000;

const isAutoscale = isEvent('autoscale');

interface ClusterUsersOptions {
  /** The scenario's name in progress lines. */
  label: string;
  users: number;
  autoscale: boolean;
  /** Load length, s, and the users' mean think time, ms. */
  loadS: number;
  thinkMs: number;
  /** The autoscaler's scale-down window, s (how long to wait for min after the load). */
  windowS: number;
  /** Users keep one connection for the run (UsersOptions.keepAlive). */
  keepAlive?: boolean;
  /** servers/managed-cluster.ts's flags; they must include --autoscale, so that it reports every sync. */
  clusterArgs: string[];
}

/**
 * The lesson-8 experiments' --cpu-quota (cores, from 0.05 to `maxCores`; default 0.25) and
 * --quota-mode (auto, cgroup or throttle) flags, checked; KIT_ERR_USAGE otherwise.
 */
export function quotaOptions(
  flags: { 'cpu-quota'?: string; 'quota-mode'?: string },
  maxCores: number,
): { quota: string; quotaMode: string } {
  const quota = String(flags['cpu-quota'] ?? '0.25');
  if (!(Number(quota) >= 0.05 && Number(quota) <= maxCores))
    throw new KitError(
      'KIT_ERR_USAGE',
      `--cpu-quota must be a number of cores from 0.05 to ${maxCores}; got '${quota}'`,
    );
  return { quota, quotaMode: quotaMode(flags['quota-mode']) };
}

/** Runs the scenario; the cluster is stopped before it returns (and by the lab on any error). */
export async function runClusterUsers(
  lab: Lab,
  progress: Progress,
  o: ClusterUsersOptions,
): Promise<Omit<ScenarioResult, 'name'>> {
  progress.step(`${o.label}: starting the cluster (1 worker${o.autoscale ? ', autoscaled' : ''})`);
  const server = await lab.start({ server: 'managed-cluster', args: o.clusterArgs, ipc: true });
  const quotaLine = server.lines.find((l) => l.startsWith('cpu quota:')) ?? '';
  const from = server.messageCount;
  const start = wallMs();
  let workersNow = 1;
  const users = startUsers({
    url: server.url,
    users: o.users,
    durationS: o.loadS,
    thinkMs: o.thinkMs,
    requestTimeoutMs: REQUEST_TIMEOUT_MS,
    ...(o.keepAlive ? { keepAlive: true } : {}),
    steadyFromS: steadyWindow({ loadS: o.loadS, autoscale: o.autoscale })[0],
    onSecond: (sec) =>
      progress.step(
        `${o.label}: ${o.users} users, second ${sec.second + 1} of ${o.loadS}: ${sec.completed} req/s, p95 ${sec.p95.toFixed(0)} ms, ${workersNow} worker(s)`,
      ),
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
  const backToMinS = o.autoscale ? await waitBackToMin(server, progress, o, { start, loadEndS, from }) : undefined;
  const syncs = server
    .messagesFrom(from)
    .filter(isAutoscale)
    .map((m) => syncSample(m, start));
  await lab.stop(server);
  return {
    users: o.users,
    autoscale: o.autoscale,
    loadS: o.loadS,
    loadEndS,
    quotaLine,
    workload,
    syncs,
    ...(backToMinS !== undefined ? { backToMinS } : {}),
  };
}

/** One autoscale event of the cluster as the result's sync: times in s since the load began (`start`, ms). */
function syncSample(m: AutoscaleEvent, start: number): SyncSample {
  return {
    t: Math.round(m.at - start) / 1000,
    workers: m.current,
    alive: m.desired + m.retiring.length,
    desired: m.desired,
    recommendation: m.recommendation,
    retiring: m.retiring.length,
    reason: m.reason,
    ...(m.averageUtilization !== undefined ? { average: m.averageUtilization } : {}),
    perWorker: m.workers.map((w) => ({
      pid: w.pid,
      utilization: w.utilization ?? null,
      ...(w.throttle ? { throttle: w.throttle } : {}),
    })),
  };
}

/**
 * Waits, after the load, for the cluster's workers to return to the autoscaler's min (the window
 * plus COOL_DOWN_SLACK_S at most): s from the load's end (`loadEndS`, s after `start`, ms), or
 * undefined when they did not. `from`: the first of the server's messages this run counts.
 */
async function waitBackToMin(
  server: ServerProcess,
  progress: Progress,
  o: ClusterUsersOptions,
  t: { start: number; loadEndS: number; from: number },
): Promise<number | undefined> {
  const deadlineS = t.loadEndS + o.windowS + COOL_DOWN_SLACK_S;
  progress.step(
    `${o.label}: load over; waiting up to ${Math.round(deadlineS - t.loadEndS)} s for the workers to return to ${DEFAULT_HPA.min}`,
  );
  try {
    await server.waitForMessage(
      (m): m is AutoscaleEvent =>
        isAutoscale(m) &&
        (m.at - t.start) / 1000 > t.loadEndS &&
        m.current + m.retiring.length <= DEFAULT_HPA.min &&
        m.desired <= DEFAULT_HPA.min,
      (deadlineS - t.loadEndS) * 1000,
      t.from,
    );
    return (wallMs() - t.start) / 1000 - t.loadEndS;
  } catch (err) {
    if (!(err instanceof KitError && err.code === 'KIT_ERR_WAIT_TIMEOUT')) throw err;
    return undefined;
  }
}
