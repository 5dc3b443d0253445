/**
 * Lesson 3's exercise, as the student starts it: the loan service's password check, hashing on the
 * event loop. `npx tsx measure/blocking.ts --mine` copies this file to exercises/lesson-3/verify.ts
 * (once) and runs the loan service with the copy behind /member/verify-blocking (servers/loan.ts
 * --verify). Change the copy so that the hash no longer holds the event loop, and the blocking
 * half's lines read like the pooled half's.
 */
import { scryptSync, type ScryptOptions } from 'node:crypto';

/**
 * Hashes a member's password with scrypt and returns the key: now (a Buffer) or later (a Promise
 * of one); the loan service waits for either. `salt`, `keyLength` and `options` are the service's.
 */
export function verifyPassword(
  password: string,
  salt: Buffer,
  keyLength: number,
  options: ScryptOptions,
): Buffer | Promise<Buffer> {
  return scryptSync(password, salt, keyLength, options);
}
