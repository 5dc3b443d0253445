/**
 * A simulated replica: one event loop that serves one job at a time, first come first served
 * or in turns as Node does, optionally with a thread pool after it; and its life under faults
 * (kill, freeze, thaw, stop), start-up and retirement, as the state machine in world.ts says.
 *
 * Speed: a first-come-first-served server's completion time is known when a job joins its queue
 * (max(now, when the server frees) + service), and a turn's when the turn starts, so a replica
 * only needs its next completion in the event queue; a freeze or a kill re-plans the affected
 * jobs. No Node.js APIs.
 */
import { recordSuccess } from '../core/failover.ts';
import type { World } from './world.ts';
import { Ev, isFrozen, servesOpenConnections, type Job, type Replica, type Request } from './entities.ts';

/** Fixes `job`'s start and end on its replica's loop (and pool) from `from` on, and books its busy and queue time. */
function plan(w: World, r: Replica, job: Job, from: number): void {
  job.start = Math.max(from, r.loopFreeAt);
  job.loopEnd = job.start + job.loopMs;
  r.loopFreeAt = job.loopEnd;
  job.end = job.loopEnd;
  if (job.poolMs > 0) {
    let k = 0;
    for (let i = 1; i < r.poolFreeAt.length; i++) if (r.poolFreeAt[i]! < r.poolFreeAt[k]!) k = i;
    job.end = Math.max(job.loopEnd, r.poolFreeAt[k]!) + job.poolMs;
    r.poolFreeAt[k] = job.end;
  }
  w.spread(r.busy, job.start, job.loopEnd, 1);
  w.spread(r.occupancy, job.occFrom, job.end, 1);
  job.planned = true;
  r.planned++;
  // With a pool, jobs may finish out of order: each gets its own event. Without one they finish
  // in the order planned, so only the head's completion is in the event queue (a smaller heap).
  if (w.pooled) w.at(job.end, Ev.Complete, 0, job, undefined, r.epoch);
  else r.line.push(job);
  if (job.req && !job.timeoutPlanned && job.end - job.tryAt > w.fo.responseTimeoutMs) {
    job.timeoutPlanned = true;
    w.at(job.tryAt + w.fo.responseTimeoutMs, Ev.Timeout, 0, job);
  }
}

/** Takes back what a planned `job` would still have done after `t` (a freeze or kill at t). */
function unplan(w: World, r: Replica, job: Job, t: number): void {
  w.spread(r.busy, Math.max(job.start, t), job.loopEnd, -1);
  w.spread(r.occupancy, Math.max(job.occFrom, t), job.end, -1);
  job.occFrom = Math.max(job.occFrom, t);
  // What remains to do, for a thaw: the unfinished part of each phase.
  job.loopMs = Math.max(0, job.loopEnd - Math.max(job.start, t));
  if (job.poolMs > 0) job.poolMs = Math.min(job.poolMs, job.end - Math.max(job.loopEnd, t));
  job.planned = false;
  r.planned--;
}

/** Puts the head job's completion in the event queue (replicas without a pool). */
function scheduleHead(w: World, r: Replica): void {
  if (w.pooled || r.headScheduled || isFrozen(r) || r.lineHead >= r.line.length) return;
  r.headScheduled = true;
  const head = r.line[r.lineHead]!;
  w.at(head.end, Ev.Complete, 0, head, undefined, r.epoch);
}

/**
 * Node's event loop in turns (loop: 'turns'): the requests that arrived while the loop was busy
 * are served in the next turn, in the order the kernel reports their connections ready, which
 * the model takes as random. A FIFO loop serves them in arrival order instead.
 */
function startTurn(w: World, r: Replica): void {
  const batch = r.pending;
  r.pending = [];
  for (let i = batch.length - 1; i > 0; i--) {
    const k = Math.floor(w.rng() * (i + 1));
    [batch[i], batch[k]] = [batch[k]!, batch[i]!];
  }
  for (const job of batch) plan(w, r, job, w.now);
  scheduleHead(w, r);
}

/** A try (or, without `req`, a hog request) reaches replica `r`. */
export function enqueue(w: World, r: Replica, req: Request | undefined, hog: number, probe: boolean): void {
  const job: Job = {
    replica: r,
    req,
    hog,
    probe,
    tryAt: w.now,
    occFrom: w.now,
    start: 0,
    loopEnd: 0,
    end: 0,
    loopMs: req ? r.service() : w.hogMs[hog]!(),
    poolMs: req && w.poolWork ? w.poolWork() : 0,
    settled: 0,
    timeoutPlanned: false,
    planned: false,
  };
  r.jobs.add(job);
  if (isFrozen(r) || (w.turns && (r.planned > 0 || r.pending.length > 0))) {
    // Waits unplanned: for the thaw, or for the next turn, which starts when this one ends
    // (loopFreeAt). A frozen replica's thaw may never come: plan the timeout now. Otherwise plan
    // it now only if it is already certain; else plan() does when the turn starts, in time.
    r.pending.push(job);
    if (req && (isFrozen(r) || r.loopFreeAt + job.loopMs - w.now > w.fo.responseTimeoutMs)) {
      job.timeoutPlanned = true;
      w.at(w.now + w.fo.responseTimeoutMs, Ev.Timeout, 0, job);
    }
    return;
  }
  plan(w, r, job, w.now);
  scheduleHead(w, r);
}

/** A job's completion event: its replica answers it (and a hog's connection sends again). */
export function complete(w: World, job: Job): void {
  const r = job.replica;
  r.jobs.delete(job);
  job.planned = false;
  r.planned--;
  if (!w.pooled) {
    r.line[r.lineHead++] = undefined; // let the finished job go
    if (r.lineHead >= 256 && r.lineHead * 2 >= r.line.length) {
      r.line = r.line.slice(r.lineHead);
      r.lineHead = 0;
    }
  }
  r.headScheduled = false;
  if (job.req) {
    if (job.settled === 0) {
      job.settled = 1;
      w.setLive(r, -1);
      recordSuccess(r.health, job.probe);
      if (w.measuring) r.served++;
      w.wire.answer(w, job.req, 200);
    }
  } else {
    if (w.measuring) r.hogServed++;
    const h = w.config.hogs![job.hog]!;
    if (h.connections && servesOpenConnections(r) && w.now < w.end) enqueue(w, r, undefined, job.hog, false);
  }
  if (w.turns && r.planned === 0 && r.pending.length > 0 && !isFrozen(r)) startTurn(w, r);
  if (r.state === 'draining' && r.jobs.size === 0) r.state = 'dead';
  scheduleHead(w, r);
}

/** A try's response timeout: the balancer gives up on it (the job keeps its replica busy). */
export function timeout(w: World, job: Job): void {
  if (job.settled) return;
  job.settled = 1;
  if (w.now >= w.warmupMs) w.metrics.timeouts++;
  const r = job.replica;
  w.setLive(r, -1);
  w.wire.fail(w, job.req!, r, 'timeout');
}

function inFlightTries(r: Replica): number {
  let n = 0;
  for (const j of r.jobs) if (j.req && j.settled === 0) n++;
  return n;
}

/** SIGKILL, or an abrupt exit: every try in the replica is reset, new connections are refused. */
export function kill(w: World, r: Replica): void {
  if (r.state === 'dead') return;
  r.inFlightAtFault ??= inFlightTries(r);
  r.state = 'dead';
  r.epoch++;
  r.headScheduled = false;
  const jobs = [...r.jobs];
  r.jobs.clear();
  r.line = [];
  r.lineHead = 0;
  r.pending = [];
  r.frozenJobs = [];
  for (const job of jobs) {
    if (job.planned) unplan(w, r, job, w.now);
    else w.spread(r.occupancy, job.occFrom, w.now, 1); // it waited unplanned until now
    if (job.req && job.settled === 0) {
      job.settled = 1;
      r.cut++;
      w.setLive(r, -1);
      w.wire.fail(w, job.req, r, 'reset');
    }
  }
}

/** SIGSTOP: nothing progresses; what was planned is taken back and kept, in order, for the thaw. */
export function freeze(w: World, r: Replica): void {
  if (r.state !== 'up' && r.state !== 'draining') return;
  r.inFlightAtFault ??= inFlightTries(r);
  r.state = r.state === 'draining' ? 'frozen-draining' : 'frozen';
  r.epoch++;
  r.headScheduled = false;
  const planned = w.pooled ? [...r.jobs].filter((j) => j.planned) : (r.line.slice(r.lineHead) as Job[]);
  for (const job of planned) unplan(w, r, job, w.now);
  r.frozenJobs = planned;
  r.line = [];
  r.lineHead = 0;
  for (const job of r.jobs) {
    if (job.req && job.settled === 0 && !job.timeoutPlanned) {
      job.timeoutPlanned = true;
      w.at(job.tryAt + w.fo.responseTimeoutMs, Ev.Timeout, 0, job);
    }
  }
}

/** SIGCONT: what was cut short goes on first; then what arrived meanwhile (FIFO), or the next turn. */
export function thaw(w: World, r: Replica): void {
  if (!isFrozen(r)) return;
  // A SIGTERM that came while frozen acts now: the listener closes and it drains.
  r.state = r.state === 'frozen' ? 'up' : 'draining';
  r.epoch++;
  r.loopFreeAt = w.now;
  r.poolFreeAt.fill(w.now);
  for (const job of r.frozenJobs) plan(w, r, job, w.now);
  r.frozenJobs = [];
  if (!w.turns) {
    for (const job of r.pending) plan(w, r, job, w.now);
    r.pending = [];
  } else if (r.planned === 0 && r.pending.length > 0) startTurn(w, r);
  if (r.state === 'draining' && r.jobs.size === 0) r.state = 'dead';
  scheduleHead(w, r);
}

/** SIGTERM: refuse new connections, finish what it has, exit. */
export function stop(r: Replica): void {
  if (r.state === 'dead') return;
  r.inFlightAtFault ??= inFlightTries(r);
  // A frozen process gets the SIGTERM when it is thawed: it stays frozen, and drains then.
  if (r.state === 'frozen') r.state = 'frozen-stopping';
  else if (!isFrozen(r)) r.state = r.jobs.size === 0 ? 'dead' : 'draining';
}

/** A starting replica is listening: in rotation from now on. */
export function ready(w: World, r: Replica): void {
  if (r.state !== 'starting') return;
  r.state = 'up';
  r.down = false;
  r.readyAt = w.now;
  r.loopFreeAt = w.now;
}

/** Retires the newest replica that is up: out of rotation, then drained. */
export function retire(w: World): void {
  const r = [...w.replicas].reverse().find((x) => x.state === 'up' || x.state === 'starting');
  if (!r) return;
  r.down = true;
  r.state = r.jobs.size === 0 || r.state === 'starting' ? 'dead' : 'draining';
}

/** Starts a new replica, listening `startupMs` from now. */
export function start(w: World, startupMs: number): void {
  w.addReplica('starting');
  w.at(w.now + startupMs, Ev.Ready, w.replicas.length - 1);
}
