/**
 * The users table in PostgreSQL (the `pg` client, a pool per replica): the same routes as the
 * SQLite file (users-db.ts), over a real database server. Each create is one INSERT, committed on
 * its own; PostgreSQL lets many of them run at once (row locks, not a file lock), and a commit
 * waits for its WAL flush (synchronous_commit on).
 * Errors on open are KIT_ERR_STORE naming the URL.
 */
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { KitError } from '../../../lib/errors.ts';
import type { User, UsersDb } from './users-db.ts';

/** Connections each replica may hold open to PostgreSQL: as many as the requests it serves at once in lesson 5. */
const POOL_SIZE = 8;

/** Whether `text` names a PostgreSQL database rather than a SQLite file. */
export const isPostgresUrl = (text: string) => /^postgres(ql)?:\/\//.test(text);

/** Connects to `url`, creates the table if needed, and returns the store. */
export async function openUsersPg(url: string): Promise<UsersDb> {
  const pool = new pg.Pool({ connectionString: url, max: POOL_SIZE });
  pool.on('error', () => {}); // an idle client's error (the server stopping) is seen by the next query
  try {
    await pool.query(
      'CREATE TABLE IF NOT EXISTS users (id BIGSERIAL PRIMARY KEY, name TEXT NOT NULL, created_by TEXT NOT NULL)',
    );
  } catch (err) {
    await pool.end().catch(() => {});
    throw new KitError(
      'KIT_ERR_STORE',
      `cannot use PostgreSQL at ${url}: ${(err as Error).message}`,
      'start one with npx tsx servers/postgres.ts, and pass the URL it prints',
    );
  }
  const stats = { writes: 0, writeMs: 0 };
  return {
    async create(name, createdBy): Promise<User> {
      const asked = performance.now();
      const r = await pool.query<{ id: string }>('INSERT INTO users (name, created_by) VALUES ($1, $2) RETURNING id', [
        name,
        createdBy,
      ]);
      stats.writes++;
      stats.writeMs += performance.now() - asked;
      return { id: Number(r.rows[0]!.id), name, createdBy };
    },
    async get(id) {
      const r = await pool.query<{ id: string; name: string; created_by: string }>(
        'SELECT id, name, created_by FROM users WHERE id = $1',
        [id],
      );
      const row = r.rows[0];
      return row && { id: Number(row.id), name: row.name, createdBy: row.created_by };
    },
    stats: () => ({ ...stats }),
    close: () => pool.end(),
  };
}
