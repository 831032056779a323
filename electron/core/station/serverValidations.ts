/**
 * Validations given by staff on the server for this station's events (the delta's
 * `validations`, sync/protocol.ts SyncValidation). The station owns its events and pushes
 * them; the server only adds the validation, and sends it in every delta until the station
 * pushes the event back validated, which is what tells the server the station has it.
 */
import type { Db } from '../db/open.js';
import { enqueueUsage, usageQueued } from './outbox.js';
import { findTool, type UsageRow } from './records.js';

/**
 * Marks one of this station's events validated as the server says, by the person named (null
 * when this station does not know them: the event is validated all the same), version bumped
 * and queued in one transaction. An event validated here already keeps who validated it here:
 * the server takes the station's word on that. Returns the tool's name when something changed;
 * null when the event is unknown, still active here, or validated with its push on its way (a
 * delta sent again before that push arrived).
 */
export function adoptServerValidation(
  db: Db,
  validation: { usage_uuid: string; validated_by_uuid: string | null },
  now: string,
): { tool: string } | null {
  return db
    .transaction((): { tool: string } | null => {
      const usage = db
        .prepare('SELECT * FROM usage_events WHERE uuid = ?')
        .get(validation.usage_uuid.toLowerCase()) as UsageRow | undefined;
      if (!usage || usage.end === null) return null;
      if (usage.validated === 1 && usageQueued(db, usage.uuid)) return null;
      const by =
        validation.validated_by_uuid === null
          ? null
          : ((db
              .prepare('SELECT id FROM users WHERE uuid = ?')
              .pluck()
              .get(validation.validated_by_uuid.toLowerCase()) as number | undefined) ?? null);
      // Validated here and pushed already, yet still sent: the push may have crossed this
      // delta. It goes again with a new version, so the server cannot take it for a resend.
      db.prepare(
        `UPDATE usage_events SET validated = 1,
           validated_by_id = CASE WHEN validated = 1 THEN validated_by_id ELSE ? END,
           version = version + 1, updated_at = ?
         WHERE id = ?`,
      ).run(by, now, usage.id);
      enqueueUsage(db, usage.id);
      return { tool: findTool(db, usage.tool_id).name };
    })
    .immediate();
}
