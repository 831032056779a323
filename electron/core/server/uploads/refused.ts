/**
 * A station refused from now on (its service account deleted or disabled, its key replaced)
 * cannot finish an upload: its unfinished ones go with the change that refuses it, not a week
 * later with the abandoned ones (cleanup.ts). Finished uploads stay, as do their files.
 *
 * A replaced key drops them too, though the station may come back with the new key: the
 * server cannot tell bytes its station sent under the old key from bytes sent by whoever else
 * held it (the reasons to replace a key: lost, leaked, used by another Labstation), and a
 * resumed upload is checked only by its XXH3, not a cryptographic hash. Nothing stored is
 * lost: the station still holds its source, and each attempt opens its upload again (POST),
 * from byte 0 once it was dropped. A refusal while a body streams drops its upload the same way
 * (receive.ts dropIfRefused).
 */
import type { Db } from '../../db/open.js';
import { removeQuietly } from '../../harvest/place.js';
import { deleteUnfinishedInto, deleteUnfinishedOf, uploadByUuid, type UploadRow } from './store.js';

/**
 * Called by what refuses the station, in its transaction: the records go with the change, the
 * partial files once the caller's synchronous work is done (its transaction committed). A
 * request still writing one of them meets the refusal at its next check and removes what it
 * wrote (receive.ts); a partial whose removal fails is an orphan, for the cleanup.
 */
export function dropUploadsOfRefused(db: Db, stationId: number): void {
  const dropped = deleteUnfinishedOf(db, stationId);
  if (dropped.length === 0) return;
  setImmediate(() => void removePartials(db, dropped));
}

/**
 * A storage location deleted: its unfinished uploads go with it, as a refused station's do.
 * Otherwise their records went by the cascade and their partials stayed for good (the cleanup
 * walks the locations there are). Their stations open them again where their instruments now
 * store.
 */
export function dropUploadsInto(db: Db, locationId: number): void {
  const dropped = deleteUnfinishedInto(db, locationId);
  if (dropped.length === 0) return;
  setImmediate(() => void removePartials(db, dropped));
}

async function removePartials(db: Db, dropped: UploadRow[]): Promise<void> {
  for (const row of dropped) {
    try {
      // The change rolled back (it threw after this ran): its record counts on the partial.
      if (uploadByUuid(db, row.uuid)) continue;
      await removeQuietly(row.partial_path);
    } catch {
      // The database closed meanwhile, or the file could not go: the cleanup finds it.
    }
  }
}
