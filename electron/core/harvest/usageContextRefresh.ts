/**
 * The `usage_context` of a usage's files, taken again when the usage changes. The hook runs
 * when a file's transfer ends, which is mostly while its usage is still in progress: before its
 * end, its post-usage answers (which come first: experiment_title, samples) or the experiments
 * linked to it. Each change of the usage at this station (toolControl.ts, pendingForms.ts,
 * usageEnd.ts, serverValidations.ts: every one queues the usage, station/outbox.ts
 * enqueueUsage) and each change of an experiment linked to it (notebook/entries.ts) gives its
 * files the context as it is now, and sends them to the server again.
 */
import type { Db } from '../db/open.js';
import { cachedStatement } from '../db/statements.js';
import { nowIso } from '../util/ids.js';
import { METADATA_MAX_BYTES } from './metadataLimit.js';
import { enqueueFile, NEXT_UPDATED_AT } from './records.js';
import { usageContextOf } from './usageContext.js';

/**
 * Gives each file recorded during usage `usageEventId` whose metadata_ holds a usage_context
 * (its instrument's usage_context hook ran) the usage's context as it is now, where it differs;
 * answers how many. In the caller's transaction.
 */
export function refreshUsageContexts(db: Db, usageEventId: number): number {
  // Most usages have no file with a context: one indexed look (migration 55) and no more.
  const ids = cachedStatement(
    db,
    `SELECT id FROM harvest_files
       WHERE usage_event_id = ? AND json_valid(metadata_)
         AND json_type(metadata_, '$.usage_context') IS NOT NULL`,
  )
    .pluck()
    .all(usageEventId) as number[];
  if (ids.length === 0) return 0;
  const context = JSON.stringify(usageContextOf(db, usageEventId));
  // Not past the most a record may hold (its experiments' metadata grew): the context it has,
  // which fit, is kept, as a hook's output past it is left out; one past it would never reach
  // the server.
  const update = cachedStatement(
    db,
    `UPDATE harvest_files SET metadata_ = json_set(metadata_, '$.usage_context', json(?)),
       updated_at = ${NEXT_UPDATED_AT}
     WHERE id = ? AND metadata_ -> '$.usage_context' IS NOT json(?)
       AND length(CAST(json_set(metadata_, '$.usage_context', json(?)) AS BLOB)) <= ?`,
  );
  let changed = 0;
  const now = nowIso();
  for (const id of ids) {
    const run = update.run(context, now, id, context, context, METADATA_MAX_BYTES);
    if (run.changes === 0) continue;
    enqueueFile(db, id);
    changed += 1;
  }
  return changed;
}
