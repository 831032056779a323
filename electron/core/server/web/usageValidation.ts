/**
 * Staff validate a usage event on the server (`usage.validateServer`), as they can at the
 * station (toolControl.validateUsage), from the facility's recent usage (`usage.recent`).
 *
 * Ownership (DESIGN.md, Data and sync): the station that recorded the event owns it; the
 * server only adds staff fields. The validation is stored here at once, with the version
 * bumped, and owed to the station (validation_acked 0) until the station pushes the event back
 * validated; ingest never takes a validation back (server/sync/ingest.ts).
 */
import type { UsageEventView } from '../../../../shared/api.js';
import type { Db } from '../../db/open.js';
import { findUsage, usageView, type UsageRow } from '../../station/records.js';
import { AppError } from '../../util/errors.js';
import { notifyStationOfUsage } from '../harvest/notify.js';
import type { Account } from '../auth.js';

/** The usage event `ref`; an unknown one is refused naming the argument. */
function usageNamed(db: Db, ref: number | string): UsageRow {
  try {
    return findUsage(db, ref);
  } catch (error) {
    if (error instanceof AppError && error.code === 'not_found') {
      throw new AppError('not_found', `usage: ${error.message}`);
    }
    throw error;
  }
}

/**
 * Validates the ended usage event `ref` as `account` (staff or an admin: the carrier checks the
 * role, serverApiAccess in shared/api.ts). One validated already is left as it is, whoever
 * validated it: validating twice is harmless.
 */
export function validateOnServer(
  db: Db,
  account: Account,
  ref: number | string,
  now: string,
): { usage: UsageEventView } {
  const id = db
    .transaction((): number => {
      const usage = usageNamed(db, ref);
      if (usage.end === null) {
        throw new AppError(
          'conflict',
          `usage: usage event ${usage.id} is still active; end it before validating`,
        );
      }
      if (usage.validated === 1) return usage.id;
      db.prepare(
        `UPDATE usage_events SET validated = 1, validated_by_id = ?,
           validated_on_server_at = ?, validated_on_server_by_id = ?,
           validation_acked = CASE WHEN station_id IS NULL THEN 1 ELSE 0 END,
           version = version + 1, updated_at = ?
         WHERE id = ? AND validated = 0`,
      ).run(account.id, now, account.id, now, usage.id);
      // The station that owns the event learns of it in its next pull; this wakes its
      // long-poll now.
      notifyStationOfUsage(db, usage.id);
      return usage.id;
    })
    .immediate();
  return { usage: usageView(db, id) };
}

/**
 * The latest `limit` usage events, newest first: those of the person `userId` (`usage.mine`),
 * or everyone's with null (`usage.recent`, for staff to validate).
 */
export function latestUsage(
  db: Db,
  userId: number | null,
  limit: number,
): { events: UsageEventView[] } {
  // Two statements, not `? IS NULL OR user_id = ?`: each keeps its index (user_id, start).
  const order = 'ORDER BY start DESC, id DESC LIMIT ?';
  const ids = (
    userId === null
      ? db.prepare(`SELECT id FROM usage_events ${order}`).pluck().all(limit)
      : db
          .prepare(`SELECT id FROM usage_events WHERE user_id = ? ${order}`)
          .pluck()
          .all(userId, limit)
  ) as number[];
  return { events: ids.map((id) => usageView(db, id)) };
}

/** The ids of usageToValidate (a test checks its query plan). */
export const TO_VALIDATE_SQL = `SELECT id FROM usage_events WHERE validated = 0 AND "end" IS NOT NULL
  ORDER BY start DESC, id DESC LIMIT ?`;

/**
 * The latest `limit` ended usage events that nobody has validated, newest first (`usage.recent`
 * with `to_validate`): a facility validates most of its usage, so these are few among many, and
 * a partial index of them (migration 34) finds them without walking the validated ones.
 */
export function usageToValidate(db: Db, limit: number): { events: UsageEventView[] } {
  const ids = db.prepare(TO_VALIDATE_SQL).pluck().all(limit) as number[];
  return { events: ids.map((id) => usageView(db, id)) };
}
