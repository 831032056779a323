import type { Migration } from '../migrations.js';

export const migration019: Migration = {
  version: 19,
  name: 'a record the server refused for lacking another waits for that one',
  sql: `
      -- Station side: a pushed record refused because the server lacks a record it names
      -- (unknown_reference with PushError.missing: its usage, its file) waits for that record
      -- by its uuid, and is offered again as soon as the server has acknowledged it, instead
      -- of at its hold's end (sync/client.ts). NULL on every other row.
      ALTER TABLE outbox ADD COLUMN waits_for TEXT;
      CREATE INDEX outbox_waits_for ON outbox(waits_for) WHERE waits_for IS NOT NULL;
    `,
};
