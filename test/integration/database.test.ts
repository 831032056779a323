import { chmodSync, existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { migrations, LATEST_VERSION } from '../../electron/core/db/migrations.js';
import { NewerDatabaseError, openDatabase, schemaVersion } from '../../electron/core/db/open.js';
import { indexPaths, listFiles } from '../../electron/core/harvest/views.js';
import { setSetting } from '../../electron/core/station/settings.js';
import {
  countStartsAnew,
  keepSent,
  resendLost,
  resendLostPushes,
  sentSeq,
  sentThrough,
  seqStartsAnew,
} from '../../electron/core/sync/resend.js';
import { tempDir } from './helpers.js';

function schemaOf(db: Database.Database): unknown[] {
  return db
    .prepare(
      "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name",
    )
    .all();
}

/** Every table's rows (sqlite_sequence too), by table name. */
function rowsOfEveryTable(db: Database.Database): Record<string, unknown[]> {
  const tables = db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
    .pluck()
    .all() as string[];
  return Object.fromEntries(
    tables.map((table) => [
      table,
      // Some tables have no rowid: rows in the order of their JSON.
      db
        .prepare(`SELECT * FROM "${table}"`)
        .all()
        .map((row) => JSON.stringify(row))
        .sort(),
    ]),
  );
}

/** A station database linked to a server, and a way to queue a record in its outbox. */
function stationWithServer(file: string): {
  db: Database.Database;
  queue: (uuid: string, payload?: string) => number;
} {
  const db = openDatabase(join(tempDir(), file));
  setSetting(db, 'sync.server', 'http://server.example/');
  setSetting(db, 'sync.key', 'key-1');
  const queue = (uuid: string, payload = '{}'): number =>
    Number(
      db
        .prepare(
          `INSERT INTO outbox (kind, record_uuid, payload, created_at)
           VALUES ('usage_event', ?, ?, '2026-12-01T00:00:00Z')`,
        )
        .run(uuid, payload).lastInsertRowid,
    );
  return { db, queue };
}

describe('database', () => {
  it('opens with WAL, foreign keys and synchronous=FULL, at the latest version', () => {
    const db = openDatabase(join(tempDir(), 'a.db'));
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(db.pragma('synchronous', { simple: true })).toBe(2);
    expect(schemaVersion(db)).toBe(LATEST_VERSION);
    db.close();
  });

  // Mutation: the mode set to 0600 at every open, as it was (a read-only data dir failed every
  // command with EROFS, and a file made read-only on purpose was made writable again).
  it('keeps its file private to its owner, and changes the mode only when others may read it', () => {
    const file = join(tempDir(), 'mode.db');
    openDatabase(file).close();
    expect(statSync(file).mode & 0o777).toBe(0o600);
    chmodSync(file, 0o644);
    openDatabase(file).close();
    expect(statSync(file).mode & 0o777).toBe(0o600);
    // Private already: not touched (a chmod, even to the same mode, moves the change time).
    chmodSync(file, 0o400);
    const before = statSync(file, { bigint: true }).ctimeNs;
    if (process.getuid?.() === 0) {
      openDatabase(file).close();
      expect(statSync(file).mode & 0o777).toBe(0o400);
      expect(statSync(file, { bigint: true }).ctimeNs).toBe(before);
    }
    chmodSync(file, 0o600);
  });

  // A new database takes every step in one transaction with foreign keys off (open.ts
  // migrateNew); one built step by step, each in its own, must come out the same: schema, the
  // rows the steps put in (settings, sequences), and its pragmas after.
  it('builds the same schema and rows step by step as from zero, and reopening changes nothing', () => {
    const dir = tempDir();
    const stepwise = new Database(join(dir, 'step.db'));
    for (let i = 1; i <= migrations.length; i++) {
      stepwise.close();
      const db = openDatabase(join(dir, 'step.db'), migrations.slice(0, i));
      expect(schemaVersion(db)).toBe(migrations[i - 1].version);
      db.close();
    }
    const a = openDatabase(join(dir, 'step.db'));
    const b = openDatabase(join(dir, 'zero.db'));
    expect(schemaOf(a)).toEqual(schemaOf(b));
    expect(rowsOfEveryTable(b)).toEqual(rowsOfEveryTable(a));
    expect(Object.keys(rowsOfEveryTable(b)).length).toBeGreaterThan(40);
    for (const db of [a, b]) {
      expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
      expect(db.pragma('legacy_alter_table', { simple: true })).toBe(0);
      expect(db.pragma('foreign_key_check')).toEqual([]);
    }
    const again = openDatabase(join(dir, 'zero.db'));
    expect(schemaOf(again)).toEqual(schemaOf(b));
    a.close();
    b.close();
    again.close();
  });

  // Mutation: each step taken on the version read before the first, as it was: this open
  // failed on "table settings already exists" (two imports into a new data dir at once, or a
  // cron job's command beside a station starting after an upgrade).
  it('takes each step once when another process migrates the same database meanwhile', () => {
    const file = join(tempDir(), 'shared.db');
    let other: Database.Database | undefined;
    // The other process migrates the whole way after this one read the version (0), before
    // this one takes its first step.
    const racing = Object.assign([...migrations], {
      *[Symbol.iterator]() {
        other = openDatabase(file);
        yield* migrations;
      },
    });
    const db = openDatabase(file, racing);
    expect(other).toBeDefined();
    expect(schemaVersion(db)).toBe(LATEST_VERSION);
    expect(schemaOf(db)).toEqual(schemaOf(other!));
    db.close();
    other?.close();
  });

  it('refuses a database written by a newer version and leaves it untouched', () => {
    const file = join(tempDir(), 'new.db');
    const raw = new Database(file);
    raw.exec('CREATE TABLE future (x)');
    raw.pragma(`user_version = ${LATEST_VERSION + 1}`);
    raw.close();
    const before = readFileSync(file);
    expect(() => openDatabase(file)).toThrow(NewerDatabaseError);
    expect(readFileSync(file).equals(before)).toBe(true);
    expect(existsSync(`${file}-wal`)).toBe(false);
    const again = new Database(file);
    expect(schemaVersion(again)).toBe(LATEST_VERSION + 1);
    expect(
      again.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'users'").pluck().get(),
    ).toBe(0);
    again.close();
  });

  it('migration 15: ids of deleted harvest resources are never given again; rows, references, indexes and triggers kept', () => {
    const file = join(tempDir(), 'm15.db');
    const db = openDatabase(file, migrations.slice(0, 14));
    const t = '2026-01-05T10:00:00.000Z';
    db.exec(`
      INSERT INTO settings (key, value) VALUES ('mode', '"server"');
      INSERT INTO users (uuid, username, created_at, updated_at) VALUES ('u1', 'alice', '${t}', '${t}');
      INSERT INTO tools (uuid, name, created_at, updated_at) VALUES ('t1', 'SEM', '${t}', '${t}');
      INSERT INTO stations (uuid, name, key_hash, created_at, tool_id)
        VALUES ('s1', 'pc-1', 'k1', '${t}', 1), ('s2', 'pc-2', 'k2', '${t}', 1);
      INSERT INTO storage_locations (uuid, name, type, base_path, created_at, updated_at)
        VALUES ('l1', 'a', 'local', '/a', '${t}', '${t}'), ('l2', 'b', 'local', '/b', '${t}', '${t}');
      INSERT INTO instruments (uuid, name, tool_id, station_id, destination_template, created_at, updated_at)
        VALUES ('i1', 'cam', 1, 1, '{filename}', '${t}', '${t}'),
               ('i2', 'eds', 1, 1, '{filename}', '${t}', '${t}');
      INSERT INTO harvest_schedules (uuid, instrument_id, cron, created_at, updated_at)
        VALUES ('c1', 1, '0 3 * * *', '${t}', '${t}'), ('c2', 1, '0 4 * * *', '${t}', '${t}');
      INSERT INTO harvest_hooks (uuid, name, "trigger", kind, created_at, updated_at, instrument_id)
        VALUES ('h1', 'x', 'post_transfer', 'file_info', '${t}', '${t}', 1),
               ('h2', 'y', 'post_transfer', 'file_info', '${t}', '${t}', 1);
      INSERT INTO user_instrument_access (instrument_id, user_id, granted_at) VALUES (1, 1, '${t}');
    `);
    // The highest of each deleted before the migration, as an admin would over the API.
    db.exec(`DELETE FROM harvest_hooks WHERE id = 2; DELETE FROM harvest_schedules WHERE id = 2;
      DELETE FROM instruments WHERE id = 2; DELETE FROM storage_locations WHERE id = 2;
      DELETE FROM stations WHERE id = 2;`);
    const shape = (d: Database.Database): unknown =>
      d
        .prepare(
          `SELECT type, name, tbl_name FROM sqlite_master WHERE tbl_name IN ('instruments',
             'storage_locations', 'stations', 'harvest_schedules', 'harvest_hooks')
             AND type <> 'table' ORDER BY name`,
        )
        .all();
    const before = shape(db);
    const rows = (d: Database.Database): unknown =>
      ['instruments', 'storage_locations', 'stations', 'harvest_schedules', 'harvest_hooks'].map(
        (table) => d.prepare(`SELECT * FROM ${table} ORDER BY id`).all(),
      );
    const rowsBefore = rows(db);
    db.close();

    // Up to migration 15 itself: later ones add columns to these tables.
    const migrated = openDatabase(file, migrations.slice(0, 15));
    expect(schemaVersion(migrated)).toBe(15);
    expect(rows(migrated)).toEqual(rowsBefore);
    expect(shape(migrated)).toEqual(before);
    expect(migrated.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(migrated.pragma('foreign_key_check')).toEqual([]);
    // Ids freed from now on are not given again.
    const hook = (uuid: string): number =>
      Number(
        migrated
          .prepare(
            `INSERT INTO harvest_hooks (uuid, name, "trigger", kind, created_at, updated_at)
             VALUES (?, ?, 'post_transfer', 'file_info', '${t}', '${t}')`,
          )
          .run(uuid, uuid).lastInsertRowid,
      );
    const three = hook('h3');
    expect(three).toBe(2); // the one freed before the migration: SQLite's old rule
    migrated.prepare('DELETE FROM harvest_hooks WHERE id = ?').run(three);
    expect(hook('h4')).toBe(3);
    const instrument = Number(
      migrated
        .prepare(
          `INSERT INTO instruments (uuid, name, tool_id, destination_template, created_at, updated_at)
           VALUES ('i3', 'tem', 1, '{filename}', '${t}', '${t}')`,
        )
        .run().lastInsertRowid,
    );
    migrated.prepare('DELETE FROM instruments WHERE id = ?').run(instrument);
    const next = migrated
      .prepare(
        `INSERT INTO instruments (uuid, name, tool_id, destination_template, created_at, updated_at)
         VALUES ('i4', 'tem', 1, '{filename}', '${t}', '${t}')`,
      )
      .run().lastInsertRowid;
    expect(Number(next)).toBe(instrument + 1);
    // The references and their ON DELETE rules still hold.
    const dropCamera = migrated.prepare('DELETE FROM instruments WHERE id = 1');
    expect(() => dropCamera.run()).toThrow(/FOREIGN KEY/); // its schedule and hook name it
    migrated.exec(
      'DELETE FROM harvest_schedules; DELETE FROM harvest_hooks WHERE instrument_id = 1',
    );
    dropCamera.run();
    expect(migrated.prepare('SELECT count(*) FROM user_instrument_access').pluck().get()).toBe(0);
    migrated.close();
  });

  it('migration 31: ids of deleted uploads are never given again; rows, references and indexes kept', () => {
    const file = join(tempDir(), 'm31.db');
    const db = openDatabase(file, migrations.slice(0, 30));
    const t = '2026-01-05T10:00:00.000Z';
    db.exec(`
      INSERT INTO settings (key, value) VALUES ('mode', '"server"');
      INSERT INTO tools (uuid, name, created_at, updated_at) VALUES ('t1', 'SEM', '${t}', '${t}');
      INSERT INTO stations (uuid, name, key_hash, created_at, tool_id)
        VALUES ('s1', 'pc-1', 'k1', '${t}', 1), ('s2', 'pc-2', 'k2', '${t}', 1);
      INSERT INTO storage_locations (uuid, name, type, base_path, created_at, updated_at)
        VALUES ('l1', 'a', 'server', '/a', '${t}', '${t}');
    `);
    const upload = (d: Database.Database, uuid: string, station = 1): number =>
      Number(
        d
          .prepare(
            `INSERT INTO harvest_uploads (uuid, station_id, file_uuid, storage_location_id,
               destination_path, size, xxhash, partial_path, created_at, updated_at)
             VALUES (?, ?, ?, 1, ?, 10, 'h', '/a/.labstation-uploads/p', '${t}', '${t}')`,
          )
          .run(uuid, station, uuid, `d/${uuid}`).lastInsertRowid,
      );
    upload(db, 'u1');
    upload(db, 'u2', 2);
    db.prepare('DELETE FROM harvest_uploads WHERE id = 2').run();
    const shape = (d: Database.Database): unknown =>
      d
        .prepare(
          `SELECT type, name, sql FROM sqlite_master WHERE tbl_name = 'harvest_uploads'
             AND type <> 'table' ORDER BY name`,
        )
        .all();
    const before = shape(db);
    const rowsBefore = db.prepare('SELECT * FROM harvest_uploads ORDER BY id').all();
    db.close();

    const migrated = openDatabase(file, migrations.slice(0, 31));
    expect(schemaVersion(migrated)).toBe(31);
    expect(migrated.prepare('SELECT * FROM harvest_uploads ORDER BY id').all()).toEqual(rowsBefore);
    expect(shape(migrated)).toEqual(before);
    expect(migrated.pragma('foreign_key_check')).toEqual([]);
    const three = upload(migrated, 'u3');
    expect(three).toBe(2); // the one freed before the migration: SQLite's old rule
    migrated.prepare('DELETE FROM harvest_uploads WHERE id = ?').run(three);
    expect(upload(migrated, 'u4')).toBe(3);
    // The references and their ON DELETE rules still hold.
    expect(() => upload(migrated, 'u5', 9)).toThrow(/FOREIGN KEY/);
    migrated.prepare('DELETE FROM stations WHERE id = 1').run();
    expect(migrated.prepare('SELECT uuid FROM harvest_uploads').pluck().all()).toEqual([]);
    migrated.close();
  });

  it('enforces one active usage per tool in the schema itself', () => {
    const db = openDatabase(join(tempDir(), 'c.db'));
    const now = new Date().toISOString();
    db.exec(`INSERT INTO users (uuid, username, created_at, updated_at) VALUES ('u', 'u', '${now}', '${now}');
      INSERT INTO projects (uuid, name, created_at, updated_at) VALUES ('p', 'p', '${now}', '${now}');
      INSERT INTO tools (uuid, name, created_at, updated_at) VALUES ('t', 't', '${now}', '${now}');`);
    const insert = db.prepare(
      `INSERT INTO usage_events (uuid, user_id, operator_id, project_id, tool_id, start, updated_at)
       VALUES (?, 1, 1, 1, 1, ?, ?)`,
    );
    insert.run('e1', now, now);
    expect(() => insert.run('e2', now, now)).toThrow(/UNIQUE/);
    db.close();
  });

  it('migration 5: answers given on the server before it are sent to the station and not undone', () => {
    const file = join(tempDir(), 'm5.db');
    const db = openDatabase(file, migrations.slice(0, 4));
    const now = '2026-01-05T10:00:00.000Z';
    db.exec(`INSERT INTO settings (key, value) VALUES ('mode', '"server"');
      INSERT INTO users (uuid, username, created_at, updated_at) VALUES ('u', 'u', '${now}', '${now}');
      INSERT INTO projects (uuid, name, created_at, updated_at) VALUES ('p', 'p', '${now}', '${now}');
      INSERT INTO tools (uuid, name, created_at, updated_at) VALUES ('t', 't', '${now}', '${now}');
      INSERT INTO stations (uuid, name, tool_id, key_hash, created_at) VALUES ('s', 's', 1, 'h', '${now}');`);
    const insert = db.prepare(
      `INSERT INTO usage_events (uuid, user_id, operator_id, project_id, tool_id, start, "end",
         run_data, post_usage_pending, version, updated_at, station_id)
       VALUES (?, 1, 1, 1, 1, '${now}', '${now}', ?, ?, ?, '${now}', 1)`,
    );
    // e1: force-ended at the station (version 2), answered on the server (version 3).
    insert.run('e1', '{"a":1}', 0, 3);
    db.exec(`INSERT INTO mail_outbox (uuid, kind, usage_event_id, "to", subject, text, next_attempt_at, created_at)
      VALUES ('m1', 'pending_answers', 1, 'u@example.org', 's', 't', '${now}', '${now}')`);
    // e2: an ordinary event; e3: still pending.
    insert.run('e2', '{"b":2}', 0, 2);
    insert.run('e3', '', 1, 2);
    db.close();

    const upgraded = openDatabase(file);
    const rows = upgraded
      .prepare(
        `SELECT uuid, version, station_version, answered_on_server_at, answer_acked
         FROM usage_events ORDER BY uuid`,
      )
      .all();
    expect(rows).toEqual([
      { uuid: 'e1', version: 3, station_version: 2, answered_on_server_at: now, answer_acked: 0 },
      { uuid: 'e2', version: 2, station_version: 2, answered_on_server_at: null, answer_acked: 1 },
      { uuid: 'e3', version: 2, station_version: 2, answered_on_server_at: null, answer_acked: 1 },
    ]);
    expect(upgraded.prepare('SELECT station_id, tool_id FROM station_tools').all()).toEqual([
      { station_id: 1, tool_id: 1 },
    ]);
    upgraded.close();
  });

  it('migration 10: the change log keeps its rows and its position, and logs reservations and areas', () => {
    const file = join(tempDir(), 'm10.db');
    const db = openDatabase(file, migrations.slice(0, 9));
    const now = '2026-01-05T10:00:00.000Z';
    db.exec(`INSERT INTO settings (key, value) VALUES ('mode', '"server"');
      INSERT INTO users (uuid, username, created_at, updated_at) VALUES ('u1', 'u1', '${now}', '${now}');
      INSERT INTO users (uuid, username, created_at, updated_at) VALUES ('u2', 'u2', '${now}', '${now}');
      INSERT INTO tools (uuid, name, created_at, updated_at) VALUES ('t', 't', '${now}', '${now}');`);
    // The newest change removed: stations may hold a cursor past the highest row left.
    db.exec('DELETE FROM sync_changes WHERE seq = (SELECT max(seq) FROM sync_changes)');
    const rowsBefore = db.prepare('SELECT seq, entity, uuid FROM sync_changes ORDER BY seq').all();
    const position = db
      .prepare("SELECT seq FROM sqlite_sequence WHERE name = 'sync_changes'")
      .pluck()
      .get() as number;
    expect(rowsBefore.length).toBe(position - 1);
    db.close();

    const upgraded = openDatabase(file);
    const log = (): { seq: number; entity: string; uuid: string }[] =>
      upgraded.prepare('SELECT seq, entity, uuid FROM sync_changes ORDER BY seq').all() as {
        seq: number;
        entity: string;
        uuid: string;
      }[];
    expect(log()).toEqual(rowsBefore);
    // The triggers of migration 3 write to the rebuilt table, after the old position.
    upgraded.exec(
      `INSERT INTO projects (uuid, name, created_at, updated_at) VALUES ('p', 'p', '${now}', '${now}')`,
    );
    expect(log().at(-1)).toEqual({ seq: position + 1, entity: 'project', uuid: 'p' });
    upgraded.exec(`INSERT INTO areas (uuid, name, created_at, updated_at) VALUES ('a', 'a', '${now}', '${now}');
      INSERT INTO area_tools (area_id, tool_id) VALUES (1, 1);
      INSERT INTO reservations (uuid, user_id, creator_id, project_id, tool_id, start, "end",
        created_at, updated_at) VALUES ('r', 1, 1, 1, 1, '${now}', '2026-01-05T11:00:00.000Z', '${now}', '${now}');
      UPDATE reservations SET cancelled = 1 WHERE uuid = 'r';`);
    expect(
      log()
        .slice(-5)
        .map((c) => [c.entity, c.uuid]),
    ).toEqual([
      ['area', 'a'],
      ['area', 'a'],
      ['reservation', 'r'],
      ['reservation', 'r'],
      ['reservation', 'r'],
    ]);
    expect(() =>
      upgraded.exec("INSERT INTO sync_changes (entity, uuid) VALUES ('bogus', 'x')"),
    ).toThrow(/CHECK constraint/);
    // A station logs nothing of what it is sent.
    upgraded.exec(`UPDATE settings SET value = '"station"' WHERE key = 'mode';
      UPDATE reservations SET cancelled = 0 WHERE uuid = 'r';`);
    expect(log().length).toBe(rowsBefore.length + 6);
    upgraded.close();
  });

  it('migration 43: the tools in areas before it are held since ever; later changes are dated', () => {
    const now = '2026-01-05T10:00:00.000Z';
    const file = join(tempDir(), 'm43.db');
    const before = openDatabase(file, migrations.slice(0, 42));
    before.exec(`INSERT INTO tools (uuid, name, created_at, updated_at)
        VALUES ('t1', 't1', '${now}', '${now}'), ('t2', 't2', '${now}', '${now}');
      INSERT INTO areas (uuid, name, created_at, updated_at) VALUES ('a', 'a', '${now}', '${now}');
      INSERT INTO area_tools (area_id, tool_id) VALUES (1, 1);`);
    before.close();
    const db = openDatabase(file);
    const spans = () =>
      db
        .prepare('SELECT tool_id, held_from, held_until FROM area_tool_spans ORDER BY id')
        .all() as { tool_id: number; held_from: string; held_until: string | null }[];
    expect(spans()).toEqual([
      { tool_id: 1, held_from: '0000-01-01T00:00:00.000Z', held_until: null },
    ]);
    db.exec('DELETE FROM area_tools WHERE tool_id = 1; INSERT INTO area_tools VALUES (1, 2);');
    const [first, second] = spans();
    expect(first?.held_until).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(second).toMatchObject({ tool_id: 2, held_until: null });
    expect(second.held_from >= first.held_until!).toBe(true);
    db.close();
  });

  it("migration 12: a station's file records, old and new, are found by a part of their path; a server's are not indexed", () => {
    const now = '2026-01-05T10:00:00.000Z';
    const record = (db: Database.Database, id: number, path: string): void => {
      db.prepare(
        `INSERT INTO harvest_files (id, uuid, instrument_id, persistent_id, watch_path,
           relative_path, source_path, filename, size, mtime_ms, first_discovered_at, updated_at)
         VALUES (?, ?, 1, ?, '/w', ?, '/w/' || ?, ?, 1, 1, ?, ?)`,
      ).run(id, `f${id}`, `ark:99999/fk4${id}`, path, path, path, now, now);
    };
    const withRecords = (mode: string, file: string): Database.Database => {
      const db = openDatabase(file, migrations.slice(0, 11));
      db.exec(`INSERT INTO settings (key, value) VALUES ('mode', '${JSON.stringify(mode)}');
        INSERT INTO tools (uuid, name, created_at, updated_at) VALUES ('t', 't', '${now}', '${now}');
        INSERT INTO instruments (uuid, name, tool_id, destination_template, created_at, updated_at)
          VALUES ('i', 'i', 1, '{relative_path}', '${now}', '${now}')`);
      record(db, 1, 'run-7/Grain-Boundary.tif');
      record(db, 2, 'run-8/other.tif');
      db.close();
      return openDatabase(file);
    };
    const indexed = (db: Database.Database, text: string): number[] =>
      db
        .prepare(
          'SELECT rowid FROM harvest_files_path WHERE harvest_files_path MATCH ? ORDER BY rowid',
        )
        .pluck()
        .all(`"${text}"`) as number[];
    const found = (db: Database.Database, search: string): string[] =>
      listFiles(db, { search }).map((f) => f.relative_path);

    const station = withRecords('station', join(tempDir(), 'm12s.db'));
    // Records made before the migration are indexed by it, without case.
    expect(indexed(station, 'grain-b')).toEqual([1]);
    expect(indexed(station, '.TIF')).toEqual([1, 2]);
    // Records made after it are found as they are, newest first, before the indexed ones,
    // and a search writes nothing; the harvest adds them to the index in bulk.
    record(station, 3, 'run-9/grain-c.tif');
    record(station, 4, 'run-9/other.tif');
    expect(found(station, 'GRAIN')).toEqual(['run-9/grain-c.tif', 'run-7/Grain-Boundary.tif']);
    expect(listFiles(station, { search: '.tif', limit: 3 }).map((f) => f.id)).toEqual([4, 3, 2]);
    expect(listFiles(station, { search: '.tif', limit: 2, beforeId: 4 }).map((f) => f.id)).toEqual([
      3, 2,
    ]);
    expect(indexed(station, 'grain')).toEqual([1]);
    indexPaths(station);
    expect(indexed(station, 'grain')).toEqual([1, 3]);
    expect(found(station, 'GRAIN')).toEqual(['run-9/grain-c.tif', 'run-7/Grain-Boundary.tif']);
    expect(station.prepare('SELECT through FROM harvest_files_path_through').pluck().get()).toBe(4);
    // No path holds a NUL: nothing is found, and nothing fails.
    expect(found(station, 'grain\0')).toEqual([]);
    station
      .prepare("INSERT INTO harvest_files_path (harvest_files_path) VALUES ('integrity-check')")
      .run();
    station.close();

    const server = withRecords('server', join(tempDir(), 'm12v.db'));
    expect(indexed(server, '.tif')).toEqual([]);
    // Read as they are there (`labstation files --search` on a server's data dir).
    expect(found(server, 'grain')).toEqual(['run-7/Grain-Boundary.tif']);
    expect(server.prepare('SELECT through FROM harvest_files_path_through').pluck().get()).toBe(0);
    server.close();
  });

  it('answers the hot queries from indexes (EXPLAIN QUERY PLAN)', () => {
    const db = openDatabase(join(tempDir(), 'd.db'));
    const plan = (sql: string): string =>
      (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as { detail: string }[])
        .map((r) => r.detail)
        .join('\n');
    expect(plan('SELECT * FROM usage_events WHERE tool_id = 1 AND "end" IS NULL')).toMatch(
      /USING INDEX usage_events_active/,
    );
    expect(
      plan("SELECT * FROM usage_events WHERE tool_id = 1 AND start >= '2026' ORDER BY start DESC"),
    ).toMatch(/USING (COVERING )?INDEX usage_events_tool_start/);
    expect(plan('SELECT * FROM usage_events WHERE user_id = 1 AND post_usage_pending = 1')).toMatch(
      /USING INDEX usage_events_user_pending/,
    );
    db.close();
  });

  it('keeps acknowledged outbox rows for sync.keepSentDays, and queues the newest of those past a lower count again', () => {
    const { db, queue } = stationWithServer('sent.db');
    const ack = (ids: number[], at = now) => db.transaction(() => keepSent(db, ids, at))();
    const outbox = () =>
      db.prepare('SELECT record_uuid, payload FROM outbox ORDER BY id').all() as {
        record_uuid: string;
        payload: string;
      }[];
    const kept = () => db.prepare('SELECT id FROM outbox_sent ORDER BY id').pluck().all();
    const day = 24 * 3600_000;
    const now = Date.parse('2026-12-02T12:00:00Z');
    const [a, b, c] = ['a', 'b', 'c'].map((u) => queue(u));
    ack([a, b], now - 8 * day);
    // A week later: a and b (acknowledged 8 days ago) go, c stays.
    ack([c]);
    expect(outbox()).toEqual([]);
    expect(kept()).toEqual([c]);
    expect(sentThrough(db)).toBe(c);

    // d in two versions, e once; then a newer e waits in the outbox.
    const d1 = queue('d', '{"v":1}');
    const d2 = queue('d', '{"v":2}');
    const e1 = queue('e', '{"v":1}');
    ack([d1, d2, e1]);
    queue('e', '{"v":2}');
    // A count at e1: nothing lost. At c: d goes again, its newest version once; e's newer
    // version waits already.
    expect(resendLost(db, e1, sentThrough(db))).toBe(0);
    expect(resendLost(db, c, sentThrough(db))).toBe(1);
    expect(outbox()).toEqual([
      { record_uuid: 'e', payload: '{"v":2}' },
      { record_uuid: 'd', payload: '{"v":2}' },
    ]);
    expect(kept()).toEqual([c]);

    // An older version waiting in the outbox (refused and set aside) does not hold back the
    // newest, which goes again after it.
    const x1 = queue('x', '{"v":1}');
    const x2 = queue('x', '{"v":2}');
    ack([x2]);
    expect(resendLost(db, x1, sentThrough(db))).toBe(1);
    expect(outbox().filter((r) => r.record_uuid === 'x')).toEqual([
      { record_uuid: 'x', payload: '{"v":1}' },
      { record_uuid: 'x', payload: '{"v":2}' },
    ]);

    // No count on the server for this data dir (restored from a backup made before its first
    // push, or another data dir held the key): everything kept goes again, once.
    const f = queue('f');
    ack([f]);
    expect(kept()).toEqual([c, f]);
    db.prepare('DELETE FROM outbox').run();
    expect(countStartsAnew(db)).toBe(2);
    expect(outbox().map((r) => r.record_uuid)).toEqual(['c', 'f']);
    expect(kept()).toEqual([]);
    expect(resendLost(db, 1, sentThrough(db))).toBe(0);

    // A notebook entry goes again without the version it was made from: the restored server
    // lost the versions between, and refused it (ingestNotebook.ts) at every resend.
    const n = Number(
      db
        .prepare(
          `INSERT INTO outbox (kind, record_uuid, payload, created_at)
           VALUES ('notebook_entry', 'n', ?, '2026-12-01T00:00:00Z')`,
        )
        .run('{"version":3,"previous_updated_at":"2026-12-01T00:00:00.000Z"}').lastInsertRowid,
    );
    ack([n]);
    db.prepare('DELETE FROM outbox').run();
    expect(countStartsAnew(db)).toBe(1);
    expect(outbox()).toEqual([{ record_uuid: 'n', payload: '{"version":3}' }]);
    db.prepare('DELETE FROM outbox').run();

    // Another key: what was kept for the old one is dropped.
    setSetting(db, 'sync.key', 'key-2');
    ack([queue('g')]);
    expect(db.prepare('SELECT record_uuid FROM outbox_sent').pluck().all()).toEqual(['g']);

    // With 0 days, nothing is kept.
    setSetting(db, 'sync.keepSentDays', 0);
    ack([queue('h')]);
    expect(kept()).toEqual([]);
    db.close();
  });

  it('queues again the records of pushes a server lost, by their numbers: those taken late too', () => {
    const { db, queue } = stationWithServer('pushes.db');
    const ack = (ids: number[], seq: number | null) =>
      db.transaction(() => keepSent(db, ids, Date.now(), seq))();
    const outbox = () => db.prepare('SELECT record_uuid FROM outbox ORDER BY id').pluck().all();
    // a is set aside (refused) while b and c are taken by push 1; a is taken late, by push 2.
    const [a, b, c] = ['a', 'b', 'c'].map((u) => queue(u));
    ack([b, c], 1);
    ack([a], 2);
    expect(sentSeq(db)).toBe(2);
    // A server restored from a backup made between the two pushes: its highest id is c's, as
    // before the restore, so the ids alone say nothing was lost; its push number says a was.
    expect(resendLost(db, c, sentThrough(db))).toBe(0);
    expect(resendLostPushes(db, 2, sentSeq(db))).toBe(0);
    expect(resendLostPushes(db, 1, sentSeq(db))).toBe(1);
    expect(outbox()).toEqual(['a']);
    expect(db.prepare('SELECT record_uuid FROM outbox_sent ORDER BY id').pluck().all()).toEqual([
      'b',
      'c',
    ]);

    // A record whose newer version the server kept from an earlier push: not sent again,
    // though its older version, taken late (as stale), was lost.
    db.prepare('DELETE FROM outbox').run();
    const x1 = queue('x', '{"v":1}');
    const x2 = queue('x', '{"v":2}');
    ack([x2], 3);
    ack([x1], 4);
    expect(resendLostPushes(db, 3, sentSeq(db))).toBe(0);
    expect(outbox()).toEqual([]);

    // The server numbers this data dir's pushes anew (another data dir held the key): the
    // numbers kept no longer count, and its low ones lose nothing.
    ack([queue('y')], 5);
    seqStartsAnew(db);
    expect(sentSeq(db)).toBe(0);
    expect(resendLostPushes(db, 1, sentSeq(db))).toBe(0);
    // Kept from a server that does not number its pushes: never sent again by number.
    ack([queue('z')], null);
    expect(resendLostPushes(db, 1, 5)).toBe(0);
    expect(outbox()).toEqual([]);
    db.close();
  });
});
