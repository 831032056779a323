/**
 * The station's side of an instrument's history (protocol.ts, GET /sync/harvest/history): when
 * the server gives this station an instrument, the file records made before (on the station
 * that ran it, or on this one before its data dir was made anew) are fetched and stored here
 * before the instrument is harvested. A file they name with the same size and mtime is then
 * known already: it keeps its ARK and is not copied again. Without them every file in the
 * watched folders would be a new file with a new ARK.
 *
 * The records are stored as the server holds them, without outbox rows (the server has them);
 * what becomes of them here (a retry, a file gone) is pushed like any record of this station's.
 */
import { join } from 'node:path';
import type { Db } from '../db/open.js';
import { cachedStatement } from '../db/statements.js';
import { receivedUsageContext } from '../harvest/usageContext.js';
import type { SyncHistoryFile, SyncHistoryPage } from './protocol.js';

/** An instrument whose history is still to be fetched. */
export interface PendingHistory {
  instrumentId: number;
  uuid: string;
  name: string;
  /** The server's id of the last file taken: the next page starts after it. */
  after: number;
  /** 1: given by the server; 0: configured on the station (a data dir restored, restored.ts). */
  fromServer: number;
}

/** What the station's harvest says of an instrument that waits for its history. */
export const HISTORY_PROBLEM =
  'not harvested yet: waiting for the server to send the records of its files harvested ' +
  'before (they keep their ARKs)';

/** Marks the instrument (by uuid) as waiting for its history, from the start. */
export function awaitHistory(db: Db, instrumentUuid: string): void {
  cachedStatement(
    db,
    `INSERT INTO harvest_history_pending (instrument_id, after)
       SELECT id, 0 FROM instruments WHERE uuid = ?
     ON CONFLICT (instrument_id) DO UPDATE SET after = 0`,
  ).run(instrumentUuid);
}

/** Those to fetch: an instrument turned off (or moved away) meanwhile waits until it is back. */
export function pendingHistory(db: Db): PendingHistory[] {
  return cachedStatement(
    db,
    `SELECT p.instrument_id AS instrumentId, i.uuid, i.name, p.after, i.from_server AS fromServer
       FROM harvest_history_pending p JOIN instruments i ON i.id = p.instrument_id
       WHERE i.enabled = 1 ORDER BY p.instrument_id`,
  ).all() as PendingHistory[];
}

/** Ids of the instruments that wait for their history: the harvest leaves them alone. */
export function historyPendingIds(db: Db): Set<number> {
  return new Set(
    cachedStatement(db, 'SELECT instrument_id FROM harvest_history_pending')
      .pluck()
      .all() as number[],
  );
}

/**
 * Stores one page of an instrument's history, in one transaction with the cursor: a page is
 * taken whole or not at all, and taking one again changes nothing. A record held here already
 * takes the server's version when that is newer and no copy of it is under way here. A file
 * that was waiting or failed elsewhere waits here, to be transferred under its own ARK. Returns
 * true when this was the last page (the instrument is then harvested).
 */
export function takeHistoryPage(db: Db, instrumentId: number, page: SyncHistoryPage): boolean {
  const file = cachedStatement(
    db,
    `INSERT INTO harvest_files (uuid, instrument_id, persistent_id, persistent_id_type,
       watch_path, relative_path, source_path, filename, size, mtime_ms, xxhash, hash_algorithm,
       first_discovered_at, usage_event_id, usage_elsewhere, metadata_, state, updated_at)
     SELECT @uuid, @instrument_id, @persistent_id, @persistent_id_type, @watch_path,
       @relative_path, @source_path, @filename, @size, @mtime_ms, @xxhash, @hash_algorithm,
       @first_discovered_at, e.id, CASE WHEN e.id IS NULL THEN @usage_elsewhere END,
       @metadata_, @state, @updated_at
     FROM (SELECT 1) LEFT JOIN usage_events e ON e.uuid = @usage_event_uuid
     WHERE true
     ON CONFLICT (uuid) DO UPDATE SET size = excluded.size, mtime_ms = excluded.mtime_ms,
       xxhash = excluded.xxhash, hash_algorithm = excluded.hash_algorithm,
       usage_elsewhere = CASE WHEN harvest_files.usage_event_id IS NULL
         THEN coalesce(excluded.usage_elsewhere, harvest_files.usage_elsewhere) END,
       metadata_ = excluded.metadata_, state = excluded.state, updated_at = excluded.updated_at,
       attempts = 0, retried_at_attempts = 0, next_attempt_at = NULL
     WHERE excluded.updated_at > harvest_files.updated_at
       AND harvest_files.partial_path IS NULL AND harvest_files.pending_destination IS NULL
     ON CONFLICT DO NOTHING`,
  );
  const transfer = cachedStatement(
    db,
    `INSERT INTO harvest_transfers (uuid, file_id, status, storage_location_id,
       destination_path, bytes_transferred, dest_checksum, checksum_verified, started_at,
       completed_at, error, note, from_server)
     SELECT @uuid, f.id, @status, (SELECT id FROM storage_locations WHERE uuid = @location),
       @destination_path, @bytes_transferred, @dest_checksum, @checksum_verified, @started_at,
       @completed_at, @error, @note, 1
     FROM harvest_files f WHERE f.uuid = @file_uuid
     ON CONFLICT DO NOTHING`,
  );
  const place = placement(db, instrumentId);
  const take = db.transaction(() => {
    for (const f of page.files) {
      const { watchPath, sourcePath } = place(f);
      file.run({
        uuid: f.uuid.toLowerCase(),
        instrument_id: instrumentId,
        persistent_id: f.persistent_id,
        persistent_id_type: f.persistent_id_type,
        watch_path: watchPath,
        relative_path: f.relative_path,
        source_path: sourcePath,
        filename: f.filename,
        size: f.size,
        mtime_ms: f.mtime_ms,
        xxhash: f.xxhash,
        hash_algorithm: f.hash_algorithm,
        first_discovered_at: f.first_discovered_at,
        usage_event_uuid: f.usage_event_uuid,
        usage_elsewhere: elsewhere(f),
        metadata_: JSON.stringify(f.metadata_),
        // Waiting or failed elsewhere: due here (a failed file's backoff was the other one's).
        state: f.state === 'failed' ? 'waiting' : f.state,
        updated_at: f.updated_at,
      });
      for (const t of f.transfers) {
        transfer.run({
          uuid: t.uuid.toLowerCase(),
          file_uuid: f.uuid.toLowerCase(),
          status: t.status,
          location: t.storage_location_uuid,
          destination_path: t.destination_path,
          bytes_transferred: t.bytes_transferred,
          dest_checksum: t.dest_checksum,
          checksum_verified: t.checksum_verified ? 1 : 0,
          started_at: t.started_at,
          completed_at: t.completed_at,
          error: t.error,
          note: t.note,
        });
      }
    }
    if (page.next === null) {
      cachedStatement(db, 'DELETE FROM harvest_history_pending WHERE instrument_id = ?').run(
        instrumentId,
      );
    } else {
      cachedStatement(
        db,
        'UPDATE harvest_history_pending SET after = ? WHERE instrument_id = ?',
      ).run(page.next, instrumentId);
    }
  });
  take.immediate();
  return page.next === null;
}

/**
 * The usage a record of the history was made during, as the server described it, for when this
 * station does not hold that usage: JSON, or null when the server sent none that fits.
 */
function elsewhere(f: SyncHistoryFile): string | null {
  const context = receivedUsageContext(f.usage_context);
  if (context === null || context.usage_event.toLowerCase() !== f.usage_event_uuid?.toLowerCase())
    return null;
  return JSON.stringify(context);
}

/**
 * Where a record of the history is on this station. Files are known by their path, so a
 * record made where the instrument's folder was elsewhere (the old PC mounted the share at
 * another path, and the instrument's single watched folder was changed with the move) is moved
 * under the folder watched now, by its path relative to the watched folder. With several
 * watched folders a record stays where it was: which one held it cannot be told.
 */
function placement(
  db: Db,
  instrumentId: number,
): (f: SyncHistoryFile) => { watchPath: string; sourcePath: string } {
  const row = cachedStatement(db, 'SELECT watch FROM instruments WHERE id = ?')
    .pluck()
    .get(instrumentId) as string | undefined;
  const watched = (JSON.parse(row ?? '[]') as { path: string }[]).map((w) => w.path);
  return (f) => {
    const only = watched.length === 1 ? watched[0] : undefined;
    if (only === undefined || watched.includes(f.watch_path)) {
      return { watchPath: f.watch_path, sourcePath: f.source_path };
    }
    return { watchPath: only, sourcePath: join(only, ...f.relative_path.split('/')) };
  };
}
