/**
 * A transfer this station completed into a `server` storage location, refused by the server for
 * lacking its upload (UPLOAD_MISSING): the server was restored from a backup made before the
 * upload, or forgot the finished upload since (server/uploads/cleanup.ts). The transfer record
 * stays as it is, and is not made again: a file is completed once (the unique index
 * harvest_transfers_one_completed, on both sides). Instead the file is uploaded again to the
 * place the record names, and must hash as the record says; the server then holds the upload
 * (`skipped`, nothing sent, where it still has the file there) and takes the record when it is
 * offered again (sync/client.ts).
 */
import type { Db } from '../db/open.js';
import { cachedStatement } from '../db/statements.js';
import { uploadVerified, type UploadDeps } from './upload.js';

/** `busy`: the file is being sent again already, by an earlier refusal of the same record. */
export type UploadAgainResult = { ok: true } | { ok: false; reason: string; busy?: true };

interface TransferToSendAgain {
  status: string;
  destination_path: string | null;
  dest_checksum: string | null;
  location_uuid: string | null;
  location_name: string | null;
  location_type: string | null;
  base_path: string | null;
  file_uuid: string;
  source_path: string;
  size: number;
  mtime_ms: number;
}

/**
 * The destination of a transfer relative to its location's base, as an upload names it (with
 * `/`, whichever separator the server's paths use); null when it does not lie inside it.
 */
export function relativeToBase(path: string, base: string): string | null {
  const folder = base.replace(/[\\/]+$/, '');
  if (folder === '' || !path.startsWith(folder)) return null;
  const separator = path[folder.length];
  if (separator !== '/' && separator !== '\\') return null;
  const relative = path.slice(folder.length + 1);
  if (relative === '') return null;
  return base.includes('\\') ? relative.replace(/\\/g, '/') : relative;
}

export async function uploadAgain(
  db: Db,
  deps: UploadDeps,
  transferUuid: string,
): Promise<UploadAgainResult> {
  const row = cachedStatement(
    db,
    `SELECT t.status, t.destination_path, t.dest_checksum, l.uuid AS location_uuid,
       l.name AS location_name, l.type AS location_type, l.base_path, f.uuid AS file_uuid,
       f.source_path, f.size, f.mtime_ms
     FROM harvest_transfers t JOIN harvest_files f ON f.id = t.file_id
     LEFT JOIN storage_locations l ON l.id = t.storage_location_id
     WHERE t.uuid = ?`,
  ).get(transferUuid.toLowerCase()) as TransferToSendAgain | undefined;
  if (!row) return { ok: false, reason: 'no such transfer on this station' };
  if (row.status !== 'completed' || row.dest_checksum === null) {
    return { ok: false, reason: `the transfer is ${row.status}, not completed` };
  }
  if (row.location_type !== 'server' || row.location_uuid === null) {
    return {
      ok: false,
      reason:
        row.location_name === null
          ? 'its storage location is no longer configured on this station'
          : `storage location ${row.location_name} is no longer on the server`,
    };
  }
  const destination =
    row.destination_path === null || row.base_path === null
      ? null
      : relativeToBase(row.destination_path, row.base_path);
  if (destination === null) {
    return {
      ok: false,
      reason:
        `its destination ${JSON.stringify(row.destination_path)} is not inside storage location ` +
        `${row.location_name}'s base path ${JSON.stringify(row.base_path)} (moved since?)`,
    };
  }
  const sent = await uploadVerified(deps, {
    file: {
      uuid: row.file_uuid,
      source_path: row.source_path,
      size: row.size,
      mtime_ms: row.mtime_ms,
    },
    location: { uuid: row.location_uuid, name: row.location_name ?? '' },
    destination,
    expectedHash: row.dest_checksum,
  });
  if (sent.outcome === 'source_changed') {
    return { ok: false, reason: `its source changed since it was transferred: ${sent.detail}` };
  }
  if (sent.outcome === 'failed') return { ok: false, reason: sent.reason };
  if (sent.sourceHash.toLowerCase() !== row.dest_checksum.toLowerCase()) {
    return {
      ok: false,
      reason:
        `its source now hashes ${sent.sourceHash}, not ${row.dest_checksum} as transferred; ` +
        'it is a new version of the file',
    };
  }
  return { ok: true };
}
