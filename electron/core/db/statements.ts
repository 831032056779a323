import type { Statement } from 'better-sqlite3';
import type { Db } from './open.js';

const statements = new WeakMap<Db, Map<string, Statement>>();

/**
 * A prepared statement for this SQL text, prepared on first use and kept for the life of the
 * database handle. Preparing costs tens of microseconds, which hot paths (list pages, sync
 * ingest) would otherwise pay per row. A statement's mode (`pluck`, `raw`) sticks to it, so
 * one SQL text must always be used in one mode.
 */
export function cachedStatement(db: Db, sql: string): Statement {
  let cache = statements.get(db);
  if (!cache) {
    cache = new Map();
    statements.set(db, cache);
  }
  let statement = cache.get(sql);
  if (!statement) {
    statement = db.prepare(sql);
    cache.set(sql, statement);
  }
  return statement;
}
