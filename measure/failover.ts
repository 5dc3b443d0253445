/**
 * Lesson 4 · failover: what clients see when a replica goes away under load.
 *
 * For each fault, a fresh set of 3 replicas behind the balancer; /fast with 8 connections; at
 * second 5 (2 with --quick) replica app3 gets SIGTERM (it drains), SIGKILL (it crashes) or SIGSTOP
 * (it freezes: the kernel still accepts connections, nothing answers). Then the kill again with
 * --retries 0, and a kill while the clients create users with POST /users. The balancer's response
 * timeout is 1.5 s for these runs, so a frozen replica costs 1.5 s per request it holds.
 */
import { openDatabase } from '../servers/lib/sqlite.ts';
import { defineCommand } from '../lib/cli.ts';
import { isPolicy, POLICIES, type Policy } from '../servers/lib/policies.ts';
import { KitError } from '../lib/errors.ts';
import { FAILOVER_DEFAULTS } from '../servers/lib/upstreams.ts';
import { COMMON_FLAGS, runExperiment, type RunContext } from './lib/experiment.ts';
import { median } from './lib/latency.ts';
import { runLoad, startLoad } from './lib/load.ts';
import { balancerKind, LB_FLAG, retriesOf, startBalancer, startReplicas, type BalancerKind } from './lib/topology.ts';
import { caveats, hints, render, shape, type Fault, type FailoverResult, type FaultRun, type PostCheck } from './report/failover.ts';

const command = defineCommand({
  usage: 'npx tsx measure/failover.ts [flags]',
  summary:
    'Stops, kills or freezes one of three replicas while /fast runs through the balancer, and prints a per-second timeline ' +
    '(req/s, errors, p99) and a summary: errors clients saw, requests retried, slow requests. Then the kill without retries, ' +
    'and a kill during POST /users (no user may be stored twice).',
  flags: {
    ...COMMON_FLAGS,
    lb: LB_FLAG,
    policy: { type: 'string', valueName: 'policy', description: `balancing policy: ${POLICIES.join(', ')}`, default: 'round-robin' },
  },
  epilogue: 'Example: npx tsx measure/failover.ts --lb nginx --quick',
});

interface Options {
  lb: BalancerKind;
  policy: Policy;
}

const REPLICAS = 3;
const CONNECTIONS = 8;
/** The balancer's response timeout in these runs, ms: what a frozen replica costs a request. */
const RESPONSE_TIMEOUT_MS = 1500;
/** "Slow": a request that took at least this long (the summary's ≥ 1 s column). */
const SLOW_MS = 1000;

interface Plan {
  name: string;
  fault: Fault;
  method: 'GET' | 'POST';
  retries: number;
}

const PLANS: Plan[] = [
  { name: 'sigterm', fault: 'sigterm', method: 'GET', retries: FAILOVER_DEFAULTS.retries },
  { name: 'sigkill', fault: 'sigkill', method: 'GET', retries: FAILOVER_DEFAULTS.retries },
  { name: 'sigstop', fault: 'sigstop', method: 'GET', retries: FAILOVER_DEFAULTS.retries },
  { name: 'sigkill-without-retries', fault: 'sigkill', method: 'GET', retries: 0 },
  { name: 'post-during-kill', fault: 'sigkill', method: 'POST', retries: FAILOVER_DEFAULTS.retries },
];

const SIGNAL: Record<Fault, NodeJS.Signals> = { sigterm: 'SIGTERM', sigkill: 'SIGKILL', sigstop: 'SIGSTOP' };

async function runPlan(ctx: RunContext<Options>, plan: Plan, index: number): Promise<FaultRun> {
  const { lab, progress, options, quick, port } = ctx;
  const faultAtS = quick ? 2 : 5;
  const durationS = quick ? 5 : 11;
  const label = `${index + 1}/${PLANS.length} ${plan.name}`;
  progress.step(`${label}: starting ${REPLICAS} replicas and ${options.lb}`);
  const replicas = await startReplicas(lab, REPLICAS);
  const victim = replicas.at(-1)!;
  const lb = await startBalancer(lab, options.lb, options.policy, replicas, port, true, [
    '--retries',
    String(plan.retries),
    '--response-timeout',
    String(RESPONSE_TIMEOUT_MS),
  ]);
  // A short warm-up first, so the timeline shows the fault rather than the JIT compiler warming up.
  progress.step(`${label}: warm-up`);
  await runLoad({ url: `${lb.url}/fast`, connections: CONNECTIONS, durationS: 1 });
  const runTag = `${process.pid}-${index}-${Date.now()}`;
  const createdIds: number[] = [];
  let sent = 0;
  progress.step(`${label}: ${plan.method} with ${CONNECTIONS} connections for ${durationS} s, ${SIGNAL[plan.fault]} to ${victim.name} at second ${faultAtS}`);
  const load = startLoad({
    url: `${lb.url}/fast`,
    connections: CONNECTIONS,
    durationS,
    timeline: true,
    slowMs: SLOW_MS,
    timeoutS: 10,
    ...(plan.method === 'POST'
      ? {
          requests: [
            {
              method: 'POST' as const,
              path: '/users',
              headers: { 'content-type': 'application/json' },
              setupRequest: (req) => ({ ...req, body: JSON.stringify({ name: `failover-${runTag}-${++sent}` }) }),
              onResponse: (status: number, body: string) => {
                if (status === 201) createdIds.push((JSON.parse(body) as { id: number }).id);
              },
            },
          ],
        }
      : {}),
  });
  const timer = setTimeout(() => victim.proc.signal(SIGNAL[plan.fault]), faultAtS * 1000);
  let result;
  try {
    result = await load.result;
  } finally {
    clearTimeout(timer);
    if (plan.fault === 'sigstop') victim.proc.signal('SIGCONT');
  }
  const retries = await retriesOf(lb);
  let post: PostCheck | undefined;
  if (plan.method === 'POST') {
    post = checkUsers(replicas.dbFile!, `failover-${runTag}-`, createdIds);
    post.retried = retries.requests.filter((r) => r.method === 'POST').length;
  }
  await lab.stop(lb);
  await Promise.all(replicas.map((r) => lab.stop(r.proc)));
  const slow = result.slow!;
  return {
    name: plan.name,
    fault: plan.fault,
    method: plan.method,
    retries: plan.retries,
    faultAtS,
    // The last, partial second (requests finishing after the duration) would read as a drop.
    timeline: (result.timeline ?? []).filter((sec) => sec.second < durationS),
    totals: { completed: result.counts.completed, ok2xx: result.counts.ok2xx, non2xx: result.counts.non2xx, errors: result.counts.errors },
    retried: retries.total,
    slow: { count: slow.count, medianMs: slow.latenciesMs.length ? median(slow.latenciesMs) : 0, maxMs: slow.latenciesMs.at(-1) ?? 0 },
    p99: result.latency.p99,
    max: result.latency.max,
    ...(post ? { post } : {}),
  };
}

/** Reads the users this run wrote (names starting with `prefix`) and checks them against the 201 answers. */
function checkUsers(file: string, prefix: string, createdIds: number[]): PostCheck {
  const db = openDatabase(file, { readonly: true, fileMustExist: true });
  try {
    const rows = db.prepare('SELECT id, name FROM users WHERE name LIKE ?').all(`${prefix}%`) as { id: number; name: string }[];
    const byId = new Map<number, number>();
    const byName = new Map<string, number>();
    for (const r of rows) {
      byId.set(r.id, (byId.get(r.id) ?? 0) + 1);
      byName.set(r.name, (byName.get(r.name) ?? 0) + 1);
    }
    const createdAndStoredOnce = new Set(createdIds).size === createdIds.length ? createdIds.filter((id) => byId.get(id) === 1).length : 0;
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
    load: { connections: CONNECTIONS, durationS: ctx.quick ? 5 : 11, route: '/fast (POST /users in the last run)' },
    settings: {
      responseTimeoutMs: RESPONSE_TIMEOUT_MS,
      maxFails: FAILOVER_DEFAULTS.maxFails,
      failTimeoutS: FAILOVER_DEFAULTS.failTimeoutMs / 1000,
      retries: FAILOVER_DEFAULTS.retries,
    },
    slowThresholdMs: SLOW_MS,
    runs,
  };
}

process.exitCode = await runExperiment({
  name: 'failover',
  command,
  options: (flags) => {
    const policy = String(flags.policy);
    if (!isPolicy(policy)) throw new KitError('KIT_ERR_USAGE', `unknown policy '${policy}': pick one of ${POLICIES.join(', ')}`);
    return { lb: balancerKind(flags.lb), policy };
  },
  run,
  report: { render, shape, hints, caveats },
});
