/**
 * The users table every replica shares: one SQLite file (better-sqlite3) in WAL mode, so several
 * processes read while one writes, with a busy timeout so a writer waits for another's lock
 * instead of failing with "database is locked" (SQLite docs: "Write-Ahead Logging", "busy_timeout").
 */
import { openDatabase } from './sqlite.ts';

export interface User {
  id: number;
  name: string;
  /** The replica that created it. */
  createdBy: string;
}

export interface UsersDb {
  create(name: string, createdBy: string): User;
  get(id: number): User | undefined;
  close(): void;
}

/** How long a writer waits for another process's lock before giving up, ms. */
const BUSY_TIMEOUT_MS = 5000;

/** Opens (and if needed creates) the users database at `file`. */
export function openUsersDb(file: string): UsersDb {
  const db = openDatabase(file);
  db.pragma('journal_mode = WAL');
  db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  db.exec('CREATE TABLE IF NOT EXISTS users (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL, created_by TEXT NOT NULL)');
  const insert = db.prepare('INSERT INTO users (name, created_by) VALUES (?, ?)');
  const select = db.prepare<[number], { id: number; name: string; created_by: string }>('SELECT id, name, created_by FROM users WHERE id = ?');
  return {
    create(name, createdBy) {
      const info = insert.run(name, createdBy);
      return { id: Number(info.lastInsertRowid), name, createdBy };
    },
    get(id) {
      const row = select.get(id);
      return row && { id: row.id, name: row.name, createdBy: row.created_by };
    },
    close() {
      db.close();
    },
  };
}
