/**
 * Opening a SQLite file with better-sqlite3, the one place that does: a binding compiled for
 * another Node.js (the student switched versions after installing) becomes KIT_ERR_NATIVE_BUILD,
 * one line that says what to run, instead of ERR_DLOPEN_FAILED's stack trace (lib/native.ts).
 */
import Database from 'better-sqlite3';
import { abiMismatch, nativeBuildError } from '../../../lib/native.ts';

export type SqliteDatabase = Database.Database;

/** `new Database(file, options)`; throws KIT_ERR_NATIVE_BUILD when the binding does not fit this Node. */
export function openDatabase(file: string, options?: Database.Options): SqliteDatabase {
  try {
    return new Database(file, options);
  } catch (err) {
    const mismatch = abiMismatch(err);
    if (mismatch) throw nativeBuildError(mismatch);
    throw err;
  }
}
