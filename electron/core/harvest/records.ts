/**
 * File and transfer records of the station's harvest, as the harvest writes them (what the UI,
 * the CLI and the API read of them: views.ts, status.ts; the markers of a transfer under way:
 * attemptMarkers.ts): every write that the server must see enqueues its outbox row in the same
 * transaction.
 */
import { bladeLength, makeArk, randomBlade, type ArkConfig } from '../../../shared/ark.js';
import type { Transaction } from 'better-sqlite3';
import type { FileState, TransferStatus } from '../../../shared/harvest/management.js';
import type { Db } from '../db/open.js';
import { cachedStatement } from '../db/statements.js';
import { getSetting } from '../station/settings.js';
import { newUuid, nowIso } from '../util/ids.js';
import { randomBelow } from '../util/random.js';
import { HASH_ALGORITHM } from './copy.js';
import { CASE_BLIND_NAMES, sourceKey } from './storageGuard.js';
import { DEFAULT_ARK } from './config.js';
import { withCurrentUsageContext } from './usageContext.js';

export interface FileRow {
  id: number;
  uuid: string;
  instrument_id: number;
  persistent_id: string;
  watch_path: string;
  relative_path: string;
  source_path: string;
  filename: string;
  size: number;
  mtime_ms: number;
  xxhash: string | null;
  hash_algorithm: string;
  first_discovered_at: string;
  usage_event_id: number | null;
  /** A usage_context (JSON) from the server: see migration 13. Only when usage_event_id is null. */
  usage_elsewhere: string | null;
  metadata_: string;
  state: FileState;
  attempts: number;
  /** `attempts` when someone last asked for a retry: the backoff counts the attempts since. */
  retried_at_attempts: number;
  next_attempt_at: string | null;
  partial_path: string | null;
  verified_hash: string | null;
  pending_destination: string | null;
  /** Where that copy goes, as its transfer record will say (attemptMarkers.ts PendingPlace). */
  pending_location_id: number | null;
  pending_note: string | null;
  /** The destination folders the attempt made (JSON, madeFolders); null when it made none. */
  made_folders: string | null;
}

/** Whether a file's record names the bytes found at its source (by size and mtime). */
export function sameBytes(
  record: Pick<FileRow, 'size' | 'mtime_ms'>,
  found: { size: number; mtimeMs: number },
): boolean {
  return record.size === found.size && record.mtime_ms === found.mtimeMs;
}

export function arkConfig(db: Db): ArkConfig {
  return getSetting(db, 'harvest.ark') ?? DEFAULT_ARK;
}

/**
 * A new ARK under this station's NAAN and shoulder. Blades are random (stations share a
 * shoulder and mint offline, so a counter would collide between them); the unique index on
 * persistent_id is the last word, and a collision on this station is drawn again.
 */
export function mintArk(db: Db, config: ArkConfig = arkConfig(db)): string {
  const length = bladeLength(config);
  const taken = cachedStatement(db, 'SELECT 1 FROM harvest_files WHERE persistent_id = ?').pluck();
  for (;;) {
    const ark = makeArk(config, randomBlade(length, randomBelow));
    if (taken.get(ark) === undefined) return ark;
  }
}

export function fileById(db: Db, id: number): FileRow | undefined {
  return cachedStatement(db, 'SELECT * FROM harvest_files WHERE id = ?').get(id) as
    FileRow | undefined;
}

export interface KnownSource {
  id: number;
  size: number;
  mtime_ms: number;
  state: FileState;
}

/**
 * An instrument's latest record of each source path: the path's own, or else, where names
 * have no case, that of the path in other case (sourceKey). The path's own first: on a volume
 * that does keep case apart (a Mac's case-sensitive APFS, a share from Linux), `A.tif` and
 * `a.tif` are two files, each with its records, not one file's versions taking turns.
 */
export class KnownSources {
  private readonly byPath = new Map<string, KnownSource>();
  /** By sourceKey, where names have no case; null elsewhere (the same as byPath). */
  private readonly byKey: Map<string, KnownSource> | null;

  constructor(caseBlind = CASE_BLIND_NAMES) {
    this.byKey = caseBlind ? new Map() : null;
  }

  get(path: string): KnownSource | undefined {
    return this.byPath.get(path) ?? this.byKey?.get(sourceKey(path, true));
  }

  set(path: string, record: KnownSource): void {
    this.byPath.set(path, record);
    this.byKey?.set(sourceKey(path, true), record);
  }
}

/**
 * knownSources's query (its plan is checked by a test): the records of the paths given as a
 * JSON array, and of those paths in other case, oldest first, through the index of the paths
 * without case.
 */
export const KNOWN_SOURCES = `SELECT source_path, id, size, mtime_ms, state FROM harvest_files
  WHERE instrument_id = ? AND source_path COLLATE NOCASE IN (SELECT value FROM json_each(?))
  ORDER BY id`;

/**
 * The latest record of each of `paths` (one folder's files, as a walk finds them): what a walk
 * compares them with. Asked folder by folder, not for the whole instrument at a walk's start:
 * an instrument's records are many (200,000 took 0.5 s of the thread that serves the UI, and
 * 40 MB while the walk lasted), and what the watcher's files recorded meanwhile is in them.
 */
export function knownSources(
  db: Db,
  instrumentId: number,
  paths: readonly string[],
  caseBlind = CASE_BLIND_NAMES,
): KnownSources {
  const known = new KnownSources(caseBlind);
  if (!paths.length) return known;
  const rows = cachedStatement(db, KNOWN_SOURCES).all(
    instrumentId,
    JSON.stringify(paths),
  ) as (KnownSource & { source_path: string })[];
  for (const { source_path, id, size, mtime_ms, state } of rows) {
    known.set(source_path, { id, size, mtime_ms, state });
  }
  return known;
}

/**
 * SQL: the source path of the record `alias` is a path given three times in its parameters:
 * the path, 1 to compare it as sourceKey does (0: as written), the path again. Through the
 * index of the paths without case (harvest_files_source, migration 46), then as written where
 * case counts.
 */
export function sourcePathIs(alias: string): string {
  return `${alias}.source_path = ? COLLATE NOCASE AND (? OR ${alias}.source_path = ?)`;
}

/**
 * latestBySource's query (its plan is checked by a test): the path's own latest record first,
 * as KnownSources takes it (the path a fourth time).
 */
export const LATEST_BY_SOURCE = `SELECT * FROM harvest_files f
  WHERE f.instrument_id = ? AND ${sourcePathIs('f')}
  ORDER BY f.source_path = ? DESC, f.id DESC LIMIT 1`;

/** The latest record of a source path of an instrument, as KnownSources finds it. */
export function latestBySource(
  db: Db,
  instrumentId: number,
  sourcePath: string,
  caseBlind = CASE_BLIND_NAMES,
): FileRow | undefined {
  return cachedStatement(db, LATEST_BY_SOURCE).get(
    instrumentId,
    sourcePath,
    caseBlind ? 1 : 0,
    sourcePath,
    sourcePath,
  ) as FileRow | undefined;
}

/**
 * The outbox payload of a file record: spec 002's fields plus what relates it. SQLite builds
 * the JSON in the same statement that queues it (its REALs print back to the same doubles, as
 * JSON.stringify's do): a harvest of small files queues three records per file, and reading
 * each row into JavaScript to stringify it again was a fifth of the bookkeeping per file.
 */
export function enqueueFile(db: Db, fileId: number): void {
  const queued = cachedStatement(
    db,
    `INSERT INTO outbox (kind, record_uuid, payload, created_at)
       SELECT 'harvest_file', f.uuid, json_object(
           'uuid', f.uuid, 'instrument_uuid', i.uuid, 'instrument', i.name,
           'tool_uuid', t.uuid, 'persistent_id', f.persistent_id,
           'persistent_id_type', f.persistent_id_type, 'watch_path', f.watch_path,
           'source_path', f.source_path, 'relative_path', f.relative_path,
           'filename', f.filename, 'size', f.size, 'mtime_ms', f.mtime_ms, 'xxhash', f.xxhash,
           'hash_algorithm', f.hash_algorithm, 'first_discovered_at', f.first_discovered_at,
           'usage_event_uuid', coalesce(e.uuid, f.usage_elsewhere ->> '$.usage_event'),
           'metadata_', json(f.metadata_), 'state', f.state,
           'updated_at', f.updated_at), ?
       FROM harvest_files f JOIN instruments i ON i.id = f.instrument_id
       JOIN tools t ON t.id = i.tool_id
       LEFT JOIN usage_events e ON e.id = f.usage_event_id
       WHERE f.id = ?`,
  ).run(nowIso(), fileId);
  queuedOne(queued.changes, 'file', fileId);
}

/** A record that is not there cannot be queued; the caller's transaction is rolled back. */
function queuedOne(changes: number, what: string, id: number): void {
  if (changes !== 1) throw new Error(`no harvest ${what} ${id} to queue for the server`);
}

/** The outbox payload of a transfer record, built as enqueueFile's. */
function enqueueTransfer(db: Db, transferId: number): void {
  const queued = cachedStatement(
    db,
    `INSERT INTO outbox (kind, record_uuid, payload, created_at)
       SELECT 'harvest_transfer', t.uuid, json_object(
           'uuid', t.uuid, 'file_uuid', f.uuid, 'status', t.status,
           'storage_location', l.name, 'storage_location_uuid', l.uuid,
           'destination_path', t.destination_path, 'bytes_transferred', t.bytes_transferred,
           'dest_checksum', t.dest_checksum,
           'checksum_verified', json(CASE WHEN t.checksum_verified = 1 THEN 'true' ELSE 'false' END),
           'started_at', t.started_at, 'completed_at', t.completed_at, 'error', t.error,
           'note', t.note), ?
       FROM harvest_transfers t JOIN harvest_files f ON f.id = t.file_id
       LEFT JOIN storage_locations l ON l.id = t.storage_location_id
       WHERE t.id = ?`,
  ).run(nowIso(), transferId);
  queuedOne(queued.changes, 'transfer', transferId);
}

export interface NewFile {
  instrumentId: number;
  watchPath: string;
  relativePath: string;
  sourcePath: string;
  filename: string;
  size: number;
  mtimeMs: number;
  firstDiscoveredAt: string;
  usageEventId: number | null;
}

/**
 * Records a file found stable: mints its ARK; it waits for its transfer. `ark`: the station's
 * ARK settings, read once by a caller that records many files in one transaction.
 */
export function recordFile(db: Db, file: NewFile, ark: ArkConfig = arkConfig(db)): number {
  const id = cachedStatement(
    db,
    `INSERT INTO harvest_files (uuid, instrument_id, persistent_id, watch_path, relative_path,
         source_path, filename, size, mtime_ms, hash_algorithm, first_discovered_at,
         usage_event_id, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
  )
    .pluck()
    .get(
      newUuid(),
      file.instrumentId,
      mintArk(db, ark),
      file.watchPath,
      file.relativePath,
      file.sourcePath,
      file.filename,
      file.size,
      file.mtimeMs,
      HASH_ALGORITHM,
      file.firstDiscoveredAt,
      file.usageEventId,
      nowIso(),
    ) as number;
  enqueueFile(db, id);
  return id;
}

/**
 * A file row's new `updated_at`: now, but always after the one it had. The server keeps the
 * version of a file with the latest `updated_at` (server/sync/ingestHarvestFile.ts); a station
 * clock set back (NTP stepping it) must not make a later version look older and be dropped.
 */
export const NEXT_UPDATED_AT = `max(?, strftime('%Y-%m-%dT%H:%M:%fZ', updated_at, '+0.001 seconds'))`;

/** A waiting (or failed, or vanished) file seen stable again, possibly with new content. */
export function requeueFile(db: Db, id: number, size: number, mtimeMs: number): void {
  cachedStatement(
    db,
    `UPDATE harvest_files SET size = ?, mtime_ms = ?, state = 'waiting', next_attempt_at = NULL,
       updated_at = ${NEXT_UPDATED_AT} WHERE id = ?`,
  ).run(size, mtimeMs, nowIso(), id);
  enqueueFile(db, id);
}

/**
 * Done files found again with the bytes they were recorded with, under a new mtime (one
 * commit): each record (and its ARK) stays, with the file's mtime now, in file_info too.
 */
export function keepRecords(db: Db, files: { id: number; size: number; mtimeMs: number }[]): void {
  db.transaction(() => {
    const keep = cachedStatement(
      db,
      `UPDATE harvest_files SET mtime_ms = ?,
         metadata_ = CASE WHEN json_type(metadata_, '$.file_info.modified_at') IS NULL THEN metadata_
           ELSE json_set(metadata_, '$.file_info.modified_at', ?) END,
         updated_at = ${NEXT_UPDATED_AT}
       WHERE id = ? AND state = 'done' AND size = ?`,
    );
    for (const f of files) {
      const { changes } = keep.run(
        f.mtimeMs,
        new Date(f.mtimeMs).toISOString(),
        nowIso(),
        f.id,
        f.size,
      );
      if (changes) enqueueFile(db, f.id);
    }
  }).immediate();
}

export function markGone(db: Db, id: number): void {
  cachedStatement(
    db,
    `UPDATE harvest_files SET state = 'gone', next_attempt_at = NULL, partial_path = NULL,
       verified_hash = NULL, pending_destination = NULL, pending_location_id = NULL,
       pending_note = NULL, made_folders = NULL, updated_at = ${NEXT_UPDATED_AT} WHERE id = ?`,
  ).run(nowIso(), id);
  enqueueFile(db, id);
}

export interface TransferOutcome {
  status: TransferStatus;
  storageLocationId: number | null;
  destinationPath: string | null;
  bytes: number;
  destChecksum: string | null;
  checksumVerified: boolean;
  startedAt: string;
  completedAt: string | null;
  error?: string;
  note?: string;
  /** The source's hash, when this attempt read the whole source. */
  sourceHash?: string | null;
  /** Merged into the file's metadata_ (post-transfer hooks). */
  metadata?: Record<string, unknown> | null;
  /** For a failure: when to try again (null = only when someone asks). */
  retryAt?: string | null;
}

export interface Finish {
  fileId: number;
  outcome: TransferOutcome;
}

const finishers = new WeakMap<Db, Transaction<(items: Finish[]) => number[]>>();

/**
 * Stores attempts' outcomes and their files' new states in one transaction, all or none; a
 * transaction inside another is a savepoint. Returns the transfer ids. The transaction
 * function is made once per database: better-sqlite3 builds a new wrapper on every
 * db.transaction call.
 */
export function finishTransfers(db: Db, items: Finish[]): number[] {
  let finish = finishers.get(db);
  if (!finish) {
    finish = db.transaction((group: Finish[]) => {
      const harvested = new Map<number, string>();
      const ids = group.map(({ fileId, outcome }) => {
        const { transferId, instrumentId } = storeOutcome(db, fileId, outcome);
        const at = outcome.completedAt;
        if (outcome.status === 'completed' && at && at > (harvested.get(instrumentId) ?? '')) {
          harvested.set(instrumentId, at);
        }
        return transferId;
      });
      // Once per instrument, not once per file: a group may hold hundreds of small files.
      for (const [instrumentId, at] of harvested) noteHarvested(db, instrumentId, at);
      return ids;
    });
    finishers.set(db, finish);
  }
  return finish.immediate(items);
}

/**
 * An instrument's last harvest is its latest completed transfer: a transfer recorded late (a
 * station's push, an older outcome) never moves it back.
 */
export function noteHarvested(db: Db, instrumentId: number, completedAt: string): void {
  cachedStatement(
    db,
    `UPDATE instruments SET last_harvested_at = ?
     WHERE id = ? AND (last_harvested_at IS NULL OR last_harvested_at < ?)`,
  ).run(completedAt, instrumentId, completedAt);
}

/** finishTransfers for one outcome. */
export function finishTransfer(db: Db, fileId: number, outcome: TransferOutcome): number {
  return finishTransfers(db, [{ fileId, outcome }])[0];
}

function storeOutcome(
  db: Db,
  fileId: number,
  outcome: TransferOutcome,
): { transferId: number; instrumentId: number } {
  const transferId = cachedStatement(
    db,
    `INSERT INTO harvest_transfers (uuid, file_id, status, storage_location_id,
         destination_path, bytes_transferred, dest_checksum, checksum_verified, started_at,
         completed_at, error, note)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
  )
    .pluck()
    .get(
      newUuid(),
      fileId,
      outcome.status,
      outcome.storageLocationId,
      outcome.destinationPath,
      outcome.bytes,
      outcome.destChecksum,
      outcome.checksumVerified ? 1 : 0,
      outcome.startedAt,
      outcome.completedAt,
      outcome.error ?? '',
      outcome.note ?? '',
    ) as number;
  const failed = outcome.status === 'failed';
  // A failure keeps the attempt's markers: whoever cleaned up after it cleared them
  // (attemptMarkers.ts clearAttempt); ones still set name a partial that could not be removed (the
  // share went away, the folder turned read-only), which the file's next attempt settles first
  // (transferQueue.ts runTransfer). Clearing them here would leave that partial forever.
  const instrumentId = cachedStatement(
    db,
    `UPDATE harvest_files SET state = ?, attempts = attempts + ?, next_attempt_at = ?,
       xxhash = coalesce(?, xxhash), metadata_ = coalesce(?, metadata_),
       partial_path = iif(?, partial_path, NULL), verified_hash = iif(?, verified_hash, NULL),
       pending_destination = iif(?, pending_destination, NULL),
       pending_location_id = iif(?, pending_location_id, NULL),
       pending_note = iif(?, pending_note, NULL),
       made_folders = iif(?, made_folders, NULL), updated_at = ${NEXT_UPDATED_AT}
     WHERE id = ? RETURNING instrument_id`,
  )
    .pluck()
    .get(
      failed ? 'failed' : 'done',
      failed ? 1 : 0,
      failed ? (outcome.retryAt ?? null) : null,
      outcome.sourceHash ?? null,
      outcome.metadata
        ? JSON.stringify(withCurrentUsageContext(db, fileId, outcome.metadata))
        : null,
      // The six iif()s: a failure keeps each marker.
      ...[failed, failed, failed, failed, failed, failed].map(Number),
      nowIso(),
      fileId,
    ) as number;
  enqueueFile(db, fileId);
  enqueueTransfer(db, transferId);
  return { transferId, instrumentId };
}

/** Files a restart must look at: a copy or a rename was under way when the process stopped. */
export function interruptedFiles(db: Db): FileRow[] {
  // A failed file's markers name a partial its failure could not remove (a share that went
  // away): its next attempt settles them (transferQueue.ts runTransfer), after its backoff, so a
  // share still away does not hold up every start.
  return cachedStatement(
    db,
    `SELECT * FROM harvest_files WHERE partial_path IS NOT NULL AND state != 'failed' ORDER BY id`,
  ).all() as FileRow[];
}
