import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { migrations } from '../../electron/core/db/migrations.js';
import { openDatabase } from '../../electron/core/db/open.js';
import { checkInstrument } from '../../electron/core/server/sync/harvestWriters.js';
import { tempDir } from './helpers.js';

/**
 * Stations and servers are upgraded in place with their data. The schema test in
 * database.test.ts builds empty databases; here every table that exists at an older version is
 * filled, the database is upgraded, and every row must come through with every value it had.
 *
 * A new migration that adds a CHECK may make `fillEveryTable` fail on its table: give the
 * column a value in VALUES below, so that the table is filled at every later version too.
 */
const VALUES: Record<string, (row: number) => unknown> = {
  'users.role': () => 'staff',
  'problem_reports.force_shutdown': () => 0,
  'problem_reports.form': () => 'post_usage',
  'consumable_withdrawals.form': () => 'pre_usage',
  'storage_locations.type': () => 'local',
  'harvest_hooks.trigger': () => 'pre_transfer',
  'harvest_transfers.status': () => 'failed',
  'harvest_schedules.deployment_state': () => 'deployed',
  'harvest_runs.trigger': () => 'manual',
  'harvest_runs.state': () => 'completed',
  'harvest_uploads.state': () => 'receiving',
  'harvest_uploads.size': () => 10,
  'harvest_uploads.received': () => 5,
  'notebook_entries.kind': () => 'experiment',
  'notebook_entries.version': (row) => row,
  'sync_changes.entity': () => 'user',
  'mail_outbox.status': () => 'queued',
  'harvest_files.state': () => 'waiting',
  // Migration 23 deletes the API tokens of deactivated accounts, on purpose.
  'users.is_active': () => 1,
  // One tool per reservation: a reservation names a tool or an area, not both.
  'reservations.area_id': () => null,
  'settings.key': (row) => `upgrade.test.${row}`,
  'harvest_files_path_through.id': () => 1,
};

interface Column {
  name: string;
  type: string;
  pk: number;
}

interface ForeignKey {
  from: string;
  table: string;
}

/** Tables that hold rows of their own: not virtual tables, nor the tables behind one. */
function plainTables(db: Database.Database): string[] {
  const virtual = db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL%'")
    .pluck()
    .all() as string[];
  return (
    db
      .prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
      )
      .pluck()
      .all() as string[]
  ).filter((name) => !virtual.some((v) => name === v || name.startsWith(`${v}_`)));
}

function valueFor(table: string, column: Column, row: number, flags: Set<string>): unknown {
  const given = VALUES[`${table}.${column.name}`];
  if (given) return given(row);
  const name = column.name;
  if (flags.has(name)) return row % 2;
  if (name === 'start') return `2026-01-0${row}T10:00:00.000Z`;
  if (name === 'end') return `2026-01-0${row}T11:00:00.000Z`;
  if (name.endsWith('_at') && column.type === 'TEXT') return `2026-01-0${row}T09:00:00.000Z`;
  if (column.type === 'INTEGER') return row;
  if (column.type === 'REAL') return row + 0.5;
  if (column.type === 'BLOB') return Buffer.from([row, 0, 255]);
  return `${table}.${name} ${row} é`;
}

/** `rows` rows in every table, parents before children; each row's references point at row n. */
function fillEveryTable(db: Database.Database, rows: number): void {
  const tables = plainTables(db);
  const parents = new Map(
    tables.map((t) => [
      t,
      (db.prepare('SELECT "from", "table" FROM pragma_foreign_key_list(?)').all(t) as ForeignKey[])
        .map((fk) => fk.table)
        .filter((p) => p !== t && tables.includes(p)),
    ]),
  );
  const order: string[] = [];
  const visit = (t: string): void => {
    if (order.includes(t)) return;
    for (const p of parents.get(t) ?? []) visit(p);
    order.push(t);
  };
  tables.forEach(visit);
  for (const table of order) {
    const columns = db
      .prepare('SELECT name, type, pk FROM pragma_table_info(?)')
      .all(table) as Column[];
    const keys = new Map(
      (
        db
          .prepare('SELECT "from", "table" FROM pragma_foreign_key_list(?)')
          .all(table) as ForeignKey[]
      ).map((fk) => [fk.from, fk.table]),
    );
    const sql = db
      .prepare('SELECT sql FROM sqlite_master WHERE name = ?')
      .pluck()
      .get(table) as string;
    // Columns held to 0 or 1 by a CHECK (the ones added later carry it in their ALTER TABLE).
    const flags = new Set(
      columns
        .map((c) => c.name)
        .filter((c) => new RegExp(`"?\\b${c}\\b"?[^,]*?IN \\(0, 1\\)`).test(sql)),
    );
    // Filled already by triggers on the tables before it (station_tools, sync_changes).
    if (db.prepare(`SELECT 1 FROM "${table}" LIMIT 1`).get()) continue;
    const count = table === 'harvest_files_path_through' ? 1 : rows;
    for (let row = 1; row <= count; row++) {
      const values = columns.map((c) => {
        const parent = keys.get(c.name);
        if (parent === table) return null;
        if (parent && !VALUES[`${table}.${c.name}`]) return row;
        return valueFor(table, c, row, flags);
      });
      const names = columns.map((c) => `"${c.name}"`).join(', ');
      try {
        db.prepare(
          `INSERT INTO "${table}" (${names}) VALUES (${columns.map(() => '?').join(', ')})`,
        ).run(...values);
      } catch (error) {
        throw new Error(`filling ${table} (row ${row}): ${(error as Error).message}`);
      }
    }
  }
}

function rowsOf(db: Database.Database): Record<string, unknown[]> {
  const out: Record<string, unknown[]> = {};
  for (const table of plainTables(db)) {
    out[table] = db.prepare(`SELECT * FROM "${table}" ORDER BY 1, 2`).all();
  }
  return out;
}

function schemaOf(db: Database.Database): unknown[] {
  return db
    .prepare(
      "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name",
    )
    .all();
}

describe('upgrading a database that holds data', () => {
  const dir = tempDir();
  const fresh = openDatabase(join(dir, 'fresh.db'));
  const latestSchema = schemaOf(fresh);
  fresh.close();

  it.each(migrations.slice(0, -1).map((m) => m.version))(
    'keeps every row and value of every table from version %i, and ends at the fresh schema',
    (version) => {
      const file = join(dir, `v${version}.db`);
      const old = openDatabase(file, migrations.slice(0, version));
      fillEveryTable(old, 3);
      const before = rowsOf(old);
      old.close();

      const db = openDatabase(file);
      const after = rowsOf(db);
      for (const [table, rows] of Object.entries(before)) {
        expect(after[table], `table ${table}`).toBeDefined();
        expect(after[table].length, `rows of ${table}`).toBe(rows.length);
        rows.forEach((row, i) => {
          // Columns added later are new; the ones the old row had keep their values.
          const kept = Object.fromEntries(
            Object.keys(row as object).map((k) => [
              k,
              (after[table][i] as Record<string, unknown>)[k],
            ]),
          );
          expect(kept, `${table} row ${i + 1}`).toEqual(row);
        });
      }
      expect(schemaOf(db)).toEqual(latestSchema);
      expect(db.pragma('foreign_key_check')).toEqual([]);
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      db.close();
    },
  );

  // Mutation: without migration 44, a server upgraded from version 6 refused the harvest
  // records of the station that ran the instrument ("this station does not run that instrument").
  it('lets a station push for an instrument it was given before station_instruments existed', () => {
    const file = join(dir, 'v6-server.db');
    const old = openDatabase(file, migrations.slice(0, 6));
    const t = '2026-01-01T00:00:00.000Z';
    old.exec(`
      INSERT INTO settings (key, value) VALUES ('mode', '"server"');
      INSERT INTO tools (id, uuid, name, created_at, updated_at) VALUES (1, 't1', 'SEM', '${t}', '${t}');
      INSERT INTO stations (id, uuid, name, tool_id, key_hash, created_at)
        VALUES (1, 's1', 'SEM PC', 1, 'hash', '${t}');
      INSERT INTO instruments (id, uuid, name, tool_id, station_id, destination_template, created_at, updated_at)
        VALUES (1, 'i1', 'SEM', 1, 1, '{relative_path}', '${t}', '${t}');
    `);
    old.close();
    const db = openDatabase(file);
    expect(() =>
      checkInstrument(
        db,
        { id: 1, uuid: 's1', tool_id: 1 },
        1,
        { id: 1, kind: 'harvest_file', uuid: 'f1', payload: {} },
        t,
      ),
    ).not.toThrow();
    db.close();
  });
});
