import type { Migration } from '../migrations.js';

export const migration041: Migration = {
  version: 41,
  name: 'a transfer record taken from the server is told apart from those made here',
  sql: `
      -- Station side: 1 for a transfer another station made, taken with its instrument's history
      -- (sync/history.ts). The Data tab's totals for today count the copies made here only: an
      -- instrument moved to this station at noon brought the morning's copies of the other one.
      -- Rows made before this count as made here; a server's rows all have 0.
      ALTER TABLE harvest_transfers ADD COLUMN from_server INTEGER NOT NULL DEFAULT 0
        CHECK (from_server IN (0, 1));
    `,
};
