/**
 * The server's records of uploads into `server` storage locations: the table, and the queries
 * the routes and the cleanup run on it.
 */
import type { Db } from '../../db/open.js';
import { cachedStatement } from '../../db/statements.js';
import { nowIso } from '../../util/ids.js';
import type { UploadStatus } from '../../sync/uploadProtocol.js';

/** Its table is made by migration 7 (electron/core/db/migrations/007_harvest_api.ts). */

export interface UploadRow {
  id: number;
  uuid: string;
  station_id: number;
  file_uuid: string;
  storage_location_id: number;
  destination_path: string;
  size: number;
  xxhash: string;
  state: UploadStatus;
  received: number;
  partial_path: string | null;
  /** Where a verified upload is being placed (markPlacing): set before its link. */
  placing_path: string | null;
  final_path: string | null;
  dest_checksum: string | null;
  note: string;
  created_at: string;
  updated_at: string;
  finished_at: string | null;
}

export interface ServerLocation {
  id: number;
  uuid: string;
  name: string;
  type: 'local' | 'server';
  base_path: string;
  enabled: number;
}

const LOCATION_COLUMNS = 'id, uuid, name, type, base_path, enabled';

/** By uuid; by name when the uuid is not known here (each side imports its own config). */
export function findLocation(db: Db, uuid: string, name: string): ServerLocation | undefined {
  return (cachedStatement(
    db,
    `SELECT ${LOCATION_COLUMNS} FROM storage_locations WHERE uuid = ?`,
  ).get(uuid) ??
    cachedStatement(db, `SELECT ${LOCATION_COLUMNS} FROM storage_locations WHERE name = ?`).get(
      name,
    )) as ServerLocation | undefined;
}

export function locationById(db: Db, id: number): ServerLocation | undefined {
  return cachedStatement(db, `SELECT ${LOCATION_COLUMNS} FROM storage_locations WHERE id = ?`).get(
    id,
  ) as ServerLocation | undefined;
}

export interface UploadKey {
  stationId: number;
  fileUuid: string;
  locationId: number;
  destination: string;
  size: number;
  xxhash: string;
}

export function findUpload(db: Db, key: UploadKey): UploadRow | undefined {
  return cachedStatement(
    db,
    `SELECT * FROM harvest_uploads WHERE station_id = ? AND file_uuid = ?
       AND storage_location_id = ? AND destination_path = ? AND size = ? AND xxhash = ?`,
  ).get(key.stationId, key.fileUuid, key.locationId, key.destination, key.size, key.xxhash) as
    UploadRow | undefined;
}

/** Unfinished uploads of other versions of this file to this destination: superseded. */
export function supersededUploads(db: Db, key: UploadKey): UploadRow[] {
  return cachedStatement(
    db,
    `SELECT * FROM harvest_uploads WHERE station_id = ? AND file_uuid = ?
       AND storage_location_id = ? AND destination_path = ? AND state = 'receiving'
       AND NOT (size = ? AND xxhash = ?)`,
  ).all(
    key.stationId,
    key.fileUuid,
    key.locationId,
    key.destination,
    key.size,
    key.xxhash,
  ) as UploadRow[];
}

export function uploadByUuid(db: Db, uuid: string): UploadRow | undefined {
  return cachedStatement(db, 'SELECT * FROM harvest_uploads WHERE uuid = ?').get(uuid) as
    UploadRow | undefined;
}

export function insertUpload(
  db: Db,
  key: UploadKey,
  fields: { uuid: string; partialPath: string | null; finished?: Finished | undefined },
): UploadRow {
  const now = nowIso();
  const finished = fields.finished;
  return cachedStatement(
    db,
    `INSERT INTO harvest_uploads (uuid, station_id, file_uuid, storage_location_id,
         destination_path, size, xxhash, state, received, partial_path, final_path,
         dest_checksum, note, created_at, updated_at, finished_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
  ).get(
    fields.uuid,
    key.stationId,
    key.fileUuid,
    key.locationId,
    key.destination,
    key.size,
    key.xxhash,
    finished?.state ?? 'receiving',
    finished ? key.size : 0,
    fields.partialPath,
    finished?.finalPath ?? null,
    finished?.destChecksum ?? null,
    finished?.note ?? '',
    now,
    now,
    finished ? now : null,
  ) as UploadRow;
}

/*
 * The writes of a request at work name its upload by uuid, never by id: its record may have
 * gone meanwhile (its station refused, dropUploadsOfRefused), and an id is a row's, not an
 * upload's (before migration 31, SQLite gave the highest id freed to the next upload).
 */

export function setReceived(db: Db, uuid: string, received: number): void {
  cachedStatement(db, 'UPDATE harvest_uploads SET received = ?, updated_at = ? WHERE uuid = ?').run(
    received,
    nowIso(),
    uuid,
  );
}

/**
 * The name the verified partial is linked to next, written (with the disk's answer) before the
 * link: a server stopped between the link and the record finds its file by it (receive.ts
 * placedBefore). Null: the partial goes unplaced (a skip), and this goes first.
 */
export function markPlacing(db: Db, uuid: string, path: string | null): void {
  cachedStatement(db, 'UPDATE harvest_uploads SET placing_path = ? WHERE uuid = ?').run(path, uuid);
}

export interface Finished {
  state: 'completed' | 'skipped';
  finalPath: string;
  destChecksum: string;
  note: string;
}

/** The upload recorded finished; undefined when its record has gone meanwhile. */
export function finishUpload(db: Db, uuid: string, finished: Finished): UploadRow | undefined {
  const now = nowIso();
  return cachedStatement(
    db,
    `UPDATE harvest_uploads SET state = ?, received = size, partial_path = NULL,
       placing_path = NULL, final_path = ?, dest_checksum = ?, note = ?, updated_at = ?, finished_at = ?
     WHERE uuid = ? RETURNING *`,
  ).get(
    finished.state,
    finished.finalPath,
    finished.destChecksum,
    finished.note,
    now,
    now,
    uuid,
  ) as UploadRow | undefined;
}

export function deleteUpload(db: Db, uuid: string): void {
  cachedStatement(db, 'DELETE FROM harvest_uploads WHERE uuid = ?').run(uuid);
}

/**
 * Deletes a station's unfinished uploads and answers them (their partial files are still to
 * remove); finished ones stay. By the version index (its prefix station_id).
 */
export function deleteUnfinishedOf(db: Db, stationId: number): UploadRow[] {
  return cachedStatement(
    db,
    "DELETE FROM harvest_uploads WHERE station_id = ? AND state = 'receiving' RETURNING *",
  ).all(stationId) as UploadRow[];
}

/** The same for the unfinished uploads into a storage location. */
export function deleteUnfinishedInto(db: Db, locationId: number): UploadRow[] {
  return cachedStatement(
    db,
    "DELETE FROM harvest_uploads WHERE storage_location_id = ? AND state = 'receiving' RETURNING *",
  ).all(locationId) as UploadRow[];
}

/** Unfinished uploads untouched since `before`, and finished ones older than `finishedBefore`. */
export function staleUploads(db: Db, before: string, finishedBefore: string): UploadRow[] {
  return cachedStatement(
    db,
    `SELECT * FROM harvest_uploads WHERE state = 'receiving' AND updated_at < ?
     UNION ALL
     SELECT * FROM harvest_uploads WHERE state IN ('completed', 'skipped') AND updated_at < ?`,
  ).all(before, finishedBefore) as UploadRow[];
}

/** Partial files that a row still counts on (the cleanup keeps these). */
export function partialPaths(db: Db): Set<string> {
  return new Set(
    cachedStatement(db, 'SELECT partial_path FROM harvest_uploads WHERE partial_path IS NOT NULL')
      .pluck()
      .all() as string[],
  );
}

export function serverLocations(db: Db): ServerLocation[] {
  return cachedStatement(
    db,
    `SELECT ${LOCATION_COLUMNS} FROM storage_locations WHERE type = 'server'`,
  ).all() as ServerLocation[];
}
