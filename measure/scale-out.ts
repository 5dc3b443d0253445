/**
 * Lesson 4 · scale-out: does adding replicas add throughput?
 *
 * Starts 5 replicas sharing one SQLite file, and for 1, 2, 3 and 5 of them a balancer in front
 * (round robin); runs the same closed-loop load for two workloads: (a) a user scenario — create a
 * user, read it back, check 201 then 200 — and (b) the CPU-bound /work?ms=5.
 */
import { defineCommand } from '../lib/cli.ts';
import { COMMON_FLAGS, runExperiment, type RunContext } from './lib/experiment.ts';
import { runLoad } from './lib/load.ts';
import { balancerKind, LB_FLAG, startBalancer, startReplicas, type BalancerKind } from './lib/topology.ts';
import { caveats, hints, render, shape, type ScaleOutResult, type ScaleStep } from './report/scale-out.ts';

const command = defineCommand({
  usage: 'npx tsx measure/scale-out.ts [flags]',
  summary: 'Runs the same closed-loop load through the balancer to 1, 2, 3 and 5 replicas: a create-then-read user scenario, and the CPU-bound /work route.',
  flags: { ...COMMON_FLAGS, lb: LB_FLAG },
  epilogue: 'Example: npx tsx measure/scale-out.ts --lb nginx',
});

const COUNTS = [1, 2, 3, 5];
const CONNECTIONS = 8;
const WORK_MS = 5;

/**
 * The user scenario, as autocannon's request sequence: create a user, then read it back, with a
 * check on each answer's status (201, then 200) counted in `checks.failed`, as a k6 check would.
 */
const userScenario = (checks: { failed: number }) => [
  {
    method: 'POST' as const,
    path: '/users',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'ada' }),
    onResponse: (status: number, body: string, context: Record<string, unknown>) => {
      if (status !== 201) checks.failed++;
      context.id = status === 201 ? JSON.parse(body).id : 'missing';
    },
  },
  {
    method: 'GET' as const,
    setupRequest: (req: Record<string, unknown>, context: Record<string, unknown>) => ({ ...req, path: `/users/${context.id ?? 'missing'}` }),
    onResponse: (status: number) => {
      if (status !== 200) checks.failed++;
    },
  },
];

async function run({ lab, progress, options, quick, machine, port }: RunContext<{ lb: BalancerKind }>): Promise<ScaleOutResult> {
  const durationS = quick ? 1 : 2;
  progress.step(`starting ${Math.max(...COUNTS)} replicas`);
  const all = await startReplicas(lab, Math.max(...COUNTS));
  const workloads: ScaleOutResult['workloads'] = [
    { name: 'user-scenario', description: 'POST /users then GET /users/:id, checking 201 then 200', steps: [] },
    { name: 'cpu-bound', description: `GET /work?ms=${WORK_MS} (${WORK_MS} ms of CPU each)`, steps: [] },
  ];
  for (const n of COUNTS) {
    const lb = await startBalancer(lab, options.lb, 'round-robin', all.slice(0, n), port);
    for (const w of workloads) {
      progress.step(`${n} replica(s): ${w.name} for ${durationS} s`);
      const checks = { failed: 0 };
      const r =
        w.name === 'user-scenario'
          ? await runLoad({ url: lb.url, connections: CONNECTIONS, durationS, requests: userScenario(checks) as never })
          : await runLoad({ url: `${lb.url}/work?ms=${WORK_MS}`, connections: CONNECTIONS, durationS });
      if (w.name === 'cpu-bound') checks.failed = r.counts.non2xx;
      const step: ScaleStep = {
        replicas: n,
        throughput: r.throughput,
        mean: r.latency.mean,
        p95: r.latency.p95,
        failedChecks: checks.failed + r.counts.errors,
        requests: r.counts.completed,
        generatorCpu: r.generatorCpu,
      };
      w.steps.push(step);
    }
    await lab.stop(lb);
  }
  return { machine, balancer: options.lb, load: { connections: CONNECTIONS, durationS }, workloads };
}

process.exitCode = await runExperiment({
  name: 'scale-out',
  command,
  options: (flags) => ({ lb: balancerKind(flags.lb) }),
  run,
  report: { render, shape, hints, caveats },
});
