import type { Db } from '../open.js';

// Helpers of several migrations (3 and 10: changeTriggers; 15, 21 and 31: addAutoincrement).
// Their output is part of shipped migrations: never change what they make.

/**
 * Makes `table` anew with AUTOINCREMENT on its id, rows, indexes and triggers as they were
 * (SQLite's procedure for a change ALTER TABLE cannot make; foreign keys off meanwhile).
 */
export function addAutoincrement(db: Db, table: string): void {
  const sql = db
    .prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?")
    .pluck()
    .get(table) as string;
  const head = `CREATE TABLE ${table} (`;
  const made = sql.replace(/\bid INTEGER PRIMARY KEY,/, 'id INTEGER PRIMARY KEY AUTOINCREMENT,');
  if (!sql.startsWith(head) || made === sql) {
    throw new Error(`migration: ${table} is not made as expected: ${sql.slice(0, 80)}`);
  }
  const kept = db
    .prepare(
      `SELECT sql FROM sqlite_master WHERE tbl_name = ? AND type IN ('index', 'trigger')
         AND sql IS NOT NULL ORDER BY type, name`,
    )
    .pluck()
    .all(table) as string[];
  const columns = (
    db.prepare('SELECT name FROM pragma_table_info(?)').pluck().all(table) as string[]
  )
    .map((name) => `"${name}"`)
    .join(', ');
  const fresh = `${table}_autoincrement`;
  db.exec(`CREATE TABLE ${fresh} (${made.slice(head.length)}`);
  db.exec(`INSERT INTO ${fresh} (${columns}) SELECT ${columns} FROM ${table} ORDER BY id`);
  db.exec(`DROP TABLE ${table}`);
  db.exec(`ALTER TABLE ${fresh} RENAME TO ${table}`);
  for (const statement of kept) db.exec(statement);
}

/**
 * The triggers of migration 3 that log a change of `table` as a change of `entity` (named by
 * `uuidExpr`, with ROW standing for NEW or OLD). Kept byte-stable: migration 3 has shipped
 * once it has.
 */
export function changeTriggers(
  table: string,
  entity: string,
  uuidExpr: string,
  updateColumns: string | null,
): string {
  const notStation = `coalesce((SELECT value FROM settings WHERE key = 'mode'), '') <> '"station"'`;
  const body = (row: 'NEW' | 'OLD'): string =>
    `INSERT INTO sync_changes (entity, uuid) VALUES ('${entity}', ${uuidExpr.replaceAll('ROW', row)});`;
  const update = updateColumns === null ? '' : `UPDATE OF uuid, ${updateColumns}`;
  return `
      CREATE TRIGGER ${table}_sync_insert AFTER INSERT ON ${table} WHEN ${notStation}
      BEGIN ${body('NEW')} END;
      CREATE TRIGGER ${table}_sync_update AFTER ${update || 'UPDATE'} ON ${table} WHEN ${notStation}
      BEGIN ${body('OLD')} ${body('NEW')} END;
      CREATE TRIGGER ${table}_sync_delete AFTER DELETE ON ${table} WHEN ${notStation}
      BEGIN ${body('OLD')} END;`;
}
