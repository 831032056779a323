/**
 * A tool's shutdown as the server holds it (NEMO's `operational`): it follows the problem
 * reports the stations push, and staff may end it on the server too (clearShutdownOnServer), as
 * at the station: the reports are resolved here and owed to the stations that made them, which
 * take them at their next pull (FacilityDelta.resolutions) and push them back resolved.
 */
import type { Db } from '../../db/open.js';
import { cachedStatement } from '../../db/statements.js';
import type { SyncResolution } from '../../sync/protocol.js';
import { AppError } from '../../util/errors.js';
import { notifyStations } from '../harvest/notify.js';

/** Shut down while a report that forced it is unresolved, since the oldest such report. */
export function refreshShutdown(db: Db, toolId: number): void {
  const open = cachedStatement(
    db,
    `SELECT description, created_at FROM problem_reports
     WHERE tool_id = ? AND force_shutdown = 1 AND resolved_at IS NULL
     ORDER BY created_at LIMIT 1`,
  ).get(toolId) as { description: string; created_at: string } | undefined;
  cachedStatement(
    db,
    `UPDATE tools SET shutdown = @shutdown, shutdown_reason = @reason, shutdown_since = @since
     WHERE id = @id AND (shutdown, shutdown_reason, coalesce(shutdown_since, ''))
       IS NOT (@shutdown, @reason, coalesce(@since, ''))`,
  ).run({
    id: toolId,
    shutdown: open ? 1 : 0,
    reason: open?.description ?? '',
    since: open?.created_at ?? null,
  });
}

/**
 * Brings tool `toolId` back into service on the server, by `byId` (staff or an admin: the
 * carrier checks the role): every report that shut it down and is unresolved is resolved now,
 * and owed to the station that made it. How many reports that resolved (0: it was not shut
 * down, which is no error, as at the station).
 */
export function clearShutdownOnServer(db: Db, toolId: number, byId: number, now: string): number {
  return db
    .transaction((): number => {
      if (!cachedStatement(db, 'SELECT 1 FROM tools WHERE id = ?').get(toolId)) {
        throw new AppError('not_found', `tool: no tool with id ${toolId}`);
      }
      const open = cachedStatement(
        db,
        `SELECT id, station_id FROM problem_reports
         WHERE tool_id = ? AND force_shutdown = 1 AND resolved_at IS NULL`,
      ).all(toolId) as { id: number; station_id: number | null }[];
      const resolve = cachedStatement(
        db,
        `UPDATE problem_reports SET resolved_at = ?, resolved_by_id = ?,
           resolution_acked = CASE WHEN station_id IS NULL THEN 1 ELSE 0 END
         WHERE id = ?`,
      );
      for (const report of open) resolve.run(now, byId, report.id);
      refreshShutdown(db, toolId);
      // Each station that made one hears of it now (its held long-poll wakes).
      notifyStations(
        db,
        open.map((r) => r.station_id),
      );
      return open.length;
    })
    .immediate();
}

/** Reports of this station's resolved on the server, not yet pushed back resolved by it. */
export function resolutionsOwed(db: Db, stationId: number): SyncResolution[] {
  return cachedStatement(
    db,
    `SELECT r.uuid AS report_uuid, r.resolved_at, u.uuid AS resolved_by_uuid
     FROM problem_reports r LEFT JOIN users u ON u.id = r.resolved_by_id
     WHERE r.station_id = ? AND r.resolution_acked = 0 AND r.resolved_at IS NOT NULL
     ORDER BY r.id`,
  ).all(stationId) as SyncResolution[];
}
