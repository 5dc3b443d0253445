/**
 * Lesson 7's answers battery: a 4-worker cluster whose loan limit the student's hit() counts in
 * Redis, hit by many loans at once, each on a connection of its own so that every worker takes
 * some. A healthy limiter lets exactly the limit through per member, however the hits arrive and
 * whichever worker takes them, and opens a new window once the old one has passed. Which requests
 * get through is a race, so the battery compares counts per member, not request by request.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import { KitError } from '../../../lib/errors.ts';
import type { AnswerCheck, FixAnswers } from '../../../results/report/answers.ts';
import type { WorkerStatus } from '../../../servers/contracts.ts';
import { probe } from '../load/probe.ts';
import { redisForRun, storeArgs } from '../process/stores.ts';
import type { AnswersContext } from './spec.ts';

const WORKERS = 4;
const LIMIT = 10;
/**
 * The window, ms: six times the first burst's time here (200 loans in about 250 ms), so that a
 * right limiter sees the whole burst in one window, and short enough to wait for once.
 */
export const LIMIT_WINDOW_MS = 1500;
/** The first burst: loans per member, and members. */
const FIRST = { each: 50, members: 4 };
/** The second burst, once the first window has passed: loans per member, and members. */
const SECOND = { each: 20, members: 2 };
/**
 * How long after the first burst began the second one starts, beyond the window: the first hit
 * reaches Redis within milliseconds of the start, and its window then ends by this much.
 */
const AFTER_WINDOW_MS = 300;

/** What one member's loans of a burst got: allowed and refused, the workers that allowed them, and any other answer. */
interface MemberTally {
  allowed: number;
  refused: number;
  byWorker: Map<number, number>;
  other: string[];
}

/** `each` loans for each of `members`, all at once, each on its own connection; their answers by member. */
async function burst(url: string, members: string[], each: number): Promise<Map<string, MemberTally>> {
  const tallies = new Map<string, MemberTally>(
    members.map((m) => [m, { allowed: 0, refused: 0, byWorker: new Map(), other: [] }]),
  );
  // Interleaved, so that no member's loans all reach the same worker first.
  const order = Array.from({ length: each * members.length }, (_, i) => members[i % members.length]!);
  await Promise.all(
    order.map(async (member) => {
      const t = tallies.get(member)!;
      try {
        const r = await probe<WorkerStatus & { error?: string }>(`${url}/loan`, {
          method: 'POST',
          json: { member },
          timeoutMs: 10_000,
        });
        if (r.status === 200) {
          t.allowed++;
          t.byWorker.set(r.body.pid, (t.byWorker.get(r.body.pid) ?? 0) + 1);
        } else if (r.status === 429) t.refused++;
        // The file is the student's own: its name would crowd out what it threw.
        else t.other.push(`${r.status} ${(r.body?.error ?? '').replace(/ in \S+ threw:/, ' threw:')}`.trim());
      } catch (err) {
        t.other.push(`no answer: ${(err as Error).message}`);
      }
    }),
  );
  return tallies;
}

/** A member's tally in a few words: `40 allowed: 10 + 10 + 10 + 10 by worker`, `0 allowed, 20 answered 500 …`. */
export function tallyText(t: MemberTally): string {
  const split = [...t.byWorker.values()];
  if (t.other.length)
    return `${t.allowed || t.refused ? `${t.allowed} allowed, ` : ''}${t.other.length} answered ${t.other[0]}`;
  return `${t.allowed} allowed${split.length > 1 ? `: ${split.join(' + ')} by worker` : ''}`;
}

/** One check per member: the healthy limiter allows min(limit, sent) and refuses the rest with 429. */
function checks(tallies: Map<string, MemberTally>, each: number, what: string): AnswerCheck[] {
  const allowed = Math.min(LIMIT, each);
  return [...tallies].map(([member, t]) => ({
    request: `${each} loans by ${member} among ${what}`,
    healthy: `${allowed} allowed`,
    yours: tallyText(t),
    same: t.allowed === allowed && t.refused === each - allowed && t.other.length === 0,
  }));
}

/** Runs lesson 7's battery against the limiter in `ctx.file`. */
export async function limiterAnswers(ctx: AnswersContext): Promise<FixAnswers> {
  ctx.progress.step('starting redis-server');
  const redis = await redisForRun(ctx.lab);
  if (!redis.url)
    throw new KitError('KIT_ERR_REDIS_MISSING', `the exercise counts in Redis, and ${redis.missing!.split(',')[0]}`);
  ctx.progress.step(`your hit()'s answers: a ${WORKERS}-worker cluster, limit ${LIMIT} per ${LIMIT_WINDOW_MS} ms`);
  const { args } = storeArgs(ctx.lab, 'redis', redis.url, 'answers');
  const cluster = await ctx.lab.start({
    server: 'managed-cluster',
    args: [
      ...['--port', '0', '--workers', String(WORKERS), '--loan-limit', String(LIMIT)],
      ...['--loan-window', String(LIMIT_WINDOW_MS), ...args, '--limiter', ctx.file],
    ],
  });
  try {
    const members = Array.from({ length: FIRST.members }, (_, i) => `reader-${i + 1}`);
    const sent = FIRST.each * FIRST.members;
    ctx.progress.step(`${sent} loans at once by ${FIRST.members} members, limit ${LIMIT} per ${LIMIT_WINDOW_MS} ms`);
    const began = performance.now();
    const first = await burst(cluster.url, members, FIRST.each);
    const out = checks(first, FIRST.each, `${sent} at once`);
    // A window the first burst opened has closed by now, wherever it began: a designed wait, not a readiness one.
    const wait = began + LIMIT_WINDOW_MS + AFTER_WINDOW_MS - performance.now();
    ctx.progress.step(`waiting ${Math.round(wait)} ms for the window to pass, then loans at once again`);
    await sleep(Math.max(0, wait));
    const second = await burst(cluster.url, members.slice(0, SECOND.members), SECOND.each);
    out.push(...checks(second, SECOND.each, `${SECOND.each * SECOND.members} at once, the window past`));
    return { healthyIs: 'a healthy limiter', checks: out };
  } finally {
    await ctx.lab.stop(cluster);
  }
}
