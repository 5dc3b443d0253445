/**
 * Waiting for a condition the harness can only observe by asking (a server's /stats, say):
 * poll it against a deadline that fails loudly and names what it waited for. Not for readiness
 * of a process (that is the ready line) and never a fixed sleep.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { KitError } from '../../lib/errors.ts';

/**
 * Calls `check` every `everyMs` until it returns something other than undefined, and returns it.
 * Throws KIT_ERR_WAIT_TIMEOUT naming `what` after `timeoutMs`.
 */
export async function pollUntil<T>(what: string, check: () => Promise<T | undefined> | T | undefined, timeoutMs: number, everyMs = 5): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new KitError('KIT_ERR_WAIT_TIMEOUT', `waited ${timeoutMs} ms for ${what}`);
    await delay(everyMs);
  }
}
