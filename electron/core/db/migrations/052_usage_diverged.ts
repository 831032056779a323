import type { Migration } from '../migrations.js';

export const migration052: Migration = {
  version: 52,
  name: "a usage event's history that a station's restored data dir made differ",
  sql: `
      -- Server side: the station version of a usage event that its station pushed with other
      -- content than the server holds at that version (its data dir restored from a backup,
      -- the event changed again). Refused then; its later versions continue that other history
      -- and are refused too (server/sync/ingest.ts), so the server keeps its own, and the
      -- station keeps holding what that history recorded (withdrawals, reports) for staff.
      ALTER TABLE usage_events ADD COLUMN diverged_version INTEGER;
    `,
};
