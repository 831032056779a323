import type { Migration } from '../migrations.js';

export const migration042: Migration = {
  version: 42,
  name: "the refused versions of a record in the outbox, found by the record's uuid",
  sql: `
      -- Station side: a notebook entry's version names the one it was made from; one made
      -- after versions the server refused goes as made from the last the server may hold
      -- (sync/entryChain.ts), found among the record's refused rows, which are few.
      CREATE INDEX outbox_refused ON outbox(record_uuid) WHERE refusals > 0;
    `,
};
