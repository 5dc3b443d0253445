/**
 * Lesson 7 · rate-limit: a per-member limit, 10 loans per minute, on a 4-worker cluster.
 *
 * For each store (memory, SQLite, Redis), one member makes 60 loan attempts (POST /loan with its
 * name), each on a fresh connection so that the cluster spreads them over the workers, and the
 * experiment counts how many got 200 and how many 429.
 */
import { defineCommand } from '../lib/cli.ts';
import type { StoreKind } from '../servers/lib/state/stores.ts';
import { COMMON_FLAGS, defineExperiment, runIfEntry, type RunContext } from './lib/harness/experiment.ts';
import { probe } from './lib/load/probe.ts';
import type { WorkerStatus } from '../servers/contracts.ts';
import { redisForRun, storeArgs } from './lib/process/stores.ts';
import { hints, notShown, render, shape, type LimitRun, type RateLimitResult } from '../results/rate-limit/report.ts';
import { measures, predictions } from '../results/rate-limit/predictions.ts';
import { KitError } from '../lib/errors.ts';
import path from 'node:path';
import { copyOnce, exerciseExpected, exercisePath } from './lib/harness/exercise-copy.ts';

const command = defineCommand({
  usage: 'npx tsx measure/rate-limit.ts [flags]',
  summary:
    'One member makes 60 loan attempts against a 4-worker cluster whose limit is 10 loans per minute, kept in process memory, ' +
    'in SQLite or in Redis, and counts how many got through. Redis rows need redis-server (or REDIS_URL).',
  flags: {
    ...COMMON_FLAGS,
    mine: {
      type: 'boolean',
      description:
        "the lesson's exercise: the Redis row's loan limit is counted by your exercises/lesson-7/limiter.ts (copied on first use); once every worker counts in Redis, it lets exactly the limit through (expected-output/fixed/rate-limit.txt)",
    },
  },
  epilogue: 'Example: npx tsx measure/rate-limit.ts',
});

const WORKERS = 4;
const LIMIT = 10;
const WINDOW_MS = 60_000;
/**
 * More than WORKERS × LIMIT, so that a limit kept per process (each worker lets 10 through:
 * 40 in all) shows apart from no limit at all (all 60 through).
 */
const ATTEMPTS = 60;
/** The exercise's starting point, which --mine copies for the student. */
const EXERCISE = 'servers/exercises/lesson-7/limiter.ts';

interface Options {
  /** With --mine: the student's copy of servers/exercises/lesson-7/limiter.ts. */
  mine: string | undefined;
}

async function limitOnce(
  { lab, progress, port, options }: RunContext<Options>,
  store: StoreKind,
  redisUrl: string | undefined,
): Promise<LimitRun> {
  progress.step(`${store}: starting a ${WORKERS}-worker cluster, limit ${LIMIT} per ${WINDOW_MS / 1000} s`);
  const { args } = storeArgs(lab, store, redisUrl, `limit-${store}`);
  const cluster = await lab.start({
    server: 'managed-cluster',
    args: [
      '--port',
      String(port),
      '--workers',
      String(WORKERS),
      '--loan-limit',
      String(LIMIT),
      '--loan-window',
      String(WINDOW_MS),
      ...args,
      ...(options.mine ? ['--limiter', options.mine] : []),
    ],
  });
  progress.step(`${store}: ${ATTEMPTS} loan attempts by one member`);
  const member = `reader-${process.pid}-${store}`;
  const allowedByWorker: Record<string, number> = {};
  let allowed = 0;
  let refused = 0;
  for (let i = 0; i < ATTEMPTS; i++) {
    const r = await probe<WorkerStatus>(`${cluster.url}/loan`, { method: 'POST', json: { member } });
    if (r.status === 200) {
      allowed++;
      allowedByWorker[String(r.body.pid)] = (allowedByWorker[String(r.body.pid)] ?? 0) + 1;
    } else if (r.status === 429) refused++;
    else
      throw new KitError(
        'KIT_ERR_UNEXPECTED_STATUS',
        `POST /loan answered ${r.status}: ${JSON.stringify(r.body).slice(0, 200)}`,
      );
  }
  await lab.stop(cluster);
  return { store, attempts: ATTEMPTS, allowed, refused, allowedByWorker };
}

async function run(ctx: RunContext<Options>): Promise<RateLimitResult> {
  const runs: LimitRun[] = [];
  const notRun: Record<string, string> = {};
  const mine = ctx.options.mine;
  if (mine && copyOnce(EXERCISE, mine))
    ctx.progress.note(`copied ${EXERCISE} to ${path.relative(process.cwd(), mine)}: edit it, then run this again`);
  ctx.progress.step('starting redis-server');
  const redis = await redisForRun(ctx.lab);
  if (mine && !redis.url)
    throw new KitError('KIT_ERR_REDIS_MISSING', `the exercise counts in Redis, and ${redis.missing!.split(',')[0]}`);
  // The exercise changes only the Redis row: the other two are left out.
  if (mine) ctx.progress.note(`the Redis row only, its loan limit counted by ${path.relative(process.cwd(), mine)}`);
  if (!mine) runs.push(await limitOnce(ctx, 'memory', undefined));
  if (!mine) runs.push(await limitOnce(ctx, 'sqlite', undefined));
  if (redis.url) runs.push(await limitOnce(ctx, 'redis', redis.url));
  else notRun.redis = redis.missing!;
  return { machine: ctx.machine, workers: WORKERS, limit: LIMIT, windowS: WINDOW_MS / 1000, runs, notRun };
}

export const experiment = defineExperiment({
  name: 'rate-limit',
  command,
  options: (flags) => ({ mine: flags.mine ? exercisePath('lesson-7', 'limiter.ts') : undefined }),
  run,
  report: { render, shape, hints, notShown, measures, predictions },
  expected: (o: Options) => exerciseExpected('rate-limit', o.mine !== undefined, 'your limiter, counting in Redis'),
});

await runIfEntry(import.meta, experiment);
