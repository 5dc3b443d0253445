/**
 * Lesson 8 · shared compute versus dedicated, before any autoscaling: the same 10 virtual users
 * (measure/lib/load/users.ts: sign up, then refreshes and searches, with think time) against one
 * cluster worker, three times, each on a fresh cluster:
 *   shared-100ms   a quota of 0.25 core with CFS's default 100 ms period, as Kubernetes sets a
 *                  CPU limit: 25 ms of CPU per 100 ms; a worker that spent it waits for the next period
 *   shared-20ms    the same quota with the 20 ms period the rest of lesson 8 uses
 *   dedicated      no quota: the worker may use a whole core
 * The users ask the same work of each, so the shared rows use about the same CPU; what differs is
 * how long a request waits when it arrives after its period's CPU is spent. Per scenario: the
 * worker's CPU, the periods in which the quota stopped it (the cgroup's cpu.stat, or the in-process
 * throttle's pauses) and the steady latency of the light requests.
 */
import { defineCommand, intFlag } from '../lib/cli.ts';
import { formatCost, hashOnEventLoop, type ScryptCost } from '../servers/lib/cpu/scrypt-cost.ts';
import { SIGNUP_COST } from '../servers/lib/cluster/workload-routes.ts';
import { COMMON_FLAGS, defineExperiment, runIfEntry, type RunContext } from './lib/harness/experiment.ts';
import { quotaOptions, runClusterUsers } from './lib/load/cluster-users.ts';
import {
  COMPUTE_SCENARIOS,
  hints,
  render,
  shape,
  type ComputeScenarioResult,
  type SharedComputeResult,
} from '../results/shared-compute/report.ts';
import { measures, predictions } from '../results/shared-compute/predictions.ts';

/** Mean think time, ms: the autoscale experiment's (10 users keep a 0.25-core worker about half to 60 % busy). */
const THINK_MS = 2200;
const USERS = 10;
/** Load per scenario, s (full run / --quick); --load-s sets another, from LOAD_S_RANGE. */
const DURATIONS = { full: 20, quick: 12 };
const LOAD_S_RANGE = [4, 120] as const;

const command = defineCommand({
  usage: 'npx tsx measure/shared-compute.ts [flags]',
  summary:
    'Runs the same 10 virtual users against one cluster worker held to 0.25 core with a 100 ms quota period (as a Kubernetes ' +
    'CPU limit), with a 20 ms period, and with a whole core of its own; shows the CPU each used, how often the quota stopped ' +
    'it, and the latency of the light requests.',
  flags: {
    ...COMMON_FLAGS,
    'cpu-quota': { type: 'string', valueName: 'cores', description: 'CPU quota of the shared rows', default: '0.25' },
    'quota-mode': {
      type: 'string',
      valueName: 'mode',
      description: 'auto (cgroup if allowed, else the in-process throttle), cgroup or throttle',
      default: 'auto',
    },
    'think-ms': {
      type: 'string',
      valueName: 'ms',
      description: 'mean think time after each user iteration',
      default: String(THINK_MS),
    },
    'load-s': {
      type: 'string',
      valueName: 's',
      description: `seconds of load per scenario, ${LOAD_S_RANGE[0]} to ${LOAD_S_RANGE[1]} (default ${DURATIONS.full}; ${DURATIONS.quick} with --quick); the shape needs ${DURATIONS.quick} or more`,
    },
  },
  epilogue:
    'By hand: npx tsx servers/managed-cluster.ts --workers 1 --cpu-quota 0.25 --quota-period-ms 100, then load it (measure/autoscale.ts shows how).',
});

/** Sign-ups timed before the run: their median is the caption's CPU per sign-up. */
const SIGNUP_SAMPLES = 5;

/**
 * The CPU one sign-up's scrypt takes on this machine, ms: the median of SIGNUP_SAMPLES hashes of
 * `cost` in this process, each timed with process.cpuUsage() (user + system). The worker hashes on
 * its thread pool, the same work on another thread.
 */
function signupCpuMs(cost: ScryptCost = SIGNUP_COST): number {
  const samples: number[] = [];
  for (let i = 0; i < SIGNUP_SAMPLES; i++) {
    const before = process.cpuUsage();
    hashOnEventLoop(`pw-${i}`, cost);
    const used = process.cpuUsage(before);
    samples.push((used.user + used.system) / 1000);
  }
  return samples.sort((a, b) => a - b)[Math.floor(SIGNUP_SAMPLES / 2)]!;
}

interface Options {
  quota: string;
  quotaMode: string;
  thinkMs: number;
  /** --load-s, when given. */
  loadS?: number;
}

async function run({
  lab,
  progress,
  options,
  quick,
  port,
  machine,
}: RunContext<Options>): Promise<SharedComputeResult> {
  const loadS = options.loadS ?? (quick ? DURATIONS.quick : DURATIONS.full);
  const signupMs = signupCpuMs();
  const scenarios: ComputeScenarioResult[] = [];
  for (const s of COMPUTE_SCENARIOS) {
    const quota =
      s.periodMs === undefined
        ? ['--cpu-quota', 'none']
        : ['--cpu-quota', options.quota, '--quota-period-ms', String(s.periodMs), '--quota-mode', options.quotaMode];
    const r = await runClusterUsers(lab, progress, {
      label: s.name,
      users: USERS,
      autoscale: false,
      loadS,
      thinkMs: options.thinkMs,
      windowS: 0,
      // --autoscale held at one worker: the primary then reports the worker's CPU and throttling every second.
      clusterArgs: [
        '--port',
        String(port),
        '--workers',
        '1',
        '--autoscale',
        '--min',
        '1',
        '--max',
        '1',
        ...quota,
        '--signup-cost',
        formatCost(SIGNUP_COST),
      ],
    });
    scenarios.push({ name: s.name, ...(s.periodMs !== undefined ? { periodMs: s.periodMs } : {}), ...r });
  }
  return { machine, quota: Number(options.quota), thinkMs: options.thinkMs, signupCpuMs: signupMs, scenarios };
}

export const experiment = defineExperiment({
  name: 'shared-compute',
  command,
  options: (flags): Options => {
    const { quota, quotaMode } = quotaOptions(flags, 0.5);
    const loadS =
      flags['load-s'] === undefined ? undefined : intFlag('load-s', flags['load-s'], ...LOAD_S_RANGE, DURATIONS.full);
    return {
      quota,
      quotaMode,
      thinkMs: intFlag('think-ms', flags['think-ms'], 100, 10_000, THINK_MS),
      ...(loadS !== undefined ? { loadS } : {}),
    };
  },
  run,
  report: { render, shape, hints, measures, predictions },
});

await runIfEntry(import.meta, experiment);
