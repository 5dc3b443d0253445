/**
 * Waiting for a condition the harness can only observe by asking (a server's /stats, a pid in
 * /proc): poll it against a deadline. The one polling loop of the kit. Not for readiness of a
 * process (that is the ready line) and never a fixed sleep.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { KitError } from './errors.ts';

/**
 * Calls `check` every `everyMs` until it returns something other than undefined, and resolves
 * with it; resolves undefined once `timeoutMs` has passed.
 */
export async function waitUntil<T>(
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs: number,
  everyMs = 5,
): Promise<T | undefined> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > until) return undefined;
    await delay(everyMs);
  }
}

/** waitUntil, but throws KIT_ERR_WAIT_TIMEOUT naming `what` after `timeoutMs`. */
export async function pollUntil<T>(
  what: string,
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs: number,
  everyMs = 5,
): Promise<T> {
  const v = await waitUntil(check, timeoutMs, everyMs);
  if (v === undefined) throw new KitError('KIT_ERR_WAIT_TIMEOUT', `waited ${timeoutMs} ms for ${what}`);
  return v;
}
