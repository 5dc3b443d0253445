/**
 * Lesson 6 · failover: what clients see when a replica goes away under load.
 *
 * For each fault, a fresh set of 3 replicas behind the balancer; /fast with 8 connections; at
 * second 5 (2 with --quick) replica app3 gets SIGTERM (it drains), SIGKILL (it crashes), SIGSTOP
 * (it freezes: the kernel still accepts connections, nothing answers) or SIGUSR2 (its address
 * vanishes: connection attempts get no answer at all, servers/lib/serve/vanish.ts). Then the kill again with
 * --retries 0, and a kill while the clients create users with POST /users. The balancer's response
 * timeout is 1.5 s for these runs, so a frozen replica costs 1.5 s per request it holds. The
 * balancer keeps an access log (--access-log, nginx's format for both balancers), whose retried and
 * slow counts must equal the clients'.
 */
import { openDatabase } from '../servers/lib/state/sqlite.ts';
import { defineCommand, intFlag } from '../lib/cli.ts';
import { isPolicy, POLICIES, type Policy } from '../core/policies.ts';
import { KitError } from '../lib/errors.ts';
import { COMMON_FLAGS, defineExperiment, runIfEntry, type RunContext } from './lib/harness/experiment.ts';
import { median } from '../results/report/latency.ts';
import { faultedLoad, type FaultedTopology } from './lib/load/faulted-load.ts';
import { balancerKind, LB_FLAG, type BalancerKind } from './lib/process/topology.ts';
import { caveats, hints, render, shape } from '../results/failover/report.ts';
import {
  FAILOVER_SPEC,
  type Fault,
  type FailoverResult,
  type FaultPlan,
  type FaultRun,
  type PostCheck,
} from '../results/failover/result.ts';
import { measures, predictions } from '../results/failover/predictions.ts';

/**
 * --response-timeout's range, ms: a frozen replica's requests must count as slow (at least
 * SLOW_MS) and must end, and be retried, within the run; with --quick, 1 s before it ends.
 */
const RESPONSE_TIMEOUT_RANGE_MS = [
  FAILOVER_SPEC.slowMs,
  (FAILOVER_SPEC.durationS.full - FAILOVER_SPEC.faultAtS.full - 1) * 1000,
] as const;
const QUICK_MAX_TIMEOUT_MS = (FAILOVER_SPEC.durationS.quick - FAILOVER_SPEC.faultAtS.quick - 1) * 1000;

const command = defineCommand({
  usage: 'npx tsx measure/failover.ts [flags]',
  summary:
    'Stops, kills, freezes or makes vanish one of three replicas while /fast runs through the balancer, and prints a per-second timeline ' +
    '(req/s, errors, p99) and a summary: errors clients saw, requests retried, slow requests. Then the kill without retries, ' +
    "and a kill during POST /users (no user may be stored twice). The balancer's access log counts the retried and slow requests, " +
    "checked against the clients' counts, and one retried request is read from it field by field.",
  flags: {
    ...COMMON_FLAGS,
    lb: LB_FLAG,
    policy: {
      type: 'string',
      valueName: 'policy',
      description: `balancing policy: ${POLICIES.join(', ')}`,
      default: 'round-robin',
    },
    'response-timeout': {
      type: 'string',
      valueName: 'ms',
      description: `the balancer's response timeout, what a frozen replica costs a request: ${RESPONSE_TIMEOUT_RANGE_MS.join(' to ')} ms (default ${FAILOVER_SPEC.settings.responseTimeoutMs}; at most ${QUICK_MAX_TIMEOUT_MS} with --quick)`,
    },
  },
  epilogue: 'Example: npx tsx measure/failover.ts --lb nginx --quick',
});

interface Options {
  lb: BalancerKind;
  policy: Policy;
  responseTimeoutMs: number;
}

const { replicas: REPLICAS, connections: CONNECTIONS, slowMs: SLOW_MS, plans: PLANS } = FAILOVER_SPEC;

const SIGNAL: Record<Fault, NodeJS.Signals> = {
  sigterm: 'SIGTERM',
  sigkill: 'SIGKILL',
  sigstop: 'SIGSTOP',
  vanish: 'SIGUSR2',
};
/**
 * The vanished replica's listen backlog: its accept queue (backlog + 1 on Linux) is where the
 * balancer's last connections land before the queue is full, each costing a response timeout
 * instead of the connect timeout (measured with backlog 2: 3 of 8 slow requests, every run;
 * with 1: 0 to 2 of 8).
 */
const VANISH_BACKLOG = 1;

async function runPlan(ctx: RunContext<Options>, plan: FaultPlan, index: number): Promise<FaultRun> {
  const { lab, progress, options, quick, port } = ctx;
  const faultAtS = FAILOVER_SPEC.faultAtS[quick ? 'quick' : 'full'];
  const durationS = FAILOVER_SPEC.durationS[quick ? 'quick' : 'full'];
  const runTag = `${process.pid}-${index}-${Date.now()}`;
  const createdIds: number[] = [];
  let sent = 0;
  const posts = [
    {
      method: 'POST' as const,
      path: '/users',
      headers: { 'content-type': 'application/json' },
      setupRequest: (req: Record<string, unknown>) => ({
        ...req,
        body: JSON.stringify({ name: `failover-${runTag}-${++sent}` }),
      }),
      onResponse: (status: number, body: string) => {
        if (status === 201) createdIds.push((JSON.parse(body) as { id: number }).id);
      },
    },
  ];
  const faulted = await faultedLoad(
    lab,
    progress,
    {
      label: `${index + 1}/${PLANS.length} ${plan.name}`,
      replicas: REPLICAS,
      lb: options.lb,
      policy: options.policy,
      port,
      lbArgs: [
        '--retries',
        String(plan.retries),
        '--response-timeout',
        String(options.responseTimeoutMs),
        '--connect-timeout',
        String(FAILOVER_SPEC.settings.connectTimeoutMs),
      ],
      ...(plan.fault === 'vanish' ? { victimArgs: ['--backlog', String(VANISH_BACKLOG)] } : {}),
      // So that the timeline shows the fault rather than the JIT compilers warming up.
      leadInS: FAILOVER_SPEC.warmupS,
      load: {
        route: FAILOVER_SPEC.route,
        connections: CONNECTIONS,
        durationS,
        timeline: true,
        slowMs: SLOW_MS,
        timeoutS: 10,
        ...(plan.method === 'POST' ? { requests: posts as never } : {}),
      },
      fault: { signal: SIGNAL[plan.fault], atS: faultAtS },
      accessLog: true,
    },
    (t): PostCheck | undefined =>
      plan.method === 'POST'
        ? {
            ...checkUsers(t.replicas.dbFile!, `failover-${runTag}-`, createdIds),
            retried: t.retries.requests.filter((r) => r.method === 'POST').length,
          }
        : undefined,
  );
  return faultRun(plan, faultAtS, durationS, faulted);
}

/** What a plan's faulted load (`faulted`, its `extra` the POST run's check) comes to, as the result's run. */
function faultRun(
  plan: FaultPlan,
  faultAtS: number,
  durationS: number,
  faulted: FaultedTopology & { extra: PostCheck | undefined },
): FaultRun {
  const { load: result, retries, extra: post, accessLog, replicas } = faulted;
  const slow = result.slow!;
  return {
    name: plan.name,
    fault: plan.fault,
    method: plan.method,
    retries: plan.retries,
    faultAtS,
    // The last, partial second (requests finishing after the duration) would read as a drop.
    timeline: (result.timeline ?? []).filter((sec) => sec.second < durationS),
    totals: {
      completed: result.counts.completed,
      ok2xx: result.counts.ok2xx,
      non2xx: result.counts.non2xx,
      errors: result.counts.errors,
    },
    retried: retries.total,
    slow: {
      count: slow.count,
      medianMs: slow.latenciesMs.length ? median(slow.latenciesMs) : 0,
      maxMs: slow.latenciesMs.at(-1) ?? 0,
    },
    p99: result.latency.p99,
    max: result.latency.max,
    ...(post ? { post } : {}),
    ...(accessLog
      ? {
          log: {
            answered: accessLog.answered,
            retried: accessLog.retried,
            slow: accessLog.slow,
            ...(accessLog.sample ? { sample: accessLog.sample } : {}),
            firstTriesS: accessLog.firstTriesS,
            names: Object.fromEntries(replicas.map((x) => [x.addr, x.name])),
          },
        }
      : {}),
    clientRetried: result.headerMatched ?? 0,
  };
}

/** Reads the users this run wrote (names starting with `prefix`) and checks them against the 201 answers. */
function checkUsers(file: string, prefix: string, createdIds: number[]): PostCheck {
  const db = openDatabase(file, { readonly: true, fileMustExist: true });
  try {
    const rows = db.prepare('SELECT id, name FROM users WHERE name LIKE ?').all(`${prefix}%`) as {
      id: number;
      name: string;
    }[];
    const byId = new Map<number, number>();
    const byName = new Map<string, number>();
    for (const r of rows) {
      byId.set(r.id, (byId.get(r.id) ?? 0) + 1);
      byName.set(r.name, (byName.get(r.name) ?? 0) + 1);
    }
    const createdAndStoredOnce =
      new Set(createdIds).size === createdIds.length ? createdIds.filter((id) => byId.get(id) === 1).length : 0;
    return {
      created: createdIds.length,
      createdAndStoredOnce,
      stored: rows.length,
      storedTwice: [...byName.values()].filter((n) => n > 1).length,
      retried: 0,
    };
  } finally {
    db.close();
  }
}

async function run(ctx: RunContext<Options>): Promise<FailoverResult> {
  const runs: FaultRun[] = [];
  for (const [i, plan] of PLANS.entries()) runs.push(await runPlan(ctx, plan, i));
  return {
    machine: ctx.machine,
    balancer: ctx.options.lb,
    policy: ctx.options.policy,
    victim: `app${REPLICAS}`,
    load: {
      connections: CONNECTIONS,
      durationS: FAILOVER_SPEC.durationS[ctx.quick ? 'quick' : 'full'],
      route: `${FAILOVER_SPEC.route} (POST /users in the last run)`,
      warmupS: FAILOVER_SPEC.warmupS,
    },
    settings: { ...FAILOVER_SPEC.settings, responseTimeoutMs: ctx.options.responseTimeoutMs },
    slowThresholdMs: SLOW_MS,
    runs,
  };
}

export const experiment = defineExperiment({
  name: 'failover',
  command,
  options: (flags) => {
    const policy = String(flags.policy);
    if (!isPolicy(policy))
      throw new KitError('KIT_ERR_USAGE', `unknown policy '${policy}': pick one of ${POLICIES.join(', ')}`);
    const responseTimeoutMs = intFlag(
      'response-timeout',
      flags['response-timeout'],
      ...RESPONSE_TIMEOUT_RANGE_MS,
      FAILOVER_SPEC.settings.responseTimeoutMs,
    );
    if (flags.quick && responseTimeoutMs > QUICK_MAX_TIMEOUT_MS) {
      throw new KitError(
        'KIT_ERR_USAGE',
        `--response-timeout ${responseTimeoutMs} is too long for --quick: its runs go on only ${QUICK_MAX_TIMEOUT_MS / 1000 + 1} s after the fault; use at most ${QUICK_MAX_TIMEOUT_MS}, or leave out --quick`,
      );
    }
    return { lb: balancerKind(flags.lb), policy, responseTimeoutMs };
  },
  run,
  report: { render, shape, hints, caveats, measures, predictions },
});

await runIfEntry(import.meta, experiment);
