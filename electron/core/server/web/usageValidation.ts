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
import { findTool, findUsage, usageView, type UsageRow } from '../../station/records.js';
import { AppError } from '../../util/errors.js';
import { notifyStationOfUsage } from '../harvest/notify.js';
import type { Account } from '../auth.js';

/** What `find` finds; a record it does not find is refused naming the argument `name`. */
function namedBy<T>(name: string, find: () => T): T {
  try {
    return find();
  } catch (error) {
    if (error instanceof AppError && error.code === 'not_found') {
      throw new AppError('not_found', `${name}: ${error.message}`);
    }
    throw error;
  }
}

/** The usage event `ref`; an unknown one is refused naming the argument. */
function usageNamed(db: Db, ref: number | string): UsageRow {
  return namedBy('usage', () => findUsage(db, ref));
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

/** The latest `limit` usage events of the person `userId`, newest first (`usage.mine`). */
export function latestUsage(db: Db, userId: number, limit: number): { events: UsageEventView[] } {
  const ids = db
    .prepare(`SELECT id FROM usage_events WHERE user_id = ? ORDER BY start DESC, id DESC LIMIT ?`)
    .pluck()
    .all(userId, limit) as number[];
  return { events: ids.map((id) => usageView(db, id)) };
}

/** What staff narrow everyone's recent usage to (`usage.recent`). */
export interface RecentFilters {
  /** Only the ended events nobody has validated yet. */
  toValidate?: boolean;
  /** Only the usage of this tool. */
  toolId?: number;
  /** Page further back: the events after this one in the list's order (older). */
  beforeId?: number;
}

/**
 * The SQL of recentUsage for these filters (a test checks their query plans). Each combination
 * is a statement of its own, so that each keeps its index: the partial one of the events left
 * to validate (migration 34; a facility validates most of its usage, so these are few among
 * many), the tool's (tool_id, start). One statement with `? IS NULL OR ...` would keep none.
 * A page further back starts after the (start, id) of the event it follows.
 */
export function recentUsageSql(filters: RecentFilters): string {
  const where: string[] = [];
  // With toValidate, `+` keeps the tool's index out: the partial index of the events left to
  // validate finds the tool's among the few, where the tool's would walk its whole history.
  if (filters.toolId !== undefined) {
    where.push(filters.toValidate ? '+tool_id = @toolId' : 'tool_id = @toolId');
  }
  if (filters.toValidate) where.push('validated = 0 AND "end" IS NOT NULL');
  if (filters.beforeId !== undefined) where.push('(start, id) < (@beforeStart, @beforeId)');
  const clause = where.length ? `WHERE ${where.join(' AND ')} ` : '';
  return `SELECT id FROM usage_events ${clause}ORDER BY start DESC, id DESC LIMIT @limit`;
}

/**
 * The latest `limit` usage events of everyone, newest first, narrowed by `filters`
 * (`usage.recent`, for staff to validate). A tool or an event to page from that does not
 * exist is refused, naming the argument.
 */
export function recentUsage(
  db: Db,
  limit: number,
  filters: RecentFilters = {},
): { events: UsageEventView[] } {
  const params: Record<string, unknown> = { limit };
  const { toolId, beforeId } = filters;
  if (toolId !== undefined) {
    params.toolId = namedBy('tool_id', () => findTool(db, toolId)).id;
  }
  if (beforeId !== undefined) {
    params.beforeStart = namedBy('before_id', () => findUsage(db, beforeId)).start;
    params.beforeId = beforeId;
  }
  const ids = db.prepare(recentUsageSql(filters)).pluck().all(params) as number[];
  return { events: ids.map((id) => usageView(db, id)) };
}

/** Every tool by name, for staff to narrow the facility's usage to one (`usage.tools`). */
export function toolNames(db: Db): { tools: { id: number; name: string }[] } {
  const tools = db.prepare('SELECT id, name FROM tools ORDER BY name COLLATE NOCASE, id').all() as {
    id: number;
    name: string;
  }[];
  return { tools };
}
