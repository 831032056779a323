import type { Db } from '../db/open.js';
import { cachedStatement } from '../db/statements.js';
import { refreshUsageContexts } from '../harvest/usageContextRefresh.js';
import { nowIso } from '../util/ids.js';

export type OutboxKind =
  | 'usage_event'
  | 'problem_report'
  | 'consumable_withdrawal'
  | 'harvest_file'
  | 'harvest_transfer'
  | 'harvest_deployment'
  | 'harvest_run'
  | 'notebook_entry';

/**
 * Queues a record for the server in the caller's transaction (transactional outbox). The
 * payload names related records by UUID, which is what the server upserts by.
 */
export function enqueue(db: Db, kind: OutboxKind, recordUuid: string, payload: object): void {
  cachedStatement(
    db,
    'INSERT INTO outbox (kind, record_uuid, payload, created_at) VALUES (?, ?, ?, ?)',
  ).run(kind, recordUuid, JSON.stringify(payload), nowIso());
}

/** A search of the outbox's index on kind and record_uuid (migration 50). */
export const USAGE_QUEUED_SQL =
  "SELECT 1 FROM outbox WHERE kind = 'usage_event' AND record_uuid = ?";

/** Whether a push of the usage event `uuid` waits in the outbox (sent, not yet acknowledged). */
export function usageQueued(db: Db, uuid: string): boolean {
  return cachedStatement(db, USAGE_QUEUED_SQL).get(uuid) !== undefined;
}

export function enqueueUsage(db: Db, usageId: number): void {
  const row = db
    .prepare(
      `SELECT e.uuid, u.uuid AS user_uuid, o.uuid AS operator_uuid, p.uuid AS project_uuid,
         t.uuid AS tool_uuid, v.uuid AS validated_by_uuid, f.uuid AS force_ended_by_uuid,
         e.start, e."end", e.validated, e.remote_work, e.pre_run_data, e.run_data,
         e.post_usage_pending, e.reminder_due, e.version
       FROM usage_events e
       JOIN users u ON u.id = e.user_id JOIN users o ON o.id = e.operator_id
       JOIN projects p ON p.id = e.project_id JOIN tools t ON t.id = e.tool_id
       LEFT JOIN users v ON v.id = e.validated_by_id LEFT JOIN users f ON f.id = e.force_ended_by_id
       WHERE e.id = ?`,
    )
    .get(usageId) as { uuid: string } & Record<string, unknown>;
  enqueue(db, 'usage_event', row.uuid, row);
  // Its files' usage_context, taken while it was in progress, follows it (ended, answered).
  refreshUsageContexts(db, usageId);
}
