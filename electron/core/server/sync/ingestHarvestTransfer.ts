/**
 * A pushed transfer record: stored once by uuid and never changed, a resend a no-op; checked
 * against its file record's checksum and where it went.
 */
import type { z } from 'zod';
import type { Db } from '../../db/open.js';
import { cachedStatement } from '../../db/statements.js';
import { noteHarvested } from '../../harvest/records.js';
import type { PushRecord } from '../../sync/protocol.js';
import { transferSchema } from './harvestSchemas.js';
import { fileWriter } from './harvestWriters.js';
import { RecordRefused, parse, type StationRef } from './records.js';
import { checkUploaded, storageLocationOf } from './transferLocation.js';

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
