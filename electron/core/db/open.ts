import { chmodSync, existsSync, statSync, writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { LATEST_VERSION, migrations, type Migration } from './migrations.js';

export type Db = Database.Database;

export class NewerDatabaseError extends Error {
  constructor(
    readonly found: number,
    readonly supported: number,
  ) {
    super(
      `database schema version ${found} is newer than this Labstation supports (${supported}); ` +
        'update Labstation, or open a copy of the data with the version that wrote it',
    );
    this.name = 'NewerDatabaseError';
  }
}

export interface OpenOptions {
  /**
   * Called before the migrations of a database older than this build (schema `found` below
   * `latest`); throws to refuse them, and nothing is written. What it returns is called once
   * they ended, or failed.
   */
  beforeUpgrade?: (found: number, latest: number) => () => void;
}

/**
 * Opens (creating if needed) a Labstation database: WAL, foreign keys, synchronous=FULL so a
 * committed usage event survives a power cut, then migrates it to the latest version. The file
 * holds PIN hashes, so it is readable by its owner only (SQLite gives its -wal and -shm files
 * the same mode). A database from a newer version is refused before anything is written to it.
 */
export function openDatabase(
  file: string,
  list: readonly Migration[] = migrations,
  options: OpenOptions = {},
): Db {
  if (file !== ':memory:') {
    if (!existsSync(file)) writeFileSync(file, '', { mode: 0o600 });
    // Changed only when others may read it: a file made read-only on purpose stays so, and
    // one on a read-only mount, private already, is opened without a write to it.
    const mode = statSync(file).mode & 0o777;
    if (mode & 0o077) chmodSync(file, mode & 0o700);
  }
  const db = newDatabase(file);
  try {
    const latest = list.length ? list[list.length - 1].version : LATEST_VERSION;
    const found = schemaVersion(db);
    if (found > latest) throw new NewerDatabaseError(found, latest);
    // Asked before anything is written: the WAL switch below writes to the file.
    const upgraded = found < latest ? options.beforeUpgrade?.(found, latest) : undefined;
    try {
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = FULL');
      db.pragma('foreign_keys = ON');
      db.pragma('busy_timeout = 5000');
      // SQLite's upper() and NOCASE fold ASCII letters only: "émile" would not match "Émile".
      db.function('unicode_upper', { deterministic: true }, (text: unknown) =>
        typeof text === 'string' ? text.toUpperCase() : text,
      );
      // Unicode writes "é" composed (U+00E9) or decomposed ("e" + U+0301, as macOS names files):
      // searches compare both sides in the composed form (NFC), stored text through this.
      db.function('nfc', { deterministic: true }, (text: unknown) =>
        typeof text === 'string' ? text.normalize('NFC') : text,
      );
      migrate(db, list);
    } finally {
      upgraded?.();
    }
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

/**
 * A better-sqlite3 connection to `file`, nothing set. The desktop app runs Electron's Node,
 * whose native-module ABI differs from plain Node's: bin/start.js builds better-sqlite3 for it
 * into its own folder and names the file here.
 */
export function newDatabase(
  file: string,
  options: { timeout?: number; fileMustExist?: boolean } = {},
): Db {
  const binding = process.env.LABSTATION_SQLITE_BINDING;
  return new Database(file, binding ? { ...options, nativeBinding: binding } : options);
}

export function schemaVersion(db: Db): number {
  return db.pragma('user_version', { simple: true }) as number;
}

export function migrate(db: Db, list: readonly Migration[] = migrations): void {
  const latest = list.length ? list[list.length - 1].version : LATEST_VERSION;
  const current = schemaVersion(db);
  if (current > latest) throw new NewerDatabaseError(current, latest);
  // The steps are read once, here, between reading the version and taking the first step: the
  // race test (database.test) starts another process's migration in that gap by hooking this
  // read. A new database takes them all at once, or step by step if that process began it.
  const steps = [...list];
  if (current === 0 && steps.length > 0 && migrateNew(db, steps, latest)) return;
  for (const step of steps) {
    if (step.version <= current) continue;
    // Outside a transaction, where SQLite takes these two: no ON DELETE action while a table
    // is made anew, and no check of other tables' triggers while it has no name.
    if (step.rebuildsTables) {
      db.pragma('foreign_keys = OFF');
      db.pragma('legacy_alter_table = ON');
    }
    try {
      db.transaction(() => {
        // Another process opening the same old database may have taken this step while this
        // one waited for the write lock: each step once, whoever takes it.
        if (schemaVersion(db) >= step.version) return;
        db.exec(step.sql);
        step.run?.(db);
        if (step.rebuildsTables) checkReferences(db, `migration ${step.version}`);
        db.pragma(`user_version = ${step.version}`);
      }).immediate();
    } finally {
      if (step.rebuildsTables) {
        db.pragma('legacy_alter_table = OFF');
        db.pragma('foreign_keys = ON');
      }
    }
  }
}

/**
 * A new database takes every step in one transaction: with nothing in it to keep, one commit
 * does what one per step did, and a crash midway leaves it new. 47 steps took about 0.13 s one
 * by one and 0.08 s together; every new data dir takes them, the tests' hundreds of times.
 * Foreign keys are off throughout, as for a rebuilding step (SQLite takes that pragma only
 * outside a transaction; with no rows, no ON DELETE action has anything to do), and checked at
 * the end. False, with nothing done, when another process began it meanwhile: its steps are
 * then taken one by one, each once (migrate).
 */
function migrateNew(db: Db, steps: readonly Migration[], latest: number): boolean {
  db.pragma('foreign_keys = OFF');
  try {
    return db
      .transaction(() => {
        if (schemaVersion(db) !== 0) return false;
        for (const step of steps) {
          // As each step runs alone (migrate), where a step's own SQL may set it too.
          db.pragma(`legacy_alter_table = ${step.rebuildsTables ? 'ON' : 'OFF'}`);
          db.exec(step.sql);
          step.run?.(db);
        }
        checkReferences(db, 'new database');
        db.pragma(`user_version = ${latest}`);
        return true;
      })
      .immediate();
  } finally {
    db.pragma('legacy_alter_table = OFF');
    db.pragma('foreign_keys = ON');
  }
}

/** After steps taken with foreign keys off: refuses rows whose referenced row is gone. */
function checkReferences(db: Db, what: string): void {
  const broken = db.pragma('foreign_key_check') as unknown[];
  if (broken.length) throw new Error(`${what}: ${broken.length} rows lost their reference`);
}
