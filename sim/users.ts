/**
 * What the simulated users of SimConfig.users keep (sim/clients.ts sends their attempts): their
 * counts, a timeline by the time each user was due, and the circuit breaker every attempt passes
 * when the config has one. No Node.js APIs.
 *
 * The breaker behaves as cockatiel's CircuitBreakerPolicy with a ConsecutiveBreaker and a constant
 * halfOpenAfter, as lesson 11's users run it (measure/lib/overload/users.ts), read from cockatiel
 * 3.2's source:
 *   - closed: every attempt is sent; an answer of any status is a success and sets the count of
 *     failures to 0, a timeout adds one, and at `consecutive` of them the breaker opens;
 *   - open: an attempt is refused (BrokenCircuitError) until `halfOpenAfterMs` have passed since it
 *     opened; the first attempt after that is sent as the half-open trial;
 *   - half-open: attempts wait in the client for the trial (they are not sent, and no timeout runs
 *     for them); when it is answered the breaker closes and they are sent, when it times out the
 *     breaker opens again and they are refused.
 */
import type { UsersBucket, UsersConfig, UsersReport } from './types.ts';
import type { User } from './entities.ts';

/** How the breaker treats an attempt now: sent (as one of many, or as the trial), held, or refused. */
type Passage = 'closed' | 'trial' | 'wait' | 'refused';

export class Users {
  readonly counts = { users: 0, attempts: 0, good: 0, timedOut: 0, refused: 0, failed: 0, finished: 0, wasted: 0 };
  private readonly buckets: UsersBucket[];
  private state: 'closed' | 'open' | 'half-open' = 'closed';
  private failures = 0;
  private openedAt = 0;
  private waiting: User[] = [];

  /** `loadEndMs`: when users stop coming, which sets the timeline's length. */
  constructor(
    readonly config: UsersConfig,
    loadEndMs: number,
  ) {
    const n = Math.ceil(loadEndMs / config.bucketMs) + 1;
    this.buckets = Array.from({ length: n }, () => ({ users: 0, good: 0, attempts: 0 }));
  }

  /** The timeline's bucket for a time, ms (the last one takes whatever comes after it). */
  bucket(ms: number): UsersBucket {
    const i = Math.min(this.buckets.length - 1, Math.max(0, Math.floor(ms / this.config.bucketMs)));
    return this.buckets[i]!;
  }

  /** Asks the breaker about an attempt of `user` at `now`; a held user is kept until the trial ends. */
  pass(user: User, now: number): Passage {
    const b = this.config.breaker;
    if (!b || this.state === 'closed') return 'closed';
    if (this.state === 'half-open') {
      this.waiting.push(user);
      return 'wait';
    }
    if (now - this.openedAt < b.halfOpenAfterMs) return 'refused';
    this.state = 'half-open';
    return 'trial';
  }

  /**
   * An attempt let through as `through` was answered (`ok`) or timed out at `now`. Returns the users
   * held for the trial when it ends, to be asked again (they then go through, or are refused).
   */
  settle(through: 'closed' | 'trial', ok: boolean, now: number): User[] {
    const b = this.config.breaker;
    if (!b) return [];
    if (ok) this.failures = 0;
    else this.failures++;
    if (through === 'trial') {
      if (ok) this.state = 'closed';
      else this.open(now);
      const held = this.waiting;
      this.waiting = [];
      return held;
    }
    if (!ok && this.failures >= b.consecutive) this.open(now);
    return [];
  }

  private open(now: number): void {
    if (this.state === 'open') return;
    this.state = 'open';
    this.openedAt = now;
  }

  report(): UsersReport {
    const c = this.counts;
    return {
      users: c.users,
      attempts: c.attempts,
      good: c.good,
      timedOut: c.timedOut,
      refusedByBreaker: c.refused,
      failed: c.failed,
      finished: c.finished,
      wasted: c.wasted,
      bucketMs: this.config.bucketMs,
      buckets: this.buckets.map((b) => ({ ...b })),
    };
  }
}
