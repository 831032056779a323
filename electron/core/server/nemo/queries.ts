/**
 * SQL of the NEMO-compatible list and detail endpoints. A list page takes three steps so the
 * filter and the count run on an index alone and full rows are read only for the page: the
 * count, the page's ids, then those rows (REFERENCE.md: 1.8 ms instead of 20 ms at 1,000,000
 * usage events). Statements are prepared once per SQL text and database.
 */
import type { Db } from '../../db/open.js';
import { cachedStatement } from '../../db/statements.js';
import type { Clause } from './params.js';

export interface ListSql {
  count: { sql: string; args: unknown[] };
  ids: { sql: string; args: unknown[] };
}

function whereOf(clauses: readonly Clause[]): { sql: string; args: unknown[] } {
  if (!clauses.length) return { sql: '', args: [] };
  return {
    sql: ` WHERE ${clauses.map((c) => c.sql).join(' AND ')}`,
    args: clauses.flatMap((c) => c.args),
  };
}

/** The count and page-of-ids statements of a list request (exported for the query-plan test). */
export function listSql(
  table: string,
  clauses: readonly Clause[],
  orderBy: string,
  limit: number,
  offset: number,
): ListSql {
  const where = whereOf(clauses);
  return {
    count: { sql: `SELECT count(*) FROM ${table}${where.sql}`, args: where.args },
    ids: {
      sql: `SELECT id FROM ${table}${where.sql} ORDER BY ${orderBy} LIMIT ? OFFSET ?`,
      args: [...where.args, limit, offset],
    },
  };
}

export function countRows(db: Db, table: string, clauses: readonly Clause[]): number {
  const { count } = listSql(table, clauses, 'id', 0, 0);
  return cachedStatement(db, count.sql)
    .pluck()
    .get(...count.args) as number;
}

export interface PageRequest {
  table: string;
  clauses: readonly Clause[];
  orderBy: string;
  limit: number;
  offset: number;
  /** Rows matching the clauses, already counted. */
  count: number;
}

/**
 * The ids of one page, in order. Unfiltered pages in id order are computed from min(id) and
 * max(id) when the ids have no gaps (count = max - min + 1 proves it): OFFSET walks every row
 * before the page, about 115 ms at 900,000, while this costs two index probes.
 */
export function pageIds(db: Db, page: PageRequest): number[] {
  const { table, clauses, orderBy, limit, offset, count } = page;
  if (!clauses.length && (orderBy === 'id DESC' || orderBy === 'id ASC') && count > 0) {
    // Two subqueries: SQLite answers a lone min() or max() from the b-tree edge, both at once
    // by a full scan.
    const bounds = cachedStatement(
      db,
      `SELECT (SELECT min(id) FROM ${table}) AS low, (SELECT max(id) FROM ${table}) AS high`,
    ).get() as {
      low: number;
      high: number;
    };
    if (bounds.high - bounds.low + 1 === count) {
      const size = Math.max(0, Math.min(limit, count - offset));
      return orderBy === 'id DESC'
        ? Array.from({ length: size }, (_, i) => bounds.high - offset - i)
        : Array.from({ length: size }, (_, i) => bounds.low + offset + i);
    }
  }
  const { ids } = listSql(table, clauses, orderBy, limit, offset);
  return cachedStatement(db, ids.sql)
    .pluck()
    .all(...ids.args) as number[];
}

/** Full rows for the given ids, in the order of the ids. */
export function rowsByIds<Row extends { id: number }>(
  db: Db,
  table: string,
  columns: string,
  ids: readonly number[],
): Row[] {
  if (!ids.length) return [];
  const rows = cachedStatement(
    db,
    `SELECT ${columns} FROM ${table} WHERE id IN (SELECT value FROM json_each(?))`,
  ).all(JSON.stringify(ids)) as Row[];
  const byId = new Map(rows.map((row) => [row.id, row]));
  return ids.flatMap((id) => {
    const row = byId.get(id);
    return row ? [row] : [];
  });
}

export function rowById<Row>(db: Db, table: string, columns: string, id: number): Row | undefined {
  return cachedStatement(db, `SELECT ${columns} FROM ${table} WHERE id = ?`).get(id) as
    Row | undefined;
}
