/**
 * A station database with one tool and one instrument (id 1), and the records and outcomes the
 * harvest's record functions take, for tests of those functions on a real SQLite file.
 */
import { join } from 'node:path';
import { openDatabase, type Db } from '../../electron/core/db/open.js';
import { recordFile, type TransferOutcome } from '../../electron/core/harvest/records.js';
import { tempDir } from './helpers.js';

/** A fresh station database, its tool and instrument made at `at`. */
export function stationDb(at: string): Db {
  const db = openDatabase(join(tempDir(), 'station.db'));
  db.exec(`
    INSERT INTO tools (uuid, name, created_at, updated_at) VALUES ('t1', 'SEM', '${at}', '${at}');
    INSERT INTO instruments (uuid, name, tool_id, destination_template, created_at, updated_at)
      VALUES ('i1', 'sem-1', 1, '{filename}', '${at}', '${at}');`);
  return db;
}

/** Records the file /src/`name` of the instrument, first seen at `discoveredAt`. */
export function fileNamed(db: Db, name: string, discoveredAt: string): number {
  return recordFile(db, {
    instrumentId: 1,
    watchPath: '/src',
    relativePath: name,
    sourcePath: `/src/${name}`,
    filename: name,
    size: 1,
    mtimeMs: 0,
    firstDiscoveredAt: discoveredAt,
    usageEventId: null,
  });
}

/** A failed attempt made at `at`, tried again by itself at `retryAt` (null: not by itself). */
export function failedAt(at: string, retryAt: string | null = null): TransferOutcome {
  return {
    status: 'failed',
    storageLocationId: null,
    destinationPath: null,
    bytes: 0,
    destChecksum: null,
    checksumVerified: false,
    startedAt: at,
    completedAt: at,
    error: 'storage not reachable',
    retryAt,
  };
}

/** A completed, verified copy made at `at`. */
export function completedAt(at: string): TransferOutcome {
  return {
    status: 'completed',
    storageLocationId: null,
    destinationPath: 'x',
    bytes: 1,
    destChecksum: 'ab',
    checksumVerified: true,
    startedAt: at,
    completedAt: at,
  };
}
