/**
 * Uploads that stations gave up on: a station that comes back within the age resumes where it
 * stopped; after it, the bytes go. Finished records are kept a while longer, so a station that
 * missed the answer gets it again (after that, a retry finds the file there and is `skipped`).
 */
import type { Db } from '../../db/open.js';
import { nowIso } from '../../util/ids.js';
import type { Logger } from '../../util/log.js';
import type { UploadReceiver } from './receive.js';
import { deleteUpload, serverLocations, staleUploads } from './store.js';

export const ABANDONED_AFTER_MS = 7 * 24 * 3600_000;
export const FINISHED_KEPT_MS = 30 * 24 * 3600_000;

export async function sweepUploads(
  deps: { db: Db; log: Logger; receiver: UploadReceiver },
  options: { now?: number; abandonedAfterMs?: number; finishedKeptMs?: number } = {},
): Promise<{ dropped: number; forgotten: number; orphans: number }> {
  const { db, receiver } = deps;
  const now = options.now ?? Date.now();
  const abandoned = now - (options.abandonedAfterMs ?? ABANDONED_AFTER_MS);
  const finished = now - (options.finishedKeptMs ?? FINISHED_KEPT_MS);
  let dropped = 0;
  let forgotten = 0;
  for (const row of staleUploads(
    db,
    nowIso(() => abandoned),
    nowIso(() => finished),
  )) {
    if (row.state !== 'receiving') {
      deleteUpload(db, row.uuid);
      forgotten += 1;
    } else if (!receiver.isBusy(row.uuid)) {
      // Placed or gone meanwhile (a request at work on it came first): not dropped here.
      if ((await receiver.drop(row)) === 'dropped') dropped += 1;
    }
  }
  const orphans = await receiver.removeOrphans(serverLocations(db), abandoned);
  if (dropped || orphans) {
    deps.log.info({ dropped, orphans }, 'uploads: removed abandoned partial files');
  }
  return { dropped, forgotten, orphans };
}
