/**
 * Lesson 10's check of a stop: loans in flight when SIGTERM comes must be answered in full, with
 * the right bodies. Each loan is held at its head (held-loans.ts: the server has the request, its
 * handler waits for the body); SIGTERM goes to the fix's service; once the service says the signal
 * has come, and a little later, the bodies are sent. A stop that exits at once, or closes every
 * connection, or waits a moment and exits, loses them; a stop that drains answers them.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { isDeepStrictEqual } from 'node:util';
import type { AnswerCheck } from '../../../results/report/answers.ts';
import type { ServerProcess } from '../process/launch.ts';
import { holdLoan, type HeldAnswer } from './held-loans.ts';
import { probe } from '../load/probe.ts';

/** Loans held, books 11 to 16. */
const BOOKS = [11, 12, 13, 14, 15, 16];
/**
 * How long after the signal the held bodies are sent, ms: longer than a stop that exits "soon"
 * (a timer of 100 ms, say) and far inside the healthy stop's 2 s deadline.
 */
const HOLD_AFTER_SIGNAL_MS = 300;
/** How long the fix's service gets to exit once its loans are answered, before it is killed, ms. */
const GRACE_MS = 3000;

/** A held loan's answer in a few words. */
function said(a: HeldAnswer): string {
  return 'error' in a ? a.error : `${a.status}`;
}

/** Holds loans on `fix`, stops it with SIGTERM, then sends their bodies; compares each answer with `healthy`'s. */
export async function inFlightAtStop(healthy: ServerProcess, fix: ServerProcess): Promise<AnswerCheck> {
  const expected = await Promise.all(
    BOOKS.map((book) => probe(`${healthy.url}/loan`, { method: 'POST', json: { book } })),
  );
  const loans = BOOKS.map((book) => holdLoan(fix.port, '/loan', { book }));
  const held = await Promise.allSettled(loans.map((l) => l.held));
  const from = fix.lines.length;
  const stopped = fix.stop(GRACE_MS);
  // The service's own line says the signal has reached it; a service gone already says it by exiting.
  await fix.waitForLine(/^stopping: SIGTERM$/, GRACE_MS, from).catch(() => undefined);
  await sleep(HOLD_AFTER_SIGNAL_MS); // the designed wait: work in flight that outlasts a short exit timer
  const answers = await Promise.all(loans.map((l) => l.release()));
  await stopped;
  const right = answers.filter((a, i) => {
    const e = expected[i]!;
    if ('error' in a || a.status !== e.status) return false;
    try {
      return isDeepStrictEqual(JSON.parse(a.body), e.body);
    } catch {
      return false;
    }
  }).length;
  const notHeld = held.filter((h) => h.status === 'rejected').length;
  const firstWrong = answers.find((a, i) => 'error' in a || a.status !== expected[i]!.status);
  const notHeldWhy = (held.find((h) => h.status === 'rejected') as PromiseRejectedResult | undefined)?.reason;
  const why = `${firstWrong ? `; ${said(firstWrong)}` : ''}${notHeld ? ` (${notHeld} not held: ${notHeldWhy?.message})` : ''}`;
  return {
    request: `${BOOKS.length} loans in flight at SIGTERM`,
    healthy: `${BOOKS.length} answered in full`,
    yours: right === BOOKS.length ? `${BOOKS.length} answered in full` : `${right} answered in full${why}`,
    same: right === BOOKS.length,
  };
}
