/**
 * The reservation part of a station's delta: every reservation of the station's tool that has
 * not ended, its own and those of areas holding the tool, sent whole so the station replaces its
 * copy (no deletions to track: a cancelled or moved reservation is simply no longer listed).
 */
import type { Db } from '../../db/open.js';
import type { SyncReservation } from '../../sync/protocol.js';
import { HOLDS_TOOL_SQL } from '../reservations/book.js';

/** More than any tool is booked ahead; the earliest first. */
export const MAX_SYNCED_RESERVATIONS = 500;

/**
 * Whether the list may differ from the one sent at `cursor`: a reservation of this tool (or of
 * an area holding it) changed, an area changed (its tools may have), a name the list shows
 * (person, project, tool) changed, or this station's binding. Bookings of other tools do not
 * count: every station would otherwise get its whole list again at each booking anywhere.
 */
export function reservationsChangedSince(
  db: Db,
  station: { uuid: string; tool_id: number | null },
  cursor: number,
): boolean {
  return (
    db
      .prepare(
        `SELECT 1 FROM sync_changes c WHERE c.seq > @cursor AND (
           (c.entity = 'station' AND c.uuid = @station)
           OR c.entity IN ('user', 'project', 'tool', 'area')
           OR (c.entity = 'reservation' AND EXISTS (
             SELECT 1 FROM reservations r WHERE r.uuid = c.uuid AND ${HOLDS_TOOL_SQL})))
         LIMIT 1`,
      )
      .get({ cursor, station: station.uuid, tool: station.tool_id }) !== undefined
  );
}

const SELECT = `SELECT r.uuid, r.id, t.uuid AS tool_uuid, a.name AS area_name,
    coalesce(t.name, a.name) AS target_name, u.uuid AS user_uuid, u.username AS user_name,
    c.uuid AS creator_uuid, p.uuid AS project_uuid, p.name AS project_name,
    r.start, r."end" AS "end", r.question_data
  FROM reservations r
  JOIN users u ON u.id = r.user_id
  JOIN users c ON c.id = r.creator_id
  LEFT JOIN projects p ON p.id = r.project_id
  LEFT JOIN tools t ON t.id = r.tool_id
  LEFT JOIN areas a ON a.id = r.area_id`;

export function stationReservations(db: Db, toolId: number | null, now: string): SyncReservation[] {
  if (toolId === null) return [];
  return db
    .prepare(
      `${SELECT}
       WHERE r.cancelled = 0 AND r."end" > @now
         AND ${HOLDS_TOOL_SQL}
       ORDER BY r.start, r.id LIMIT ${MAX_SYNCED_RESERVATIONS}`,
    )
    .all({ tool: toolId, now }) as SyncReservation[];
}

/** One reservation in the delta's shape (a booking made from a station, answered at once). */
export function syncedReservation(db: Db, id: number): SyncReservation {
  return db.prepare(`${SELECT} WHERE r.id = ?`).get(id) as SyncReservation;
}
