/**
 * The harvest records a station pushes: file records, transfer records, what it made of its
 * schedules (deployments) and its harvest runs. Files and transfers are the station's own
 * (spec 002 fields, upserted by uuid, so a resend changes nothing); deployments and runs answer
 * what the harvest API asked of the station.
 */
import { z } from 'zod';
import { parseArk } from '../../../../shared/ark.js';
import { FILE_STATES, TRANSFER_STATUSES } from '../../../../shared/harvest/management.js';
import type { Db } from '../../db/open.js';
import { cachedStatement } from '../../db/statements.js';
import { DEFAULT_TEMPLATE } from '../../harvest/config.js';
import { noteHarvested } from '../../harvest/records.js';
import { registeredDescription } from '../harvest/instruments.js';
import { newUuid } from '../../util/ids.js';
import type { PushRecord } from '../../sync/protocol.js';
import {
  RecordRefused,
  checkOwner,
  checkTool,
  idOf,
  jsonObject,
  fileUsage,
  parse,
  time,
  uuid,
  type StationRef,
} from './records.js';

const fileSchema = z.object({
  uuid,
  instrument_uuid: uuid,
  instrument: z.string().min(1),
  tool_uuid: uuid.nullable().optional(),
  persistent_id: z.string().min(1).max(512),
  persistent_id_type: z.string().min(1),
  watch_path: z.string().optional(),
  source_path: z.string(),
  relative_path: z.string(),
  filename: z.string(),
  size: z.number().int().min(0),
  mtime_ms: z.number(),
  xxhash: z.string().nullable(),
  hash_algorithm: z.string().min(1),
  first_discovered_at: time,
  usage_event_uuid: uuid.nullable().optional(),
  metadata_: jsonObject,
  state: z.enum(FILE_STATES),
  updated_at: time,
});

const transferSchema = z.object({
  uuid,
  file_uuid: uuid,
  status: z.enum(TRANSFER_STATUSES),
  storage_location: z.string().nullable().optional(),
  storage_location_uuid: uuid.nullable().optional(),
  destination_path: z.string().nullable(),
  bytes_transferred: z.number().int().min(0),
  dest_checksum: z.string().nullable(),
  checksum_verified: z.boolean(),
  started_at: time,
  completed_at: time.nullable(),
  error: z.string(),
  note: z.string(),
});

const deploymentSchema = z.object({
  uuid,
  version: z.number().int().min(1),
  state: z.enum(['deployed', 'failed', 'removed']),
  deployed_at: time.nullable(),
  next_run_at: time.nullable(),
  last_run_at: time.nullable(),
  error: z.string(),
  /** When the station made the report (harvest/runs.ts NEXT_REPORTED_AT); older stations send none. */
  reported_at: time.optional(),
});

const runSchema = z.object({
  uuid,
  schedule_uuid: uuid.nullable(),
  instrument_uuid: uuid,
  trigger: z.enum(['manual', 'schedule']),
  state: z.enum(['queued', 'running', 'completed', 'failed']),
  requested_at: time,
  started_at: time.nullable(),
  finished_at: time.nullable(),
  files_completed: z.number().int().min(0),
  files_skipped: z.number().int().min(0),
  files_failed: z.number().int().min(0),
  error: z.string(),
  reported_at: time.optional(),
});

interface InstrumentRef {
  id: number;
  tool_id: number;
  station_id: number | null;
}

/**
 * A station writes records of the instruments it runs or was given before (station_instruments:
 * records made then may still wait in its outbox); a key cannot write for any other.
 */
function checkInstrument(
  db: Db,
  station: StationRef,
  instrumentId: number,
  record: PushRecord,
): void {
  const given = cachedStatement(
    db,
    'SELECT 1 FROM station_instruments WHERE station_id = ? AND instrument_id = ?',
  ).get(station.id, instrumentId);
  if (!given) {
    throw new RecordRefused(
      'forbidden',
      `${record.kind} ${record.uuid}: this station does not run that instrument`,
    );
  }
}

/**
 * Who may write a file record (or a transfer of it): the station that made it, and the station
 * that runs its instrument now, which took the records with the instrument's history (GET
 * /sync/harvest/history) and records what becomes of those files (a retry, a file gone). A
 * station that ran the instrument in between and still has such a record waiting in its
 * outbox is not refused (that would stop its whole outbox): its record is kept out, as stale.
 * A key never writes records of an instrument it was never given.
 */
function fileWriter(
  db: Db,
  existing: { station_id: number | null; instrument_id: number } | undefined,
  station: StationRef,
  record: PushRecord,
): 'ok' | 'stale' {
  if (!existing || existing.station_id === station.id) return 'ok';
  // Plucked, as notify.ts uses the same statement (a cached statement keeps its mode).
  const runBy = cachedStatement(db, 'SELECT station_id FROM instruments WHERE id = ?')
    .pluck()
    .get(existing.instrument_id) as number | null | undefined;
  if (runBy === station.id) return 'ok';
  const given = cachedStatement(
    db,
    'SELECT 1 FROM station_instruments WHERE station_id = ? AND instrument_id = ?',
  ).get(station.id, existing.instrument_id);
  if (given && existing.station_id !== null) return 'stale';
  checkOwner(existing, station.id, record);
  return 'ok';
}

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
    checkInstrument(db, station, existing.id, record);
    return existing.id;
  }
  const toolId = p.tool_uuid ? idOf(db, 'tools', p.tool_uuid, 'tool_uuid') : station.tool_id;
  if (toolId === null) {
    throw new RecordRefused(
      'unknown_reference',
      `harvest_file ${record.uuid}: no tool for ${p.instrument}`,
    );
  }
  checkTool(db, station, toolId, record);
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
  persistent_id: string;
  instrument_id: number;
  usage_event_id: number | null;
  updated_at: string;
};

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
  const metadata = JSON.stringify(p.metadata_);
  if (cachedStatement(db, 'SELECT json_valid(?)').pluck().get(metadata) !== 1) {
    throw new RecordRefused(
      'invalid',
      `harvest_file ${record.uuid}: metadata_: is nested more than 1,000 levels deep, ` +
        'deeper than the server can search',
    );
  }
  const existing = cachedStatement(
    db,
    `SELECT station_id, persistent_id, instrument_id, usage_event_id, size, mtime_ms, xxhash,
       hash_algorithm, metadata_, state, updated_at FROM harvest_files WHERE uuid = ?`,
  ).get(p.uuid.toLowerCase()) as StoredFile | undefined;
  if (fileWriter(db, existing, station, record) === 'stale') return 'stale';
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
       xxhash, hash_algorithm, first_discovered_at, usage_event_id, metadata_, state, updated_at)
     VALUES (@uuid, @instrument_id, @station_id, @persistent_id, @persistent_id_type,
       @watch_path, @relative_path, @source_path, @filename, @size, @mtime_ms, @xxhash,
       @hash_algorithm, @first_discovered_at, @usage_event_id, @metadata_, @state, @updated_at)
     ON CONFLICT (uuid) DO UPDATE SET size = excluded.size, mtime_ms = excluded.mtime_ms,
       xxhash = excluded.xxhash, hash_algorithm = excluded.hash_algorithm,
       usage_event_id = coalesce(excluded.usage_event_id, harvest_files.usage_event_id),
       metadata_ = excluded.metadata_,
       state = excluded.state, updated_at = excluded.updated_at
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

/** Whether `path` lies inside folder `base`, in the station's own spelling of paths (/ or \\). */
function liesIn(path: string, base: string): boolean {
  const folder = base.replace(/[\\/]+$/, '');
  return (
    folder !== '' &&
    path.startsWith(folder) &&
    (path[folder.length] === '/' || path[folder.length] === '\\')
  );
}

/**
 * The server's storage location of a pushed transfer: the one of its uuid, whatever it is
 * called now (renamed since). A uuid the server does not know (the station's own location, one
 * deleted here, or no uuid from a station too old to send it) is matched by its name only with
 * a sign that the file is there: a local location's folder holds the transfer's destination,
 * so the station's own "archive" at the place of the server's "archive" is that one, while a
 * location deleted and made again elsewhere under the old name, or another that took the name,
 * is not where the file went. A server location by its name is checked as by its uuid (a
 * completed transfer needs this station's finished upload of the file into it: checkUploaded).
 * Else the transfer is stored without a location: its destination_path still says where it is.
 */
function storageLocationOf(db: Db, p: z.infer<typeof transferSchema>): number | null {
  const byUuid = p.storage_location_uuid
    ? (cachedStatement(db, 'SELECT id FROM storage_locations WHERE uuid = ?')
        .pluck()
        .get(p.storage_location_uuid.toLowerCase()) as number | undefined)
    : undefined;
  if (byUuid !== undefined) return byUuid;
  if (!p.storage_location) return null;
  const byName = cachedStatement(
    db,
    'SELECT id, type, base_path FROM storage_locations WHERE name = ?',
  ).get(p.storage_location) as { id: number; type: string; base_path: string } | undefined;
  if (!byName) return null;
  if (byName.type === 'server') return byName.id;
  return p.destination_path !== null && liesIn(p.destination_path, byName.base_path)
    ? byName.id
    : null;
}

/**
 * A transfer into a `server` storage location is completed only if this server received the
 * file itself: a finished upload of this station for that file, with the same checksum.
 */
function checkUploaded(
  db: Db,
  station: StationRef,
  p: z.infer<typeof transferSchema>,
  locationId: number,
): void {
  const type = cachedStatement(db, 'SELECT type FROM storage_locations WHERE id = ?')
    .pluck()
    .get(locationId) as string;
  if (type !== 'server') return;
  const received = cachedStatement(
    db,
    `SELECT 1 FROM harvest_uploads WHERE station_id = ? AND file_uuid = ?
       AND storage_location_id = ? AND state IN ('completed', 'skipped') AND dest_checksum = ?`,
  ).get(station.id, p.file_uuid, locationId, p.dest_checksum);
  if (!received) {
    throw new RecordRefused(
      'invalid',
      `harvest_transfer ${p.uuid}: completed into a server storage location, but this server ` +
        'holds no finished upload of that file with that checksum',
    );
  }
}

interface StoredFileOfTransfer {
  id: number;
  station_id: number | null;
  instrument_id: number;
  xxhash: string | null;
  updated_at: string;
}

/**
 * A transfer that says its checksum was verified holds the bytes its file record names: its
 * dest_checksum is the file's xxhash. The station records both in one transaction, the file's
 * version with the hash it transferred stamped after the transfer ended (harvest/records.ts
 * storeOutcome), and pushes the file first. A server holding a version of the file from before
 * the transfer ended (no hash yet, or the hash of content that changed before this copy) lacks
 * that version: the transfer waits for it (unknown_reference, so the station sends the file's
 * newest version first, then this again). Against a version from at or after its end, another
 * checksum is a contradiction, refused by name; the server keeps what it holds.
 */
function checkVerifiedChecksum(
  file: StoredFileOfTransfer,
  p: z.infer<typeof transferSchema>,
  record: PushRecord,
): void {
  if (!p.checksum_verified || p.dest_checksum === null) return;
  if (file.xxhash !== null && file.xxhash.toLowerCase() === p.dest_checksum.toLowerCase()) return;
  const ended = p.completed_at ?? p.started_at;
  const version = `its version of ${file.updated_at}`;
  if (file.updated_at < ended) {
    throw new RecordRefused(
      'unknown_reference',
      `harvest_transfer ${record.uuid}: file_uuid: the server holds file ${p.file_uuid} in ` +
        `${version} (${file.xxhash === null ? 'no xxhash yet' : `xxhash ${file.xxhash}`}), from ` +
        `before this transfer ended (${ended}); it waits for the file's version with ` +
        `xxhash ${p.dest_checksum}`,
      { table: 'harvest_files', uuid: p.file_uuid.toLowerCase() },
    );
  }
  throw new RecordRefused(
    'conflict',
    `harvest_transfer ${record.uuid}: checksum_verified, but ` +
      (file.xxhash === null
        ? `its file ${p.file_uuid} has no xxhash (${version}) to match dest_checksum ` +
          `${p.dest_checksum}`
        : `its dest_checksum ${p.dest_checksum} is not the xxhash ${file.xxhash} of its file ` +
          `${p.file_uuid} (${version})`) +
      '; a verified transfer holds the bytes its file record names',
  );
}

const TRANSFER_FIELDS = [
  'file_id',
  'status',
  'destination_path',
  'bytes_transferred',
  'dest_checksum',
  'checksum_verified',
  'started_at',
  'completed_at',
  'error',
  'note',
] as const;
type TransferField = (typeof TRANSFER_FIELDS)[number];

/** Transfers never change once made: the first push stores it, a resend is a no-op. */
export function insertHarvestTransfer(
  db: Db,
  station: StationRef,
  record: PushRecord,
): 'ok' | 'stale' {
  const p = parse(transferSchema, record);
  const file = cachedStatement(
    db,
    'SELECT id, station_id, instrument_id, xxhash, updated_at FROM harvest_files WHERE uuid = ?',
  ).get(p.file_uuid.toLowerCase()) as StoredFileOfTransfer | undefined;
  if (!file) {
    throw new RecordRefused(
      'unknown_reference',
      `file_uuid: no record ${p.file_uuid} on the server`,
      { table: 'harvest_files', uuid: p.file_uuid.toLowerCase() },
    );
  }
  if (fileWriter(db, file, station, record) === 'stale') return 'stale';
  const existing = cachedStatement(
    db,
    `SELECT file_id, status, destination_path, bytes_transferred, dest_checksum,
       checksum_verified, started_at, completed_at, error, note
     FROM harvest_transfers WHERE uuid = ?`,
  ).get(p.uuid.toLowerCase()) as Record<TransferField, unknown> | undefined;
  if (existing) {
    // A resend carries what was stored; a transfer never changes, so other content under its
    // uuid is refused by name rather than acknowledged as if the server held it.
    const pushed: Record<TransferField, unknown> = {
      file_id: file.id,
      status: p.status,
      destination_path: p.destination_path,
      bytes_transferred: p.bytes_transferred,
      dest_checksum: p.dest_checksum,
      checksum_verified: p.checksum_verified ? 1 : 0,
      started_at: p.started_at,
      completed_at: p.completed_at,
      error: p.error,
      note: p.note,
    };
    const differ = TRANSFER_FIELDS.filter((f) => pushed[f] !== existing[f]);
    if (differ.length) {
      throw new RecordRefused(
        'conflict',
        `harvest_transfer ${record.uuid}: the server holds it with other ` +
          `${differ.map((f) => (f === 'file_id' ? 'file_uuid' : f)).join(', ')}; a transfer ` +
          'never changes once made: was this station restored from a backup?',
      );
    }
    return 'ok';
  }
  // Completed already by another station: the station that ran the instrument before, while it
  // was out of touch, and the one that runs it now, from its history. The first one stays.
  if (
    p.status === 'completed' &&
    cachedStatement(
      db,
      "SELECT 1 FROM harvest_transfers WHERE file_id = ? AND status = 'completed'",
    ).get(file.id) !== undefined
  ) {
    return 'stale';
  }
  if (p.status === 'completed' && (!p.checksum_verified || p.dest_checksum === null)) {
    // The table's CHECK would refuse it too, in words about the server's tables.
    const lacks = [
      ...(p.checksum_verified ? [] : ['checksum_verified is false']),
      ...(p.dest_checksum === null ? ['dest_checksum is missing'] : []),
    ];
    throw new RecordRefused(
      'conflict',
      `harvest_transfer ${record.uuid}: completed, but ${lacks.join(' and ')}; a transfer is ` +
        'completed only with a verified checksum',
    );
  }
  checkVerifiedChecksum(file, p, record);
  const locationId = storageLocationOf(db, p);
  if (p.status === 'completed' && locationId !== null) checkUploaded(db, station, p, locationId);
  cachedStatement(
    db,
    `INSERT INTO harvest_transfers (uuid, file_id, status, storage_location_id, destination_path,
       bytes_transferred, dest_checksum, checksum_verified, started_at, completed_at, error, note)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    p.uuid.toLowerCase(),
    file.id,
    p.status,
    locationId,
    p.destination_path,
    p.bytes_transferred,
    p.dest_checksum,
    p.checksum_verified ? 1 : 0,
    p.started_at,
    p.completed_at,
    p.error,
    p.note,
  );
  if (p.status === 'completed' && p.completed_at) {
    noteHarvested(db, file.instrument_id, p.completed_at);
  }
  return 'ok';
}

/**
 * Where a station's report stands against the last one applied, by the moment the station
 * made each (NEXT_REPORTED_AT on the station): an older one arrives late (set aside and
 * offered again, or sent again after a cut) and is kept out, the same one is a resend. Reports
 * without a stamp (a station too old to make one) are taken as before.
 */
function reportOrder(
  pushed: string | undefined,
  applied: string | null,
): 'newer' | 'same' | 'older' {
  if (pushed === undefined || applied === null || pushed > applied) return 'newer';
  return pushed === applied ? 'same' : 'older';
}

/**
 * What the station made of a schedule. A report about an older version than the schedule's
 * (it changed since) leaves the deployment pending; one about a schedule that moved to another
 * station, or was deleted, is acknowledged and dropped; one made before the last report of the
 * same version the server applied is stale.
 */
export function applyDeployment(db: Db, station: StationRef, record: PushRecord): 'ok' | 'stale' {
  const p = parse(deploymentSchema, record);
  const stored = cachedStatement(
    db,
    `SELECT deployed_version, deployment_reported_at FROM harvest_schedules
     WHERE uuid = ? AND station_id = ? AND version = ?`,
  ).get(p.uuid.toLowerCase(), station.id, p.version) as
    { deployed_version: number | null; deployment_reported_at: string | null } | undefined;
  if (!stored) return 'ok';
  // The stamp kept is of a report of this version only: a change of the schedule forgets it.
  const order = reportOrder(
    p.reported_at,
    stored.deployed_version === p.version ? stored.deployment_reported_at : null,
  );
  if (order === 'older') return 'stale';
  if (order === 'same') return 'ok';
  cachedStatement(
    db,
    `UPDATE harvest_schedules SET deployment_state = @state, deployed_version = @version,
       deployed_at = @deployed_at, next_run_at = @next_run_at,
       last_run_at = coalesce(@last_run_at, last_run_at), deployment_error = @error,
       deployment_reported_at = coalesce(@reported_at, deployment_reported_at)
     WHERE uuid = @uuid AND station_id = @station AND version = @version`,
  ).run({
    uuid: p.uuid.toLowerCase(),
    station: station.id,
    version: p.version,
    state: p.state,
    deployed_at: p.deployed_at,
    next_run_at: p.next_run_at,
    last_run_at: p.last_run_at,
    error: p.error,
    reported_at: p.reported_at ?? null,
  });
  return 'ok';
}

const RUN_ORDER = { queued: 0, running: 1, completed: 2, failed: 2 } as const;

/**
 * A run's progress; a report never takes a run back (completed stays completed), and one the
 * station made before the last one applied (reportOrder) is stale.
 */
export function upsertRun(db: Db, station: StationRef, record: PushRecord): 'ok' | 'stale' {
  const p = parse(runSchema, record);
  const existing = cachedStatement(
    db,
    'SELECT id, station_id, state, reported_at FROM harvest_runs WHERE uuid = ?',
  ).get(p.uuid.toLowerCase()) as
    | {
        id: number;
        station_id: number | null;
        state: keyof typeof RUN_ORDER;
        reported_at: string | null;
      }
    | undefined;
  checkOwner(existing, station.id, record);
  const scheduleId = p.schedule_uuid
    ? // Only a schedule deployed on this station: a key cannot touch another's history.
      ((cachedStatement(db, 'SELECT id FROM harvest_schedules WHERE uuid = ? AND station_id = ?')
        .pluck()
        .get(p.schedule_uuid.toLowerCase(), station.id) as number | undefined) ?? null)
    : null;
  if (existing) {
    const order = reportOrder(p.reported_at, existing.reported_at);
    if (order === 'older') return 'stale';
    if (order === 'same' || RUN_ORDER[p.state] < RUN_ORDER[existing.state]) return 'ok';
    cachedStatement(
      db,
      `UPDATE harvest_runs SET state = ?, started_at = ?, finished_at = ?, files_completed = ?,
         files_skipped = ?, files_failed = ?, error = ?, reported_at = coalesce(?, reported_at)
       WHERE id = ?`,
    ).run(
      p.state,
      p.started_at,
      p.finished_at,
      p.files_completed,
      p.files_skipped,
      p.files_failed,
      p.error,
      p.reported_at ?? null,
      existing.id,
    );
  } else {
    // A run of an instrument the server does not know (one configured on the station alone,
    // before any of its files arrived) means nothing here.
    const instrument = cachedStatement(
      db,
      'SELECT id, tool_id, station_id FROM instruments WHERE uuid = ?',
    ).get(p.instrument_uuid.toLowerCase()) as InstrumentRef | undefined;
    if (!instrument) return 'ok';
    const instrumentId = instrument.id;
    checkInstrument(db, station, instrumentId, record);
    cachedStatement(
      db,
      `INSERT INTO harvest_runs (uuid, schedule_id, instrument_id, station_id, "trigger", state,
         requested_at, started_at, finished_at, files_completed, files_skipped, files_failed,
         error, reported_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      p.uuid.toLowerCase(),
      scheduleId,
      instrumentId,
      station.id,
      p.trigger,
      p.state,
      p.requested_at,
      p.started_at,
      p.finished_at,
      p.files_completed,
      p.files_skipped,
      p.files_failed,
      p.error,
      p.reported_at ?? null,
    );
  }
  if (scheduleId !== null && p.started_at) {
    cachedStatement(
      db,
      `UPDATE harvest_schedules SET last_run_at = ?
       WHERE id = ? AND (last_run_at IS NULL OR last_run_at < ?)`,
    ).run(p.started_at, scheduleId, p.started_at);
  }
  return 'ok';
}
