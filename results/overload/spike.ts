/**
 * Lesson 11's spike, as the lab and the simulator both read it: the plans (--quick and full), and
 * the figures a spike run's timeline gives: the attempts per user after the spike, and how long
 * after it the users were served again. Pure.
 */
import type { SpikePlan, SpikeRun } from './report.ts';

/**
 * The spike's plans: half the capacity, a spike of 2.5× it, then half again for long enough to
 * drain what the spike left (1.5 s of work after a full spike, 0.9 s after a quick one) at the
 * half of capacity the users leave free, with a bucket to spare.
 */
export const SPIKE_PLANS: Record<'quick' | 'full', SpikePlan> = {
  quick: { baseMultiple: 0.5, spikeMultiple: 2.5, beforeS: 0.5, spikeS: 0.6, afterS: 2.75, bucketMs: 250 },
  full: { baseMultiple: 0.5, spikeMultiple: 2.5, beforeS: 1, spikeS: 1, afterS: 4, bucketMs: 250 },
};

/**
 * The breaker: opens after 5 attempts in a row fail (time out), refuses every attempt for 500 ms,
 * then lets one through (half-open) and closes if it is answered. Five in a row is the smallest
 * count a run of timeouts reaches at once and a lone slow answer never does; 500 ms is the users'
 * timeout, so a breaker that tries again finds the queue the timed-out attempts left.
 */
export const BREAKER = { consecutive: 5, halfOpenAfterMs: 500 };
/** One bucket of a spike run's timeline: users by when they were due, attempts by when they were sent. */
interface Bucket {
  users: number;
  good: number;
  attempts: number;
}

/** Served again: from this bucket on, every bucket with users due had 90 % of them answered. */
const SERVED = 0.9;
/** A recovery must hold for at least this many buckets before the run ends. */
const HOLDS_BUCKETS = 2;

/** ms from the spike's end to the first bucket from which users stay served; null if none. */
function recoveredAfter(shares: (number | null)[], fromBucket: number, bucketMs: number): number | null {
  let last = shares.length - 1;
  while (last >= 0 && shares[last] === null) last--;
  let start = last + 1;
  for (let i = last; i >= fromBucket; i--) {
    if (shares[i] !== null && shares[i]! < SERVED) break;
    start = i;
  }
  const held = shares.slice(start, last + 1).filter((s) => s !== null).length;
  return held >= HOLDS_BUCKETS ? (start - fromBucket) * bucketMs : null;
}

/** A spike run's figures from its timeline (buckets of plan.bucketMs from the schedule's start). */
function spikeFigures(
  buckets: readonly Bucket[],
  plan: SpikePlan,
): { attemptsPerUserAfter: number; recoveredAfterMs: number | null; goodShare: (number | null)[] } {
  const spikeEnd = Math.round(((plan.beforeS + plan.spikeS) * 1000) / plan.bucketMs);
  const after = buckets.slice(spikeEnd);
  const usersAfter = after.reduce((n, b) => n + b.users, 0);
  const goodShare = buckets.map((b) => (b.users ? b.good / b.users : null));
  return {
    attemptsPerUserAfter: usersAfter ? after.reduce((n, b) => n + b.attempts, 0) / usersAfter : 0,
    recoveredAfterMs: recoveredAfter(goodShare, spikeEnd, plan.bucketMs),
    goodShare,
  };
}

/** What a spike run's users counted (the lab's or the simulator's). */
interface UsersCounted {
  users: number;
  attempts: number;
  good: number;
  timedOut: number;
  refusedByBreaker: number;
  buckets: readonly Bucket[];
}

/** A spike run from what its users counted and what the service finished (`work`); lateness in ms. */
export function spikeRunOf(
  head: Pick<SpikeRun, 'clients' | 'retries' | 'capacity'>,
  u: UsersCounted,
  plan: SpikePlan,
  work: { finished: number; wasted: number },
  latenessP99Ms: number,
): SpikeRun {
  return {
    ...head,
    users: u.users,
    attempts: u.attempts,
    good: u.good,
    timedOut: u.timedOut,
    refusedByBreaker: u.refusedByBreaker,
    ...spikeFigures(u.buckets, plan),
    finished: work.finished,
    wasted: work.wasted,
    latenessP99Ms,
  };
}
