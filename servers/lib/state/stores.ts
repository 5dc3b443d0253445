/**
 * Where a server keeps state that outlives one request — sessions, counters, rate-limit windows —
 * behind one small interface, with three stores (lesson 7):
 *
 *   memory   a Map in this process: fast, and wrong once there are two processes (each has its own)
 *   sqlite   one file every process opens (better-sqlite3, WAL mode, busy timeout): no server to run
 *   redis    a Redis server (ioredis client): what production systems usually use
 *
 * Every operation is atomic in the store itself (an UPDATE ... RETURNING, or INCR), so several
 * processes can count at once without losing an increment. Times are ms; session lifetimes and
 * rate-limit windows expire in the store (SQLite: checked on read and swept; Redis: PX/PEXPIRE).
 * Signed tokens, the fourth way to keep a session (no store at all), are in session-token.ts.
 */
import { openDatabase, type SqliteDatabase } from './sqlite.ts';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { KitError } from '../../../lib/errors.ts';

export const STORES = ['memory', 'sqlite', 'redis'] as const;
export type StoreKind = (typeof STORES)[number];

export function isStoreKind(s: string): s is StoreKind {
  return (STORES as readonly string[]).includes(s);
}

export interface StateStore {
  readonly kind: StoreKind;
  /** Stores a new session for `member`, living `ttlMs`; resolves with its id (random, URL-safe). */
  createSession(member: string, ttlMs: number): Promise<string>;
  /** The member of a live session, or undefined when the id is unknown or expired. */
  sessionMember(id: string): Promise<string | undefined>;
  /** Adds `by` to counter `key` (created at 0) atomically; resolves with the new value. */
  increment(key: string, by?: number): Promise<number>;
  /** Counter `key`'s value (0 when it does not exist). */
  counter(key: string): Promise<number>;
  /**
   * Counts one hit on `key` in its current window and says whether it is within `limit`. A window
   * opens at a key's first hit and lasts `windowMs` (a fixed window per key). Rejected hits count
   * too. A burst at the end of one window and another at the start of the next still get up to
   * twice the limit within a few seconds; only a sliding window or a token bucket prevents that.
   */
  hit(key: string, limit: number, windowMs: number): Promise<{ allowed: boolean; count: number }>;
  close(): Promise<void>;
}

/** A new session id: 18 random bytes, base64url (144 bits: not guessable). */
function newSessionId(): string {
  return randomBytes(18).toString('base64url');
}

/** State in this process's memory. Correct for one process only: that is the lesson. */
export function memoryStore(clock: () => number = Date.now): StateStore {
  const sessions = new Map<string, { member: string; expiresAt: number }>();
  const counters = new Map<string, number>();
  const windows = new Map<string, { count: number; expiresAt: number }>();
  return {
    kind: 'memory',
    async createSession(member, ttlMs) {
      const id = newSessionId();
      sessions.set(id, { member, expiresAt: clock() + ttlMs });
      return id;
    },
    async sessionMember(id) {
      const s = sessions.get(id);
      if (!s) return undefined;
      if (s.expiresAt <= clock()) {
        sessions.delete(id);
        return undefined;
      }
      return s.member;
    },
    async increment(key, by = 1) {
      const v = (counters.get(key) ?? 0) + by;
      counters.set(key, v);
      return v;
    },
    async counter(key) {
      return counters.get(key) ?? 0;
    },
    async hit(key, limit, windowMs) {
      const now = clock();
      for (const [k, w] of windows) if (w.expiresAt <= now) windows.delete(k); // few keys: sweep on use
      const w = windows.get(key) ?? { count: 0, expiresAt: now + windowMs };
      w.count++;
      windows.set(key, w);
      return { allowed: w.count <= limit, count: w.count };
    },
    async close() {},
  };
}

/**
 * State in one SQLite file shared by every process that opens it. WAL mode lets readers work
 * while one process writes; a busy timeout makes a writer wait for the lock instead of failing
 * with SQLITE_BUSY ("database is locked"). SQLite docs: WAL, busy_timeout, UPSERT, RETURNING (3.35).
 */
export function sqliteStore(file: string, clock: () => number = Date.now): StateStore {
  let db: SqliteDatabase;
  try {
    db = openDatabase(file);
  } catch (err) {
    if (err instanceof KitError) throw err; // KIT_ERR_NATIVE_BUILD: the file is not the problem
    throw new KitError(
      'KIT_ERR_STORE',
      `cannot open the SQLite file ${file}: ${(err as Error).message}`,
      'does its folder exist, and may you write there?',
    );
  }
  db.pragma('busy_timeout = 5000');
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec(`
    CREATE TABLE IF NOT EXISTS sessions (id TEXT PRIMARY KEY, member TEXT NOT NULL, expires_at INTEGER NOT NULL);
    CREATE TABLE IF NOT EXISTS counters (key TEXT PRIMARY KEY, value INTEGER NOT NULL, expires_at INTEGER);
  `);
  const insertSession = db.prepare('INSERT INTO sessions (id, member, expires_at) VALUES (?, ?, ?)');
  const readSession = db.prepare('SELECT member FROM sessions WHERE id = ? AND expires_at > ?').pluck();
  const sweepSessions = db.prepare('DELETE FROM sessions WHERE expires_at <= ?');
  const add = db
    .prepare(
      'INSERT INTO counters (key, value, expires_at) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET value = value + excluded.value RETURNING value',
    )
    .pluck();
  const read = db
    .prepare('SELECT value FROM counters WHERE key = ? AND (expires_at IS NULL OR expires_at > ?)')
    .pluck();
  const sweepCounters = db.prepare('DELETE FROM counters WHERE expires_at IS NOT NULL AND expires_at <= ?');
  // One statement, so the window check and the count are atomic: an expired window starts over.
  const hitWindow = db
    .prepare(
      `INSERT INTO counters (key, value, expires_at) VALUES (@key, 1, @now + @windowMs)
     ON CONFLICT (key) DO UPDATE SET
       value = CASE WHEN expires_at <= @now THEN 1 ELSE value + 1 END,
       expires_at = CASE WHEN expires_at <= @now THEN @now + @windowMs ELSE expires_at END
     RETURNING value`,
    )
    .pluck();
  let sweptAt = 0;
  const sweep = (now: number) => {
    if (now - sweptAt < 10_000) return;
    sweptAt = now;
    sweepSessions.run(now);
    sweepCounters.run(now);
  };
  return {
    kind: 'sqlite',
    async createSession(member, ttlMs) {
      const id = newSessionId();
      const now = clock();
      sweep(now);
      insertSession.run(id, member, now + ttlMs);
      return id;
    },
    async sessionMember(id) {
      return (readSession.get(id, clock()) as string | undefined) ?? undefined;
    },
    async increment(key, by = 1) {
      return add.get(key, by, null) as number;
    },
    async counter(key) {
      return (read.get(key, clock()) as number | undefined) ?? 0;
    },
    async hit(key, limit, windowMs) {
      const now = clock();
      sweep(now);
      const count = hitWindow.get({ key: `window:${key}`, now, windowMs }) as number;
      return { allowed: count <= limit, count };
    },
    async close() {
      db.close();
    },
  };
}

/**
 * A connected ioredis client of the Redis server at `url` (2 s to connect, 2 retries a command).
 * Rejects KIT_ERR_STORE if Redis cannot be reached.
 */
export async function connectRedis(url: string): Promise<Redis> {
  const redis = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 2,
    connectTimeout: 2000,
    enableOfflineQueue: true,
  });
  redis.on('error', () => {}); // reported by the failing command instead
  try {
    await redis.connect();
  } catch (err) {
    redis.disconnect();
    throw new KitError(
      'KIT_ERR_STORE',
      `cannot reach Redis at ${url} (${(err as Error).message.replace(/\.$/, '')})`,
      'is redis-server running? the experiments start their own; or pick --state sqlite',
    );
  }
  return redis;
}

/**
 * State in a Redis server at `url` (redis://127.0.0.1:PORT). Sessions are keys with a PX expiry,
 * counters INCRBY, rate-limit windows SET PX NX (opens a window, with its expiry, only if none is
 * open) then INCR, in one MULTI. Redis docs: SET PX NX (Redis >= 2.6.12), INCR, INCRBY, MULTI.
 * Rejects KIT_ERR_STORE if Redis cannot be reached.
 */
async function redisStore(url: string, prefix = 'nsl:'): Promise<StateStore> {
  const redis = await connectRedis(url);
  return {
    kind: 'redis',
    async createSession(member, ttlMs) {
      const id = newSessionId();
      await redis.set(`${prefix}session:${id}`, member, 'PX', ttlMs);
      return id;
    },
    async sessionMember(id) {
      return (await redis.get(`${prefix}session:${id}`)) ?? undefined;
    },
    async increment(key, by = 1) {
      return redis.incrby(`${prefix}counter:${key}`, by);
    },
    async counter(key) {
      return Number((await redis.get(`${prefix}counter:${key}`)) ?? 0);
    },
    async hit(key, limit, windowMs) {
      const k = `${prefix}window:${key}`;
      // SET NX opens the window (with its expiry) only if there is none; INCR keeps the expiry.
      // (PEXPIRE NX would do it in one step, but needs Redis 7; Ubuntu 22.04 ships 6.0.)
      const replies = await redis.multi().set(k, 0, 'PX', windowMs, 'NX').incr(k).exec();
      const count = Number(replies?.[1]?.[1] ?? 0);
      return { allowed: count <= limit, count };
    },
    async close() {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}

interface StoreOptions {
  kind: StoreKind;
  /** SQLite file (sqlite). */
  file?: string;
  /** redis://host:port (redis). */
  redisUrl?: string;
  /** Prefix of every Redis key (redis). */
  prefix?: string;
}

/** Opens the store `opts` names. Throws KIT_ERR_USAGE when its location is missing. */
export async function openStore(opts: StoreOptions): Promise<StateStore> {
  if (opts.kind === 'memory') return memoryStore();
  if (opts.kind === 'sqlite') {
    if (!opts.file)
      throw new KitError('KIT_ERR_USAGE', '--state sqlite needs --state-file <file> (one file all processes share)');
    return sqliteStore(opts.file);
  }
  if (!opts.redisUrl) throw new KitError('KIT_ERR_USAGE', '--state redis needs --redis-url redis://127.0.0.1:<port>');
  if (!/^rediss?:\/\//.test(opts.redisUrl))
    throw new KitError(
      'KIT_ERR_USAGE',
      `--redis-url starts with redis://, e.g. redis://127.0.0.1:6379; got '${opts.redisUrl}'`,
    );
  return redisStore(opts.redisUrl, opts.prefix);
}
