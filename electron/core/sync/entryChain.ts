/**
 * A notebook entry's version names the version it was made from (`previous_updated_at`), by
 * which the server tells a change of what it holds from one of a data dir restored from a
 * backup (ingestNotebook.ts). A version the server refused (set aside in the outbox) never
 * reached it, so the versions made after it go as made from the one before it, back to a
 * version the server may hold. Without that, the server refused every version after the first
 * it refused (a usage link its rules do not allow, say), the one that mends it too, and the
 * entry never reached the server again.
 */
import type { Db } from '../db/open.js';
import { cachedStatement } from '../db/statements.js';

/** The payload of an outbox row as pushed: a notebook entry's as made from what the server may hold. */
export function pushedPayload(
  db: Db,
  row: { id: number; kind: string; record_uuid: string; payload: string },
): Record<string, unknown> {
  const payload = JSON.parse(row.payload) as Record<string, unknown>;
  if (row.kind !== 'notebook_entry') return payload;
  const madeFrom = cachedStatement(
    db,
    // The refused version this one was made from: still in the outbox, set aside (the partial
    // index outbox_refused), queued before it.
    `SELECT id, json_extract(payload, '$.previous_updated_at') AS previous FROM outbox
     WHERE record_uuid = ? AND refusals > 0 AND kind = 'notebook_entry' AND id < ?
       AND json_extract(payload, '$.updated_at') = ?
     ORDER BY id DESC LIMIT 1`,
  );
  let previous = payload.previous_updated_at;
  // By id, down: two versions saved within a millisecond share their updated_at.
  let below = row.id;
  while (typeof previous === 'string') {
    const refused = madeFrom.get(row.record_uuid, below, previous) as
      { id: number; previous: string | null } | undefined;
    if (refused === undefined) break;
    ({ id: below, previous } = refused);
  }
  return previous === payload.previous_updated_at
    ? payload
    : { ...payload, previous_updated_at: previous };
}
