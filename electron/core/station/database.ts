/** The station's database, as the station and the one-shot commands that read it open it. */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { openDatabase, type Db, type OpenOptions } from '../db/open.js';
import { migrations } from '../db/migrations.js';

export function openStationDatabase(dataDir: string, options: OpenOptions = {}): Db {
  // A data dir we create is the owner's alone: it holds the database with the PIN hashes.
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const db = openDatabase(join(dataDir, 'labstation.db'), migrations, options);
  // Savepoints inside a transaction keep the pages they change in a sub-journal, which
  // SQLite spills to a temporary file past 64 KiB: the harvest's group commit (a savepoint
  // per file) wrote about 13 pages a file to /var/tmp, a system call per page and per page
  // number. A station's transactions are small; held in memory, they cost what the pages do.
  db.pragma('temp_store = MEMORY');
  return db;
}
