/**
 * The server's storage location of a pushed transfer, and the check that a completed transfer
 * into a `server` location is one this server received the file of.
 */
import type { z } from 'zod';
import type { Db } from '../../db/open.js';
import { cachedStatement } from '../../db/statements.js';
import type { transferSchema } from './harvestSchemas.js';
import { UPLOAD_MISSING } from '../../sync/protocol.js';
import { RecordRefused, type StationRef } from './records.js';

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
export function storageLocationOf(db: Db, p: z.infer<typeof transferSchema>): number | null {
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
 * file itself: a finished upload of this station for that file, with the same checksum. Without
 * one (a server restored from a backup made before the upload, or a transfer pushed after the
 * finished upload was forgotten, cleanup.ts) the refusal says so by its own code,
 * UPLOAD_MISSING: the station then sends the file again (its upload is `skipped` where the file
 * is still in place) and offers the transfer again once the server has that upload.
 */
export function checkUploaded(
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
      UPLOAD_MISSING,
      `harvest_transfer ${p.uuid}: completed into a server storage location, but this server ` +
        'holds no finished upload of that file with that checksum (restored from a backup?); ' +
        'the station sends the file again',
    );
  }
}
