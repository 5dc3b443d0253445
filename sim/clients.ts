/**
 * The simulated clients: an open loop (Poisson arrivals, at a rate that may change in phases) or a
 * closed loop (each client sends its next request a think time after its last answer), and the
 * path to the balancer (a delay, a queue or both). The open loop's requests may be users who give
 * up after a timeout and try again (SimConfig.users; their counts and breaker in sim/users.ts).
 * No Node.js APIs.
 */
import { exponential } from './rng.ts';
import type { Rng } from '../core/policies.ts';
import type { SimConfig } from './types.ts';
import type { World } from './world.ts';
import { Ev, REFUSED_MS, type Request, type User } from './entities.ts';

/** Client `client` (-1: the open loop) sends a request, unless the load is over. */
export function send(w: World, client: number): void {
  if (w.now >= w.loadEnd || w.metrics.sent >= w.maxRequests) return;
  if (client < 0 && w.users) return arrive(w);
  w.metrics.sent++;
  deliver(w, { sentAt: w.now, client, tried: [], lastKind: undefined, key: w.keyFor(client) });
}

/** A request on its way: through the path (a queue, a delay) to the balancer. */
function deliver(w: World, req: Request): void {
  let reach = w.now;
  if (w.pathQueue) reach = w.pathFreeAt = Math.max(w.now, w.pathFreeAt) + w.pathQueue();
  if (w.pathDelay) reach += w.pathDelay();
  if (reach > w.now) w.at(reach, Ev.Reach, 0, undefined, req);
  else w.wire.route(w, req);
}

/**
 * When the open loop's next arrival after `from` comes, ms: an exponential gap at the rate of the
 * phase it starts in, drawn again from a phase's start when it would cross into it (the arrivals
 * are memoryless, so that is the same process as one rate per phase).
 */
export function nextArrival(c: Extract<SimConfig['clients'], { kind: 'open' }>, rng: Rng, from: number): number {
  let t = from;
  for (;;) {
    let rate = c.ratePerS;
    let next = Infinity;
    for (const p of c.phases ?? []) {
      if (p.atMs <= t) rate = p.ratePerS;
      else {
        next = p.atMs;
        break;
      }
    }
    const at = t + exponential(rng, 1000 / rate);
    if (at <= next) return at;
    t = next;
  }
}

/** The next open-loop arrival, while the load lasts. */
export function arrival(w: World): void {
  send(w, -1);
  const c = w.config.clients;
  if (c.kind === 'open' && w.now < w.loadEnd && w.metrics.sent < w.maxRequests)
    w.at(nextArrival(c, w.rng, w.now), Ev.Arrival);
}

/** A new user, due now, and its first attempt. */
function arrive(w: World): void {
  const user: User = { dueAt: w.now, attempts: 0 };
  w.users!.counts.users++;
  w.users!.bucket(w.now).users++;
  attempt(w, user);
}

/** An attempt of `user`, through the breaker if there is one. */
function attempt(w: World, user: User): void {
  const u = w.users!;
  const through = u.pass(user, w.now);
  if (through === 'wait') return;
  if (through === 'refused') {
    u.counts.refused++;
    return;
  }
  user.attempts++;
  u.counts.attempts++;
  u.bucket(w.now).attempts++;
  w.metrics.sent++;
  const req: Request = { sentAt: w.now, client: -1, tried: [], lastKind: undefined, key: w.keyFor(-1), user, through };
  w.at(w.now + u.config.timeoutMs, Ev.UserTimeout, 0, undefined, req);
  deliver(w, req);
}

/** An attempt's timeout: unless it was answered, its user gives up on it and may try again at once. */
export function userTimeout(w: World, req: Request): void {
  if (req.answered) return;
  const u = w.users!;
  req.gaveUp = true;
  for (const held of u.settle(req.through as 'closed' | 'trial', false, w.now)) attempt(w, held);
  const user = req.user!;
  // As the lab's users: no attempt again once the schedule is over.
  if (user.attempts <= u.config.retries && w.now <= w.loadEnd) attempt(w, user);
  else u.counts.timedOut++;
}

/** An attempt's answer; false when its user had already given up on it (the work was for nobody). */
function userAnswer(w: World, req: Request, status: number): boolean {
  const u = w.users!;
  if (status < 300) u.counts.finished++;
  if (req.gaveUp) {
    if (status < 300) u.counts.wasted++;
    return false;
  }
  req.answered = true;
  if (status < 300) {
    u.counts.good++;
    u.bucket(req.user!.dueAt).good++;
  } else u.counts.failed++;
  for (const held of u.settle(req.through as 'closed' | 'trial', true, w.now)) attempt(w, held);
  return true;
}

/** The client gets its answer; `none` when no replica was even tried (then its next request waits REFUSED_MS, not 0). */
export function finish(w: World, req: Request, status: number, none = false): void {
  if (req.user && !userAnswer(w, req, status)) return;
  if (w.measuring) w.metrics.answer(w.now, req, status, w.config);
  if (req.client >= 0) {
    if (w.think) w.at(w.now + w.think(), Ev.Send, req.client);
    else if (none) w.at(w.now + REFUSED_MS, Ev.Send, req.client);
    else send(w, req.client);
  }
}
