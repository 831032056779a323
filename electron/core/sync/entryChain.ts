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

/**
 * The refused version a notebook entry's version was made from: the one before it by number and
 * time, still in the outbox, set aside (the partial index outbox_refused), queued before it.
 * `named`: whether it names the one it was made from (null where it went without: a resend,
 * resend.ts queueAgain, or a station from before the field).
 */
export const MADE_FROM_SQL = `SELECT id, json_extract(payload, '$.previous_updated_at') AS previous,
       json_type(payload, '$.previous_updated_at') IS NOT NULL AS named
     FROM outbox
     WHERE record_uuid = ? AND refusals > 0 AND kind = 'notebook_entry' AND id < ?
       AND json_extract(payload, '$.version') = ? AND json_extract(payload, '$.updated_at') = ?
     ORDER BY id DESC LIMIT 1`;

/** The payload of an outbox row as pushed: a notebook entry's as made from what the server may hold. */
export function pushedPayload(
  db: Db,
  row: { id: number; kind: string; record_uuid: string; payload: string },
): Record<string, unknown> {
  const payload = JSON.parse(row.payload) as Record<string, unknown>;
  if (row.kind !== 'notebook_entry') return payload;
  const madeFrom = cachedStatement(db, MADE_FROM_SQL);
  let previous = payload.previous_updated_at;
  let named = 'previous_updated_at' in payload;
  let version = Number(payload.version);
  let below = row.id;
  while (named && typeof previous === 'string') {
    const refused = madeFrom.get(row.record_uuid, below, version - 1, previous) as
      { id: number; previous: string | null; named: number } | undefined;
    if (refused === undefined) break;
    below = refused.id;
    version -= 1;
    previous = refused.previous;
    named = refused.named === 1;
  }
  if (!named) {
    const sent = { ...payload };
    delete sent.previous_updated_at;
    return sent;
  }
  return previous === payload.previous_updated_at
    ? payload
    : { ...payload, previous_updated_at: previous };
}
