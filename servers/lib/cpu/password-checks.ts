/**
 * The loan service's password checks (servers/loan.ts /member/verify-*): a member's password,
 * hashed with their stored salt and parameters on the event loop, on the thread pool, or by the
 * student's verifyPassword (lesson 3's exercise), then compared with their stored key. 200 when it
 * matches, 401 when it does not: the key a check computes decides its answer.
 */
import type http from 'node:http';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { VerifyAnswer } from '../../contracts.ts';
import { HttpError, sendJson } from '../serve/http.ts';
import type { VerifyPassword } from './scrypt-cost.ts';
import {
  DEFAULT_MEMBER,
  hashOnEventLoopFor,
  hashOnThreadPoolFor,
  hashWithFor,
  keyMatches,
  ownPassword,
  type StoredPassword,
} from './members.ts';

interface Who {
  name: string;
  stored: StoredPassword;
  password: string;
}

/**
 * The checks over `stored` (by member name); `yours`, from the file `file`, hashes for the
 * blocking route instead of scryptSync.
 */
export function passwordChecks(stored: Map<string, StoredPassword>, yours?: VerifyPassword, file?: string) {
  let pooledInFlight = 0;
  /** The member and the password a check is for: ?member= (default `member`), ?password= (default their own). */
  const asked = (url: URL, member: string): Who => {
    const name = url.searchParams.get('member') ?? member;
    const s = stored.get(name);
    if (!s) throw new HttpError(404, `member: no member '${name}'; the members are ${[...stored.keys()].join(', ')}`);
    return { name, stored: s, password: url.searchParams.get('password') ?? ownPassword(name)! };
  };
  /** Answers a check: 200 when `key` is the member's stored key, 401 when it is not. */
  const answer = (
    res: http.ServerResponse,
    route: string,
    who: Who,
    key: unknown,
    where: VerifyAnswer['hashedOn'],
    started: number,
  ) => {
    const verified = keyMatches(who.stored, key);
    sendJson(res, verified ? 200 : 401, {
      route,
      member: who.name,
      verified,
      pid: process.pid,
      hashedOn: where,
      ms: Math.round((performance.now() - started) * 100) / 100,
    } satisfies VerifyAnswer);
  };
  return {
    /** Pooled checks started and not yet answered. */
    pooledInFlight: () => pooledInFlight,
    /** GET /member/verify-blocking: scryptSync on the event loop, or the student's check. */
    async blocking(res: http.ServerResponse, url: URL): Promise<void> {
      const who = asked(url, DEFAULT_MEMBER);
      const started = performance.now();
      let key: unknown;
      try {
        key = yours ? await hashWithFor(yours, who.stored, who.password) : hashOnEventLoopFor(who.stored, who.password);
      } catch (err) {
        // The student's code threw (scrypt's maxmem, say): name the file, not the route.
        throw new HttpError(
          500,
          `verifyPassword() in ${path.relative(process.cwd(), file ?? '')} threw: ${(err as Error)?.message ?? err}`,
        );
      }
      answer(res, 'verify-blocking', who, key, yours ? 'yours' : 'event-loop', started);
    },
    /** GET /member/verify-pooled and -light: crypto.scrypt on the thread pool. */
    async pooled(res: http.ServerResponse, url: URL, route: string, member: string): Promise<void> {
      const who = asked(url, member);
      const started = performance.now();
      pooledInFlight++;
      let key: Buffer;
      try {
        key = await hashOnThreadPoolFor(who.stored, who.password);
      } finally {
        pooledInFlight--;
      }
      answer(res, route, who, key, 'thread-pool', started);
    },
  };
}
