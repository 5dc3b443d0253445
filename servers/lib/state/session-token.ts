/**
 * Sessions with no store: the session itself travels in a token the server signed with HMAC-SHA256
 * (RFC 2104), so any replica holding the same secret can check it. Format (like a JWT's, smaller):
 *   base64url(JSON {"m": member, "exp": ms since epoch}) "." base64url(HMAC-SHA256(secret, first part))
 * A token cannot be revoked before it expires (there is nothing to delete), which is the trade-off
 * lesson 7 discusses. A malformed, tampered or expired token is simply not a session (undefined).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

function sign(payload: string, secret: string): Buffer {
  return createHmac('sha256', secret).update(payload).digest();
}

/** A token for `member` valid `ttlMs` from `now`. */
export function createToken(member: string, ttlMs: number, secret: string, now = Date.now()): string {
  const payload = Buffer.from(JSON.stringify({ m: member, exp: now + ttlMs })).toString('base64url');
  return `${payload}.${sign(payload, secret).toString('base64url')}`;
}

/** The member a valid, unexpired token names; undefined for anything else (never throws). */
export function verifyToken(token: string, secret: string, now = Date.now()): string | undefined {
  if (token.length > 2048) return undefined;
  const dot = token.indexOf('.');
  if (dot <= 0 || dot !== token.lastIndexOf('.')) return undefined;
  const payload = token.slice(0, dot);
  const given = Buffer.from(token.slice(dot + 1), 'base64url');
  const expected = sign(payload, secret);
  // Compare in constant time, so the time taken says nothing about how much of a forgery matched.
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  try {
    const body = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { m?: unknown; exp?: unknown };
    if (typeof body.m !== 'string' || typeof body.exp !== 'number' || body.exp <= now) return undefined;
    return body.m;
  } catch {
    return undefined;
  }
}
