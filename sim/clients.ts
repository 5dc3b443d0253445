/**
 * The simulated clients: an open loop (Poisson arrivals) or a closed loop (each client sends its
 * next request a think time after its last answer), and the path to the balancer (a delay, a
 * queue or both). No Node.js APIs.
 */
import { exponential } from './rng.ts';
import type { World } from './world.ts';
import { Ev, REFUSED_MS, type Request } from './entities.ts';

/** Client `client` (-1: the open loop) sends a request, unless the load is over. */
export function send(w: World, client: number): void {
  if (w.now >= w.loadEnd || w.metrics.sent >= w.maxRequests) return;
  w.metrics.sent++;
  const req: Request = { sentAt: w.now, client, tried: [], lastKind: undefined, key: w.keyFor(client) };
  let reach = w.now;
  if (w.pathQueue) reach = w.pathFreeAt = Math.max(w.now, w.pathFreeAt) + w.pathQueue();
  if (w.pathDelay) reach += w.pathDelay();
  if (reach > w.now) w.at(reach, Ev.Reach, 0, undefined, req);
  else w.wire.route(w, req);
}

/** The next open-loop arrival, while the load lasts. */
export function arrival(w: World): void {
  send(w, -1);
  const c = w.config.clients;
  if (c.kind === 'open' && w.now < w.loadEnd && w.metrics.sent < w.maxRequests)
    w.at(w.now + exponential(w.rng, 1000 / c.ratePerS), Ev.Arrival);
}

/** The client gets its answer; `none` when no replica was even tried (then its next request waits REFUSED_MS, not 0). */
export function finish(w: World, req: Request, status: number, none = false): void {
  if (w.measuring) w.metrics.answer(w.now, req, status, w.config);
  if (req.client >= 0) {
    if (w.think) w.at(w.now + w.think(), Ev.Send, req.client);
    else if (none) w.at(w.now + REFUSED_MS, Ev.Send, req.client);
    else send(w, req.client);
  }
}
