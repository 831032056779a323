/**
 * How a usage ends, which tool control (disabling, force-ending: toolControl.ts) and the effects
 * of answers (a shutdown ends the tool's active usage: answerEffects.ts) share; here so that
 * neither of those imports the other.
 */
import type { Db } from '../db/open.js';
import { enqueueUsage } from './outbox.js';
import { toolInfo, type ToolRow, type UsageRow } from './records.js';

export function endAtOrAfter(usage: UsageRow, now: string): string {
  return now < usage.start ? usage.start : now;
}

export function forceEndInTransaction(
  db: Db,
  tool: ToolRow,
  active: UsageRow,
  byUserId: number | null,
  now: string,
): void {
  const pending = toolInfo(tool).post_usage_questions.length > 0 ? 1 : 0;
  db.prepare(
    `UPDATE usage_events SET "end" = ?, run_data = ?, post_usage_pending = ?, reminder_due = ?,
       force_ended_by_id = ?, version = version + 1, updated_at = ?
     WHERE id = ?`,
  ).run(endAtOrAfter(active, now), pending ? '' : '{}', pending, pending, byUserId, now, active.id);
  enqueueUsage(db, active.id);
}
