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
import { LIMITER_EXERCISE, studentFix } from './lib/exercise/specs.ts';

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
        "the lesson's exercise: your exercises/lesson-7/limiter.ts (copied on first use) counts the loan limit of a 4-worker cluster in Redis, under loans that arrive at once from every worker; a right limiter lets exactly the limit through per member, and again once its window has passed (expected-output/fixed/rate-limit.txt)",
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
interface Options {
  /** --mine: lesson 7's exercise (measure/lib/exercise/limiter-answers.ts checks it). */
  mine: boolean;
}

async function limitOnce(
  { lab, progress, port }: RunContext<Options>,
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
  ctx.progress.step('starting redis-server');
  const redis = await redisForRun(ctx.lab);
  runs.push(await limitOnce(ctx, 'memory', undefined));
  runs.push(await limitOnce(ctx, 'sqlite', undefined));
  if (redis.url) runs.push(await limitOnce(ctx, 'redis', redis.url));
  else notRun.redis = redis.missing!;
  return { machine: ctx.machine, workers: WORKERS, limit: LIMIT, windowS: WINDOW_MS / 1000, runs, notRun };
}

export const experiment = defineExperiment({
  name: 'rate-limit',
  command,
  options: (flags) => ({ mine: flags.mine === true }),
  run,
  report: { render, shape, hints, notShown, measures, predictions },
  exercise: (o: Options) => (o.mine ? studentFix(LIMITER_EXERCISE) : undefined),
});

await runIfEntry(import.meta, experiment);
