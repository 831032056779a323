/**
 * Problem reports of this station's resolved on the server (the delta's `resolutions`,
 * sync/protocol.ts SyncResolution): staff brought the tool back there (usage.clearShutdownServer)
 * as they would at the station. The report is resolved here too, the tool back in service once
 * no report that shut it down is open, and the report queued: its push, resolved, tells the
 * server the station has it (until then every delta sends it again).
 */
import type { Db } from '../db/open.js';
import { cachedStatement } from '../db/statements.js';
import { enqueueProblemReport } from './answerEffects.js';
import { findTool } from './records.js';

const REPORT_QUEUED_SQL = "SELECT 1 FROM outbox WHERE kind = 'problem_report' AND record_uuid = ?";

/**
 * Takes one resolution. Returns the tool's name when something changed; null when the report is
 * unknown here, or resolved here with its push on its way (a delta sent again before it
 * arrived). One resolved here already keeps who resolved it here and is queued again, as the
 * server waits for it.
 */
export function adoptServerResolution(
  db: Db,
  resolution: { report_uuid: string; resolved_at: string; resolved_by_uuid: string | null },
  now: string,
): { tool: string } | null {
  return db
    .transaction((): { tool: string } | null => {
      const uuid = resolution.report_uuid.toLowerCase();
      const report = db
        .prepare(
          'SELECT id, tool_id, resolved_at, resolved_by_id FROM problem_reports WHERE uuid = ?',
        )
        .get(uuid) as
        | { id: number; tool_id: number; resolved_at: string | null; resolved_by_id: number | null }
        | undefined;
      if (!report) return null;
      if (report.resolved_at !== null && cachedStatement(db, REPORT_QUEUED_SQL).get(uuid)) {
        return null;
      }
      let by = report.resolved_by_id;
      if (report.resolved_at === null) {
        by =
          resolution.resolved_by_uuid === null
            ? null
            : ((db
                .prepare('SELECT id FROM users WHERE uuid = ?')
                .pluck()
                .get(resolution.resolved_by_uuid.toLowerCase()) as number | undefined) ?? null);
        db.prepare(
          'UPDATE problem_reports SET resolved_at = ?, resolved_by_id = ? WHERE id = ?',
        ).run(resolution.resolved_at, by, report.id);
      }
      enqueueProblemReport(db, report.id, by);
      const stillOpen = db
        .prepare(
          `SELECT 1 FROM problem_reports
           WHERE tool_id = ? AND force_shutdown = 1 AND resolved_at IS NULL`,
        )
        .get(report.tool_id);
      if (!stillOpen) {
        db.prepare(
          `UPDATE tools SET shutdown = 0, shutdown_reason = '', shutdown_since = NULL,
             updated_at = ? WHERE id = ? AND shutdown = 1`,
        ).run(now, report.tool_id);
      }
      return { tool: findTool(db, report.tool_id).name };
    })
    .immediate();
}
