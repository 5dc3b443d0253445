/**
 * Lesson 11's schedule: users due one after another at a multiple of the service's capacity, read
 * again before each one (measure/lib/overload/users.ts sends them). Bounded: loopback only, at most
 * 600 s, at most MAX_RATE users a second.
 */
import { KitError } from '../../../lib/errors.ts';
import { assertLoopback } from '../load/probe.ts';
import type { UsersOptions } from './users.ts';

/** A stretch of the schedule at one multiple of the service's capacity. */
export interface Phase {
  /** Users per second over the capacity, 0.05 to 5. */
  multiple: number;
  durationS: number;
}

/** Checks a run's options; KIT_ERR_USAGE naming the one out of range. */
export function checkUsers(o: UsersOptions): void {
  assertLoopback(new URL(o.origin));
  for (const p of o.phases) {
    if (!(p.multiple >= 0.05 && p.multiple <= 5))
      throw new KitError('KIT_ERR_USAGE', `a phase's multiple of capacity is 0.05 to 5; got ${p.multiple}`);
    if (!(p.durationS > 0)) throw new KitError('KIT_ERR_USAGE', `a phase lasts more than 0 s; got ${p.durationS}`);
  }
  const total = o.phases.reduce((s, p) => s + p.durationS, 0);
  if (!(total > 0 && total <= 600)) throw new KitError('KIT_ERR_USAGE', `a schedule lasts 0 to 600 s; got ${total}`);
  if (!(o.timeoutMs >= 50 && o.timeoutMs <= 60_000))
    throw new KitError('KIT_ERR_USAGE', `a timeout is 50 to 60000 ms; got ${o.timeoutMs}`);
  if (!(Number.isInteger(o.retries) && o.retries >= 0 && o.retries <= 5))
    throw new KitError('KIT_ERR_USAGE', `retries are 0 to 5; got ${o.retries}`);
}

/** The most users per second the schedule makes, whatever the capacity reads. */
const MAX_RATE = 20_000;

/**
 * The phases' due times, ms from the start, made one at a time: each gap is one over the phase's
 * multiple of the capacity read at that moment.
 */
export function* dueTimes(phases: Phase[], capacity: () => number): Generator<number> {
  let offset = 0;
  for (const p of phases) {
    const end = offset + p.durationS * 1000;
    for (let t = offset; t < end; ) {
      yield t;
      const rate = Math.min(MAX_RATE, Math.max(1, p.multiple * capacity()));
      t += 1000 / rate;
    }
    offset = end;
  }
}
