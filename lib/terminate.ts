/**
 * Two-step termination (execa's pattern): a polite signal, then SIGKILL after a grace period.
 * terminateGroup stops a launched server and everything it started: a server is launched as the
 * leader of its own process group, so its cluster workers (and tsx's esbuild helper) are in that
 * group too and go with it. stopChild stops one child the same way: a server's nginx, Redis or
 * PostgreSQL, or a cluster worker.
 */
import type { ChildProcess } from 'node:child_process';

import { listPids, readStat } from './proc.ts';
import { waitUntil } from './wait.ts';

// A zombie ('Z' in /proc/<pid>/stat) has exited but was not yet reaped by its parent; it holds no
// port and runs nothing, so it counts as gone.

/** True while any live (not zombie) process of group `pgid` exists. */
export function groupAlive(pgid: number): boolean {
  if (!signalGroup(pgid, 0)) return false;
  if (process.platform !== 'linux') return true;
  for (const pid of listPids()) {
    const st = readStat(pid);
    if (st && st.pgid === pgid && st.state !== 'Z') return true;
  }
  return false;
}

/** Sends `signal` to every process in group `pgid`; false when the group is gone. */
export function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw err;
  }
}

/** True while process `pid` exists and is not a zombie. */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  if (process.platform !== 'linux') return true;
  const st = readStat(pid);
  return st !== undefined && st.state !== 'Z';
}

/**
 * Polls until `alive()` is false or `deadlineMs` passes; resolves true when it became false.
 * Polling against a deadline is how Node's own tests check that processes are gone.
 */
export async function waitUntilGone(alive: () => boolean, deadlineMs: number, everyMs = 20): Promise<boolean> {
  return (await waitUntil(() => (alive() ? undefined : true), deadlineMs, everyMs)) === true;
}

/**
 * Stops group `pgid`: SIGTERM, wait up to `graceMs` for `leaderExited`, then SIGKILL whatever is
 * left of the group (also when the leader exited in time, so no worker outlives it).
 * Resolves 'graceful' or 'killed' (the grace period ran out).
 */
export async function terminateGroup(
  pgid: number,
  leaderExited: Promise<unknown>,
  graceMs = 2000,
): Promise<'graceful' | 'killed'> {
  if (!signalGroup(pgid, 'SIGTERM')) return 'graceful';
  signalGroup(pgid, 'SIGCONT'); // a frozen (SIGSTOPped) server only acts on SIGTERM once it runs again
  let timer: NodeJS.Timeout | undefined;
  const inTime = await Promise.race([
    leaderExited.then(() => true),
    new Promise<boolean>((r) => (timer = setTimeout(() => r(false), graceMs))),
  ]);
  clearTimeout(timer);
  // Workers exit right after their primary; give them a moment, then make sure.
  if (inTime) await waitUntilGone(() => groupAlive(pgid), graceMs);
  signalGroup(pgid, 'SIGKILL');
  await waitUntilGone(() => groupAlive(pgid), 2000);
  return inTime ? 'graceful' : 'killed';
}

/** True once `child` has exited or was ended by a signal. */
const exited = (child: ChildProcess): boolean => child.exitCode !== null || child.signalCode !== null;

/**
 * Stops `child`: `signal` (the program's own clean shutdown: SIGTERM for Node and Redis, SIGQUIT
 * for nginx, SIGINT for PostgreSQL's fast shutdown), then SIGKILL if it has not exited within
 * `graceMs`. Resolves 'graceful' or 'killed' once it has exited; the timer does not keep the
 * process alive.
 */
export function stopChild(
  child: ChildProcess,
  signal: NodeJS.Signals,
  graceMs: number,
): Promise<'graceful' | 'killed'> {
  if (exited(child)) return Promise.resolve('graceful');
  return new Promise((resolve) => {
    let killed = false;
    const timer = setTimeout(() => {
      killed = true;
      child.kill('SIGKILL');
    }, graceMs);
    timer.unref();
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(killed ? 'killed' : 'graceful');
    });
    child.kill(signal);
  });
}
