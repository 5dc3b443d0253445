/**
 * The users table every replica shares: one SQLite file (better-sqlite3) in WAL mode, so several
 * processes read while one writes, with a busy timeout so a writer waits for another's lock
 * instead of failing with "database is locked" (SQLite docs: "Write-Ahead Logging", "busy_timeout").
 *
 * Every create is its own write transaction, BEGIN IMMEDIATE to COMMIT: BEGIN IMMEDIATE takes the
 * one writer lock of the file, so the time it takes is the time this replica waited for the lock,
 * and the time to COMMIT is the time it held it (WriteStats, for lesson 5's table). The wait
 * includes the busy handler's sleeps: a writer that finds the lock taken sleeps 1 to 100 ms
 * between tries (SQLite's sqliteDefaultBusyCallback), so it may wake some time after the lock
 * was freed.
 */
import { performance } from 'node:perf_hooks';
import { openDatabase } from './sqlite.ts';

export interface User {
  id: number;
  name: string;
  /** The replica that created it. */
  createdBy: string;
}

/**
 * One process's writes so far: how many, and their time from asking to committed (ms). SQLite
 * also splits that time into waiting for the file's writer lock and holding it; PostgreSQL has
 * no such single lock.
 */
export interface WriteStats {
  writes: number;
  writeMs: number;
  lockWaitMs?: number;
  lockHeldMs?: number;
}

/** The users table, in SQLite (this file) or PostgreSQL (users-pg.ts). */
export interface UsersDb {
  create(name: string, createdBy: string): Promise<User>;
  get(id: number): Promise<User | undefined>;
  stats(): WriteStats;
  close(): Promise<void>;
}

/** How long a writer waits for another process's lock before giving up, ms. */
const BUSY_TIMEOUT_MS = 5000;

/**
 * `commitMs`: each commit also waits this long, holding the lock, without CPU: a model of the disk
 * flush a durable commit waits for. SQLite's FAQ (question 19) puts a spinning 7200 rpm disk at
 * about 60 transactions a second; on a laptop's SSD the flush is short, and SQLite's default
 * settings here (WAL, synchronous=FULL) on a tmpfs make it nearly free.
 */
interface UsersDbOptions {
  /** 0 to MAX_COMMIT_MS. */
  commitMs?: number;
}

/** Longest commitMs: a flush longer than this is a broken disk, not a slow one. */
export const MAX_COMMIT_MS = 1000;

/** Opens (and if needed creates) the users database at `file`. */
export function openUsersDb(file: string, options: UsersDbOptions = {}): UsersDb {
  const db = openDatabase(file);
  db.pragma('journal_mode = WAL');
  db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  db.exec(
    'CREATE TABLE IF NOT EXISTS users (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL, created_by TEXT NOT NULL)',
  );
  const insert = db.prepare('INSERT INTO users (name, created_by) VALUES (?, ?)');
  const select = db.prepare<[number], { id: number; name: string; created_by: string }>(
    'SELECT id, name, created_by FROM users WHERE id = ?',
  );
  const begin = db.prepare('BEGIN IMMEDIATE');
  const commit = db.prepare('COMMIT');
  const rollback = db.prepare('ROLLBACK');
  const flush = options.commitMs ? new Int32Array(new SharedArrayBuffer(4)) : undefined;
  const stats = { writes: 0, writeMs: 0, lockWaitMs: 0, lockHeldMs: 0 };
  const create = (name: string, createdBy: string): User => {
    const asked = performance.now();
    begin.run();
    const locked = performance.now();
    let id: number;
    try {
      id = Number(insert.run(name, createdBy).lastInsertRowid);
      if (flush) Atomics.wait(flush, 0, 0, options.commitMs);
      commit.run();
    } catch (err) {
      if (db.inTransaction) rollback.run();
      throw err;
    }
    const done = performance.now();
    stats.writes++;
    stats.writeMs += done - asked;
    stats.lockWaitMs += locked - asked;
    stats.lockHeldMs += done - locked;
    return { id, name, createdBy };
  };
  // better-sqlite3 is synchronous: the work happens in the call, the promise only carries the answer.
  return {
    create: async (name, createdBy) => create(name, createdBy),
    async get(id) {
      const row = select.get(id);
      return row && { id: row.id, name: row.name, createdBy: row.created_by };
    },
    stats: () => ({ ...stats }),
    async close() {
      db.close();
    },
  };
}
