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

/**
 * Ends, as staff force-ending would (answers pending, reminder due), each usage still in
 * progress at this station on another tool than `tool`, the station's tool from now on. Moved
 * to another tool (a bundle, the server), the station's screen shows only that one: a usage of
 * the tool it left could be ended by no one there, nor by the idle rule, and would bill on
 * without end. A tool renamed is the same tool: its usage goes on; a tool not known here ends
 * nothing. Run it in the transaction that changes the station's tool; returns the UUIDs of the
 * usages it ended.
 */
export function endUsageOfToolsLeft(db: Db, tool: string, now: string): string[] {
  const left = db
    .prepare(
      `SELECT * FROM usage_events
       WHERE "end" IS NULL AND tool_id <> (SELECT id FROM tools WHERE name = ?)`,
    )
    .all(tool) as UsageRow[];
  for (const usage of left) {
    const row = db.prepare('SELECT * FROM tools WHERE id = ?').get(usage.tool_id) as ToolRow;
    forceEndInTransaction(db, row, usage, null, now);
  }
  return left.map((usage) => usage.uuid);
}
