/**
 * File and transfer records of the station's harvest: every write that the server must see
 * enqueues its outbox row in the same transaction.
 */
import { createHash } from 'node:crypto';
import {
  bladeLength,
  isTestArk,
  makeArk,
  parseArk,
  randomBlade,
  type ArkConfig,
} from '../../../shared/ark.js';
import type { HarvestFileView, HarvestStatus, HarvestTransferView } from '../../../shared/api.js';
import { likeContains, likePrefix } from '../../../shared/sqlLike.js';
import type { Transaction } from 'better-sqlite3';
import type { Db } from '../db/open.js';
import { cachedStatement } from '../db/statements.js';
import { getSetting } from '../station/settings.js';
import { newUuid, nowIso } from '../util/ids.js';
import { randomBelow } from '../util/random.js';
import { HASH_ALGORITHM } from './copy.js';
import { DEFAULT_ARK } from './config.js';

export type FileState = 'waiting' | 'failed' | 'done' | 'gone';

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
  next_attempt_at: string | null;
  partial_path: string | null;
  verified_hash: string | null;
  pending_destination: string | null;
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

/** The latest record of each source path of an instrument: what a rescan compares with. */
export function knownSources(
  db: Db,
  instrumentId: number,
): Map<string, { id: number; size: number; mtime_ms: number; state: FileState }> {
  const rows = cachedStatement(
    db,
    `SELECT source_path, id, size, mtime_ms, state FROM harvest_files
       WHERE instrument_id = ? ORDER BY id`,
  ).all(instrumentId) as {
    source_path: string;
    id: number;
    size: number;
    mtime_ms: number;
    state: FileState;
  }[];
  return new Map(rows.map((r) => [r.source_path, r]));
}

export function latestBySource(
  db: Db,
  instrumentId: number,
  sourcePath: string,
): FileRow | undefined {
  return cachedStatement(
    db,
    `SELECT * FROM harvest_files WHERE instrument_id = ? AND source_path = ?
       ORDER BY id DESC LIMIT 1`,
  ).get(instrumentId, sourcePath) as FileRow | undefined;
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
 * version of a file with the latest `updated_at` (server/sync/ingestHarvest.ts); a station
 * clock set back (NTP stepping it) must not make a later version look older and be dropped.
 */
const NEXT_UPDATED_AT = `max(?, strftime('%Y-%m-%dT%H:%M:%fZ', updated_at, '+0.001 seconds'))`;

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
       verified_hash = NULL, pending_destination = NULL, updated_at = ${NEXT_UPDATED_AT} WHERE id = ?`,
  ).run(nowIso(), id);
  enqueueFile(db, id);
}

/**
 * The attempt markers below are written without waiting for the disk (synchronous=NORMAL for
 * that one commit): they must survive the process dying, which they do, since SQLite has
 * handed them to the OS; a power cut may lose them, and then costs an orphan partial or a
 * copy recorded as skipped instead of completed. Waiting for the disk twice more per file
 * halved the rate of small files.
 */
function relaxed(db: Db, write: () => void): void {
  cachedStatement(db, 'PRAGMA synchronous = NORMAL').run();
  try {
    write();
  } finally {
    cachedStatement(db, 'PRAGMA synchronous = FULL').run();
  }
}

/** Written before the copy creates the partial: a crash leaves a name to clean up. */
export function beginAttempt(db: Db, id: number, partialPath: string): void {
  relaxed(db, () =>
    cachedStatement(db, 'UPDATE harvest_files SET partial_path = ? WHERE id = ?').run(
      partialPath,
      id,
    ),
  );
}

/** Written after verification, before the rename: a crash after the rename can be finished. */
export function markVerified(db: Db, id: number, hash: string, destination: string): void {
  relaxed(db, () =>
    cachedStatement(
      db,
      'UPDATE harvest_files SET verified_hash = ?, pending_destination = ? WHERE id = ?',
    ).run(hash, destination, id),
  );
}

/**
 * beginAttempt for a batch of small files (batch.ts), in one commit: every partial name is
 * recorded before the batch is handed to a copy worker.
 */
export function beginAttempts(db: Db, attempts: { id: number; partialPath: string }[]): void {
  if (!attempts.length) return;
  relaxed(db, () =>
    db
      .transaction(() => {
        const set = cachedStatement(db, 'UPDATE harvest_files SET partial_path = ? WHERE id = ?');
        for (const a of attempts) set.run(a.partialPath, a.id);
      })
      .immediate(),
  );
}

/** markVerified for a batch, in one commit, before any of its copies is placed. */
export function markVerifiedMany(
  db: Db,
  verified: { id: number; hash: string; destination: string }[],
): void {
  if (!verified.length) return;
  relaxed(db, () =>
    db
      .transaction(() => {
        const set = cachedStatement(
          db,
          'UPDATE harvest_files SET verified_hash = ?, pending_destination = ? WHERE id = ?',
        );
        for (const v of verified) set.run(v.hash, v.destination, v.id);
      })
      .immediate(),
  );
}

export function clearAttempt(db: Db, id: number): void {
  cachedStatement(
    db,
    `UPDATE harvest_files SET partial_path = NULL, verified_hash = NULL,
       pending_destination = NULL WHERE id = ?`,
  ).run(id);
}

export interface TransferOutcome {
  status: 'completed' | 'skipped' | 'failed';
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
  // (clearAttempt); ones still set name a partial that could not be removed (the share went
  // away, the folder turned read-only), which the file's next attempt settles first
  // (transferQueue.ts runTransfer). Clearing them here would leave that partial forever.
  const instrumentId = cachedStatement(
    db,
    `UPDATE harvest_files SET state = ?, attempts = attempts + ?, next_attempt_at = ?,
       xxhash = coalesce(?, xxhash), metadata_ = coalesce(?, metadata_),
       partial_path = iif(?, partial_path, NULL), verified_hash = iif(?, verified_hash, NULL),
       pending_destination = iif(?, pending_destination, NULL), updated_at = ${NEXT_UPDATED_AT}
     WHERE id = ? RETURNING instrument_id`,
  )
    .pluck()
    .get(
      failed ? 'failed' : 'done',
      failed ? 1 : 0,
      failed ? (outcome.retryAt ?? null) : null,
      outcome.sourceHash ?? null,
      outcome.metadata ? JSON.stringify(outcome.metadata) : null,
      // The three iif()s: a failure keeps each marker.
      ...[failed, failed, failed].map(Number),
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

/**
 * Ids of files whose transfer is due: failed ones whose retry time has come, and (after a
 * start or a walk) waiting ones. Ids only: this runs on every stability tick.
 */
export function dueFileIds(
  db: Db,
  now: string,
  instrumentIds: number[],
  includeWaiting: boolean,
): number[] {
  if (!instrumentIds.length) return [];
  const states = includeWaiting
    ? `(state = 'waiting' OR (state = 'failed' AND next_attempt_at <= ?))`
    : `state = 'failed' AND next_attempt_at <= ?`;
  return cachedStatement(
    db,
    `SELECT id FROM harvest_files WHERE ${states}
         AND instrument_id IN (${instrumentIds.map(() => '?').join(', ')})
       ORDER BY id`,
  )
    .pluck()
    .all(now, ...instrumentIds) as number[];
}

/** Every failed file of these instruments, made due now (Retry all): their ids. */
export function retryAllNow(db: Db, instrumentIds: number[]): number[] {
  if (!instrumentIds.length) return [];
  return cachedStatement(
    db,
    `UPDATE harvest_files SET next_attempt_at = ?, updated_at = ${NEXT_UPDATED_AT}
       WHERE state = 'failed' AND instrument_id IN (${instrumentIds.map(() => '?').join(', ')})
     RETURNING id`,
  )
    .pluck()
    .all(nowIso(), nowIso(), ...instrumentIds) as number[];
}

/** How many files retryAllNow would make due, less those `busy` (being tried already). */
export function countRetriable(db: Db, instrumentIds: number[], busy: number[]): number {
  if (!instrumentIds.length) return 0;
  return cachedStatement(
    db,
    `SELECT count(*) FROM harvest_files
       WHERE state = 'failed' AND instrument_id IN (${instrumentIds.map(() => '?').join(', ')})
         AND id NOT IN (SELECT value FROM json_each(?))`,
  )
    .pluck()
    .get(...instrumentIds, JSON.stringify(busy)) as number;
}

export function retryNow(db: Db, fileId: number): boolean {
  return (
    cachedStatement(
      db,
      `UPDATE harvest_files SET next_attempt_at = ?, updated_at = ${NEXT_UPDATED_AT}
         WHERE id = ? AND state = 'failed'`,
    ).run(nowIso(), nowIso(), fileId).changes === 1
  );
}

// --- Views for the UI and the CLI --------------------------------------------------------------

interface TransferRow {
  id: number;
  uuid: string;
  file_id: number;
  persistent_id: string;
  status: HarvestTransferView['status'];
  storage_location: string | null;
  destination_path: string | null;
  bytes_transferred: number;
  dest_checksum: string | null;
  checksum_verified: number;
  started_at: string;
  completed_at: string | null;
  error: string;
  note: string;
}

const TRANSFER_SELECT = `SELECT t.id, t.uuid, t.file_id, f.persistent_id, t.status,
    l.name AS storage_location, t.destination_path, t.bytes_transferred, t.dest_checksum,
    t.checksum_verified, t.started_at, t.completed_at, t.error, t.note
  FROM harvest_transfers t JOIN harvest_files f ON f.id = t.file_id
  LEFT JOIN storage_locations l ON l.id = t.storage_location_id`;

function transferView(row: TransferRow): HarvestTransferView {
  return { ...row, checksum_verified: row.checksum_verified === 1 };
}

export function listTransfers(
  db: Db,
  filter: { fileId?: number | undefined; limit?: number | undefined } = {},
): HarvestTransferView[] {
  const rows =
    filter.fileId === undefined
      ? cachedStatement(db, `${TRANSFER_SELECT} ORDER BY t.id DESC LIMIT ?`).all(filter.limit ?? -1)
      : cachedStatement(
          db,
          `${TRANSFER_SELECT} WHERE t.file_id = ? ORDER BY t.id DESC LIMIT ?`,
        ).all(filter.fileId, filter.limit ?? -1);
  return (rows as TransferRow[]).map(transferView);
}

type FileViewRow = Omit<
  HarvestFileView,
  'metadata_' | 'test_identifier' | 'mtime' | 'last_transfer' | 'usage_event'
> & {
  metadata_: string;
  mtime_ms: number;
  usage_event: string | null;
};

const FILE_SELECT = `SELECT f.id, f.uuid, f.persistent_id, f.persistent_id_type,
    i.name AS instrument, f.source_path, f.relative_path, f.filename, f.size, f.mtime_ms,
    f.xxhash, f.hash_algorithm, f.first_discovered_at,
    coalesce(e.uuid, f.usage_elsewhere ->> '$.usage_event') AS usage_event, f.metadata_,
    f.state, f.attempts, f.next_attempt_at
  FROM harvest_files f JOIN instruments i ON i.id = f.instrument_id
  LEFT JOIN usage_events e ON e.id = f.usage_event_id`;

function fileView(db: Db, row: FileViewRow): HarvestFileView {
  const { mtime_ms: mtimeMs, metadata_, ...rest } = row;
  return {
    ...rest,
    mtime: new Date(mtimeMs).toISOString(),
    metadata_: JSON.parse(metadata_) as Record<string, unknown>,
    test_identifier: isTestArk(row.persistent_id),
    last_transfer: listTransfers(db, { fileId: row.id, limit: 1 })[0] ?? null,
  };
}

export interface FileFilter {
  state?: FileState | undefined;
  limit?: number | undefined;
  beforeId?: number | undefined;
  /**
   * An ARK (either form) finds its file; other text, the files whose path holds it. Trimmed
   * by the caller (the API's schema).
   */
  search?: string | undefined;
}

/**
 * Adds the records made since the last time to the path index (migration 12), in one
 * statement: 4 to 7 us per record, where a trigger per record cost 45 (FTS5 writes a segment
 * per statement in a trigger). Run by the harvest as each walk starts (the records of the last
 * interval), not on the way of each file; a search reads the records made since as they are
 * (listFiles). Cheap when there is nothing to add.
 */
export function indexPaths(db: Db): void {
  const through = indexedThrough(db);
  const newest = cachedStatement(db, 'SELECT max(id) FROM harvest_files').pluck().get() as
    number | null;
  if (newest === null || newest <= through) return;
  db.transaction(() => {
    // The path composed (NFC), as searches compare it (listFiles): the index holds the
    // decomposed path of a file from a Mac ("e" and U+0301 for "é") as "é" too.
    cachedStatement(
      db,
      `INSERT INTO harvest_files_path (rowid, relative_path)
         SELECT id, nfc(relative_path) FROM harvest_files WHERE id > ? AND id <= ? ORDER BY id`,
    ).run(through, newest);
    cachedStatement(db, 'UPDATE harvest_files_path_through SET through = ?').run(newest);
  }).immediate();
}

/** The newest record in the path index: those after it are not indexed yet. */
function indexedThrough(db: Db): number {
  return cachedStatement(db, 'SELECT through FROM harvest_files_path_through')
    .pluck()
    .get() as number;
}

/**
 * `text` as a query of the path index (migration 12) that finds the records whose path may
 * hold it: one phrase of its trigrams, without case. Null for text of fewer than three
 * characters, which has no trigram.
 */
function trigramQuery(text: string): string | null {
  return [...text].length < 3 ? null : `"${text.replace(/"/g, '""')}"`;
}

/**
 * A whole source path, as a file's details show it (a watched folder, then the path below it),
 * as that folder and the part below it (composed, NFC, as `text` is); null for other text. So a path pasted from the
 * details finds its file, where the index holds the part below the folder only.
 */
function belowWatchedFolder(db: Db, text: string): { folder: string; below: string } | null {
  const folders = (
    cachedStatement(db, 'SELECT watch FROM instruments').pluck().all() as string[]
  ).flatMap((watch) => (JSON.parse(watch) as { path: string }[]).map((w) => w.path));
  // The longest first: a folder watched inside another names its own files.
  for (const folder of folders.sort((a, b) => b.length - a.length)) {
    const bare = folder.replace(/[\\/]+$/, '').normalize('NFC');
    if (text === bare) return { folder, below: '' };
    if (text.startsWith(bare) && /^[\\/]/.test(text.slice(bare.length))) {
      return { folder, below: text.slice(bare.length + 1).replace(/\\/g, '/') };
    }
  }
  return null;
}

/**
 * The condition that a record's relative path holds `text` (composed, NFC), as the index
 * compares it (indexPaths: the path composed) and ignoring case for A to Z: a Mac's "café"
 * ("cafe" and U+0301) holds "caf" and "café", not "cafe", whether indexed yet or not.
 * Printable-ASCII text (almost every search) reads the path as stored first: nfc() is a call
 * into JavaScript, and for every record a scan of 1,000,000 paths took 0.6 s with it against
 * 0.05 s without. Such text found there is in the path composed too, but where its last
 * letter takes a combining mark that follows ("cafe" in "cafe" U+0301): so only a path it is
 * found in, and that holds more than ASCII, is composed to be sure: a search that finds many
 * files reads a page of them (the CLI, all of them, each printed), one that finds none reads
 * every path as before.
 */
function pathHolds(text: string): { sql: string; params: unknown[] } {
  const pattern = likeContains(text);
  if (!/^[ -~]*$/.test(text)) {
    return { sql: `nfc(f.relative_path) LIKE ? ESCAPE '\\'`, params: [pattern] };
  }
  // A CASE, whose branches SQLite reads in order and stops at the first that holds (OR and
  // AND, in a value, read both sides): nfc() only for a path found that is not all ASCII (as
  // many characters as UTF-8 bytes; a GLOB of a character class took 5 times as long).
  return {
    sql: `CASE WHEN f.relative_path NOT LIKE ? ESCAPE '\\' THEN 0
            WHEN length(f.relative_path) = octet_length(f.relative_path) THEN 1
            ELSE nfc(f.relative_path) LIKE ? ESCAPE '\\' END`,
    params: [pattern, pattern],
  };
}

/**
 * The relative path as it is compared with `path` whole (a path below a watched folder):
 * composed (NFC) where `path` is not all printable ASCII. Such a path equals or begins only
 * paths that are printable ASCII where it is, in either form: a combining mark after it would
 * follow a "/" or end the path, which it does not compose with.
 */
function pathAsCompared(path: string): string {
  return /^[ -~]*$/.test(path) ? 'f.relative_path' : 'nfc(f.relative_path)';
}

/** Newest first; `beforeId` pages further back. */
export function listFiles(db: Db, filter: FileFilter = {}): HarvestFileView[] {
  const where: string[] = [];
  const params: unknown[] = [];
  // Compared composed (NFC) on both sides: "é" typed finds "e" + U+0301 (a Mac's names) too.
  let search = filter.search?.normalize('NFC');
  let phrase: string | null = null;
  const source = search ? belowWatchedFolder(db, search) : null;
  if (source) {
    // That file, or the files of that folder: the path itself, not text it may hold.
    where.push('f.watch_path = ?');
    params.push(source.folder);
    if (source.below !== '') {
      const path = pathAsCompared(source.below);
      where.push(`(${path} = ? OR ${path} LIKE ? ESCAPE '\\')`);
      params.push(source.below, likePrefix(`${source.below.replace(/\/+$/, '')}/`));
    }
    search = undefined;
  }
  if (search) {
    const ark = parseArk(search);
    if (ark.ok) {
      where.push('f.persistent_id = ?');
      params.push(ark.ark);
    } else {
      // No path holds a NUL (and FTS5 would read the text only up to it).
      if (search.includes('\0')) return [];
      phrase = trigramQuery(search);
      // The index folds case beyond A to Z; LIKE has the last word, case-blind for ASCII
      // letters only, as a person typing a name expects (and as without the index).
      const holds = pathHolds(search);
      where.push(holds.sql);
      params.push(...holds.params);
    }
  }
  if (filter.state) {
    where.push('f.state = ?');
    params.push(filter.state);
  }
  const limit = filter.limit ?? -1;
  const page = (
    extraWhere: string[],
    extraParams: unknown[],
    from = '',
    id = 'f.id',
    count = limit,
  ): FileViewRow[] => {
    const all = [...where, ...extraWhere];
    const args = [...params, ...extraParams];
    if (filter.beforeId !== undefined) {
      all.push(`${id} < ?`);
      args.push(filter.beforeId);
    }
    return cachedStatement(
      db,
      `${FILE_SELECT} ${from} ${all.length ? `WHERE ${all.join(' AND ')}` : ''}
         ORDER BY ${id} DESC LIMIT ?`,
    ).all(...args, count) as FileViewRow[];
  };
  if (phrase === null) return page([], []).map((r) => fileView(db, r));
  // A search through the path index (migration 12), which holds the records up to `through`:
  // those made since (one walk's worth at most, while the harvest runs) are read as they are,
  // and come first, being the newest; then the index, newest first, which stops as soon as
  // the page is full. Nothing is written here: a search is a read, from the CLI too.
  const through = indexedThrough(db);
  const newer = page(['f.id > ?'], [through]);
  const left = limit < 0 ? -1 : limit - newer.length;
  const indexed =
    left === 0
      ? []
      : page(
          ['harvest_files_path MATCH ?', 'p.rowid <= ?'],
          [phrase, through],
          'JOIN harvest_files_path p ON p.rowid = f.id',
          'p.rowid',
          left,
        );
  return [...newer, ...indexed].map((r) => fileView(db, r));
}

export function getFileView(db: Db, id: number): HarvestFileView | null {
  const row = cachedStatement(db, `${FILE_SELECT} WHERE f.id = ?`).get(id) as
    FileViewRow | undefined;
  return row ? fileView(db, row) : null;
}

/**
 * The files failed since a moment and failed still. Read from the failed transfers since then
 * (the index harvest_transfers_failed, which holds the file: the list is of distinct ids), each
 * file then looked up by its id; the unary + keeps SQLite from walking every failed file by
 * harvest_files_work instead, each looked up among its transfers (24 ms at 100,000 failed
 * files, against 0.03 ms with 100 failed today).
 */
export const FAILED_SINCE_QUERY = `SELECT count(*) FROM harvest_files f
  WHERE f.id IN (
    SELECT file_id FROM harvest_transfers WHERE status = 'failed' AND started_at >= ?)
  AND +f.state = 'failed'`;

/**
 * Today's totals, `since` being the start of today (local time): transfers completed and
 * skipped that started since then, the bytes completed, and the files that failed since then
 * and are failed still (FAILED_SINCE_QUERY: the status is read every second while files are
 * copied). Files, not attempts: a share down all day is one failed file per file,
 * however often each was tried, and a file that failed and then completed is not failed.
 */
export function totalsSince(
  db: Db,
  since: string,
): { completed: number; skipped: number; failed: number; bytes: number } {
  const ended = cachedStatement(
    db,
    `SELECT status, count(*) AS n, sum(bytes_transferred) AS bytes FROM harvest_transfers
       WHERE started_at >= ? AND status IN ('completed', 'skipped') GROUP BY status`,
  ).all(since) as { status: 'completed' | 'skipped'; n: number; bytes: number | null }[];
  const totals = { completed: 0, skipped: 0, failed: 0, bytes: 0 };
  for (const r of ended) {
    totals[r.status] = r.n;
    if (r.status === 'completed') totals.bytes = r.bytes ?? 0;
  }
  totals.failed = cachedStatement(db, FAILED_SINCE_QUERY).pluck().get(since) as number;
  return totals;
}

export const FAILURES_QUERY = `SELECT count(*) AS failed, total(id) AS ids,
    total(unixepoch(next_attempt_at, 'subsec')) AS due, total(attempts) AS attempts
  FROM harvest_files WHERE state = 'failed'`;

/**
 * What the failure list shows that is not its files' own: the names of every instrument and
 * every storage location (a failed transfer's destination), each with its id; and the history
 * pages taken (sync/history.ts: each moves its instrument's cursor on, the last one ends it),
 * which may add to a file failed here a transfer made elsewhere, its last transfer then,
 * without a failure here. A few rows: read whole, as the status is, not only the failed files'.
 */
export const FAILURES_CONTEXT_QUERY = `SELECT
    coalesce((SELECT group_concat(id || ' ' || name, char(10))
       FROM (SELECT id, name FROM instruments ORDER BY id)), '')
    || char(0) ||
    coalesce((SELECT group_concat(id || ' ' || name, char(10))
       FROM (SELECT id, name FROM storage_locations ORDER BY id)), '')
    || char(0) ||
    coalesce((SELECT group_concat(instrument_id || ' ' || after, char(10))
       FROM (SELECT instrument_id, after FROM harvest_history_pending ORDER BY instrument_id)), '')`;

/**
 * How many files are failed, and a version of what the failure list shows of them, which a
 * change of any of it moves on. The list shows each failed file's path (never changed), its
 * attempts, its next try and its last transfer (the reason, the storage location and the
 * destination: one made here is a new failure, which adds an attempt), its instrument's name
 * and its storage location's name; it holds the newest failed files. So: a file failing or no
 * longer failed changes the count and the sum of the ids; a file failing again its attempts
 * (also where its next_attempt_at comes out as it was: one not retried by itself, retried from
 * the CLI or another window and failed again before anyone read the status); a Retry its
 * next_attempt_at (now); a rename of an instrument or a storage location, or a page of an
 * instrument's history taken, the digest of FAILURES_CONTEXT_QUERY. The files' part is read
 * from the index harvest_files_work alone (state, next_attempt_at, attempts and the id): the
 * status is read every second while files are copied (17 ms at 100,000 failed files, 0.1 ms at
 * 1,000). Sums as floats (total), which never overflow; the same rows always give the same
 * text.
 */
function failures(db: Db): { failed: number; failures_version: string } {
  const row = cachedStatement(db, FAILURES_QUERY).get() as {
    failed: number;
    ids: number;
    due: number;
    attempts: number;
  };
  // No failed file, no list: the names cannot show, and a first failure moves the count.
  const context = row.failed
    ? (cachedStatement(db, FAILURES_CONTEXT_QUERY).pluck().get() as string)
    : undefined;
  const digest =
    context === undefined
      ? ''
      : createHash('sha1').update(context).digest('base64url').slice(0, 12);
  return {
    failed: row.failed,
    failures_version: `${row.failed}:${row.ids}:${row.due}:${row.attempts}:${digest}`,
  };
}

/**
 * What the database alone tells of the harvest: the Data tab's status where no engine runs, and
 * the base the engine adds its live state to.
 */
export function idleHarvestStatus(db: Db, now: number = Date.now()): HarvestStatus {
  const midnight = new Date(now);
  midnight.setHours(0, 0, 0, 0);
  const ark = arkConfig(db);
  return {
    running: false,
    problem: null,
    instruments: [],
    active: [],
    settling: 0,
    settling_files: [],
    queued: 0,
    ...failures(db),
    retriable: 0,
    today: totalsSince(db, midnight.toISOString()),
    ark: { ...ark, test: isTestArk(ark) },
    last_scan_at: null,
  };
}
