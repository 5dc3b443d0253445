/**
 * The simulated balancer: the kit's own choice step (core/choose.ts, with the policies'
 * pickers, and ip-hash's pickByKey as the balancer-core does) for every try, and its failover rules (core/failover.ts): a failed try rests
 * its replica after max_fails and is retried on another while the rules allow. Stale load
 * information (`staleMs`) is a refresh of what the picker sees. No Node.js APIs.
 */
import { chooseReplica, type Candidate } from '../core/choose.ts';
import { pickByKey } from '../core/policies.ts';
import { failureStatus, mayRetry, recordFailure, triesAllowed, type FailureKind } from '../core/failover.ts';
import type { World } from './world.ts';
import { Ev, acceptsConnections, REFUSED_MS, type Replica, type Request } from './entities.ts';

/** Picks a replica for `req`'s next try and sends it there, or answers the client when none is open. */
export function tryNext(w: World, req: Request): void {
  const key = req.key;
  const prefer = key === undefined ? undefined : (ups: readonly Candidate[]) => pickByKey(ups, key);
  const choice = chooseReplica(w.replicas, req.tried, w.rules, w.now, w.pick, w.cursor, w.rng, prefer);
  if (!choice) return w.wire.answer(w, req, req.lastKind ? failureStatus(req.lastKind) : 503, req.tried.length === 0);
  w.cursor = choice.cursor;
  const r = w.replicas[choice.index]!;
  req.tried.push(choice.index);
  if (!acceptsConnections(r)) {
    // Refused: the balancer learns it a loopback round trip later (and a client whose every try
    // is refused cannot loop forever at one instant).
    w.at(w.now + REFUSED_MS, Ev.Refused, choice.index, undefined, req);
    return;
  }
  w.setLive(r, 1);
  w.wire.enqueue(w, r, req, -1, choice.probe);
}

/** A try failed: the balancer records it and retries on another replica when the rules allow. */
export function fail(w: World, req: Request, r: Replica, kind: FailureKind): void {
  // A failed probe rests the replica again: recordFailure does that for any failed try.
  recordFailure(r.health, w.rules, w.now);
  req.lastKind = kind;
  if (req.tried.length < triesAllowed(w.fo.retries, w.replicas.length) && mayRetry(w.method, kind))
    return tryNext(w, req);
  w.wire.answer(w, req, failureStatus(kind));
}

/** Stale load information: the picker sees each replica's in-flight count as of now, until the next refresh. */
export function refresh(w: World): void {
  for (const r of w.replicas) r.inFlight = r.live;
  w.at(w.now + w.config.staleMs!, Ev.Refresh);
}
