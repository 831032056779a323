import type { Migration } from '../migrations.js';

export const migration050: Migration = {
  version: 50,
  name: "the outbox's rows found by their record, counted from an index",
  sql: `
      -- Station side: an outbox that waits for a server holds three rows per harvested file
      -- (about 700 bytes each). Without an index, every look for a record's queued version
      -- (station/outbox.ts usageQueued, sync/heldRecords.ts) and every count of what waits
      -- (the sync badge's status, every 5 s while the UI is open) read the whole table on the
      -- thread that serves the UI and records files: with 600,000 rows, 80 to 330 ms each.
      -- The first index makes those looks a search and gives the counts a b-tree a twelfth
      -- the size to walk; the second holds only the refused rows (sync/client.ts state).
      CREATE INDEX outbox_record ON outbox(kind, record_uuid);
      CREATE INDEX outbox_refusal ON outbox(id) WHERE refusal IS NOT NULL;
    `,
};
