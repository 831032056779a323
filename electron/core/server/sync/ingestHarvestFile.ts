/**
 * A pushed file record: upserted by uuid, later versions winning, and its instrument found or,
 * for one the station configured itself, registered here from its records.
 */
import type { z } from 'zod';
import { parseArk } from '../../../../shared/ark.js';
import { nestedDeeperThan } from '../../../../shared/metadata/json.js';
import type { Db } from '../../db/open.js';
import { cachedStatement } from '../../db/statements.js';
import { DEFAULT_TEMPLATE } from '../../harvest/config.js';
import { registeredDescription } from '../harvest/instruments.js';
import { newUuid } from '../../util/ids.js';
import type { PushRecord } from '../../sync/protocol.js';
import { fileSchema } from './harvestSchemas.js';
import { checkInstrument, fileWriter, type InstrumentRef } from './harvestWriters.js';
import { RecordRefused, checkTool, idOf, fileUsage, parse, type StationRef } from './records.js';

/** A name no other instrument has: the station's own, else qualified with the station's. */
function freeInstrumentName(db: Db, wanted: string, stationName: string): string {
  const taken = (name: string): boolean =>
    cachedStatement(db, 'SELECT 1 FROM instruments WHERE name = ?').get(name) !== undefined;
  if (!taken(wanted)) return wanted;
  const qualified = `${wanted} (${stationName})`;
  if (!taken(qualified)) return qualified;
  return `${qualified} ${newUuid().slice(-6)}`;
}

/**
 * The server's instrument for a pushed file. One the server configured must be run by this
 * station, or be on a tool it ran (a record made before the instrument moved). One the station
 * configured itself (its local bundle) is registered here from its records, with no service
 * account: the server sends it no configuration until an admin assigns it one.
 */
function instrumentFor(
  db: Db,
  station: StationRef & { name: string },
  p: z.infer<typeof fileSchema>,
  record: PushRecord,
): number {
  const existing = cachedStatement(
    db,
    'SELECT id, tool_id, station_id FROM instruments WHERE uuid = ?',
  ).get(p.instrument_uuid.toLowerCase()) as InstrumentRef | undefined;
  if (existing) {
    checkInstrument(db, station, existing.id, record, p.first_discovered_at);
    return existing.id;
  }
  const toolId = p.tool_uuid ? idOf(db, 'tools', p.tool_uuid, 'tool_uuid') : station.tool_id;
  if (toolId === null) {
    throw new RecordRefused(
      'unknown_reference',
      `harvest_file ${record.uuid}: no tool for ${p.instrument}`,
    );
  }
  checkTool(db, station, toolId, record, p.first_discovered_at);
  const now = new Date().toISOString();
  const id = Number(
    cachedStatement(
      db,
      `INSERT INTO instruments (uuid, name, description, tool_id, station_id, watch,
         destination_template, enabled, created_at, updated_at)
       VALUES (?, ?, ?, ?, NULL, '[]', ?, 1, ?, ?)`,
    ).run(
      p.instrument_uuid.toLowerCase(),
      freeInstrumentName(db, p.instrument, station.name),
      registeredDescription(station.name),
      toolId,
      DEFAULT_TEMPLATE,
      now,
      now,
    ).lastInsertRowid,
  );
  cachedStatement(
    db,
    'INSERT OR IGNORE INTO station_instruments (station_id, instrument_id) VALUES (?, ?)',
  ).run(station.id, id);
  return id;
}

/** What a version of a file record holds that a later version may change. */
const FILE_VERSION_FIELDS = [
  'size',
  'mtime_ms',
  'xxhash',
  'hash_algorithm',
  'metadata_',
  'state',
] as const;
type FileVersionField = (typeof FILE_VERSION_FIELDS)[number];

type StoredFile = Record<FileVersionField, unknown> & {
  station_id: number | null;
  written_by: number | null;
  persistent_id: string;
  instrument_id: number;
  usage_event_id: number | null;
  updated_at: string;
};

/** How deep SQLite's JSON functions read (JSON_MAX_DEPTH). */
const SQLITE_JSON_MAX_DEPTH = 1000;

export function upsertHarvestFile(
  db: Db,
  station: StationRef & { name: string },
  record: PushRecord,
): 'ok' | 'stale' {
  const p = parse(fileSchema, record);
  const ark = parseArk(p.persistent_id);
  if (!ark.ok) {
    throw new RecordRefused(
      'invalid',
      `harvest_file ${record.uuid}: persistent_id: ${ark.message}`,
    );
  }
  p.persistent_id = ark.ark;
  // What SQLite cannot read as JSON (nested more than 1,000 levels: no station's hooks give
  // that) is not stored: every metadata search that came to the record would fail with it.
  // Counted before it is written out: far deeper, JSON.stringify would overflow the stack.
  const tooDeep = nestedDeeperThan(p.metadata_, SQLITE_JSON_MAX_DEPTH);
  const metadata = tooDeep ? '' : JSON.stringify(p.metadata_);
  if (tooDeep || cachedStatement(db, 'SELECT json_valid(?)').pluck().get(metadata) !== 1) {
    throw new RecordRefused(
      'invalid',
      `harvest_file ${record.uuid}: metadata_: is nested more than 1,000 levels deep, ` +
        'deeper than the server can search',
    );
  }
  const existing = cachedStatement(
    db,
    `SELECT station_id, written_by, persistent_id, instrument_id, usage_event_id, size,
       mtime_ms, xxhash, hash_algorithm, metadata_, state, updated_at
     FROM harvest_files WHERE uuid = ?`,
  ).get(p.uuid.toLowerCase()) as StoredFile | undefined;
  if (fileWriter(db, existing, station, record, { takenOver: true }) === 'stale') return 'stale';
  if (existing && existing.persistent_id !== p.persistent_id) {
    throw new RecordRefused(
      'invalid',
      `harvest_file ${record.uuid}: persistent_id cannot change (${existing.persistent_id})`,
    );
  }
  if (existing) {
    // Every change a station makes to a file gives it a later updated_at (harvest/records.ts
    // NEXT_UPDATED_AT). An older version is kept out and the station told so (stale), as for
    // usage events; the same version saying otherwise comes from a data dir restored from a
    // backup that changed the file again: refused by name, the server keeps its version.
    if (p.updated_at < existing.updated_at) return 'stale';
    if (p.updated_at === existing.updated_at) {
      const pushed: Record<FileVersionField, unknown> = {
        size: p.size,
        mtime_ms: p.mtime_ms,
        xxhash: p.xxhash,
        hash_algorithm: p.hash_algorithm,
        metadata_: metadata,
        state: p.state,
      };
      const differ = FILE_VERSION_FIELDS.filter((f) => pushed[f] !== existing[f]);
      if (differ.length) {
        throw new RecordRefused(
          'conflict',
          `harvest_file ${record.uuid}: the server holds its version of ${existing.updated_at} ` +
            `with other ${differ.join(', ')}; was this station restored from a backup? The ` +
            'server keeps its version; staff settle the difference',
        );
      }
    }
  }
  const instrumentId = existing?.instrument_id ?? instrumentFor(db, station, p, record);
  // Later versions of the record win; a resend of an older one changes nothing. The usage a
  // file was made in never goes: a station that took the record from another may not hold it.
  cachedStatement(
    db,
    `INSERT INTO harvest_files (uuid, instrument_id, station_id, persistent_id,
       persistent_id_type, watch_path, relative_path, source_path, filename, size, mtime_ms,
       xxhash, hash_algorithm, first_discovered_at, usage_event_id, metadata_, state, updated_at,
       written_by)
     VALUES (@uuid, @instrument_id, @station_id, @persistent_id, @persistent_id_type,
       @watch_path, @relative_path, @source_path, @filename, @size, @mtime_ms, @xxhash,
       @hash_algorithm, @first_discovered_at, @usage_event_id, @metadata_, @state, @updated_at,
       @station_id)
     ON CONFLICT (uuid) DO UPDATE SET
       -- A later version may find the file elsewhere: its watched folder given a new path on
       -- its station (harvest/folderMoves.ts).
       watch_path = iif(excluded.updated_at > harvest_files.updated_at, excluded.watch_path,
         harvest_files.watch_path),
       source_path = iif(excluded.updated_at > harvest_files.updated_at, excluded.source_path,
         harvest_files.source_path),
       size = excluded.size, mtime_ms = excluded.mtime_ms,
       xxhash = excluded.xxhash, hash_algorithm = excluded.hash_algorithm,
       usage_event_id = coalesce(excluded.usage_event_id, harvest_files.usage_event_id),
       metadata_ = excluded.metadata_,
       state = excluded.state, updated_at = excluded.updated_at,
       -- A resend of the version held (the new station sending back what it took) wrote nothing.
       written_by = iif(excluded.updated_at > harvest_files.updated_at, excluded.written_by,
         harvest_files.written_by)
     WHERE excluded.updated_at >= harvest_files.updated_at`,
  ).run({
    uuid: p.uuid.toLowerCase(),
    instrument_id: instrumentId,
    station_id: station.id,
    persistent_id: p.persistent_id,
    persistent_id_type: p.persistent_id_type,
    watch_path: p.watch_path ?? '',
    relative_path: p.relative_path,
    source_path: p.source_path,
    filename: p.filename,
    size: p.size,
    mtime_ms: p.mtime_ms,
    xxhash: p.xxhash,
    hash_algorithm: p.hash_algorithm,
    first_discovered_at: p.first_discovered_at,
    usage_event_id: fileUsage(db, station, p.usage_event_uuid, existing?.usage_event_id, record),
    metadata_: metadata,
    state: p.state,
    updated_at: p.updated_at,
  });
  return 'ok';
}
