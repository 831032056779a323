import type { Migration } from '../migrations.js';

export const migration026: Migration = {
  version: 26,
  name: "an index of failed transfers by start, for the status's files failed today",
  sql: `
      -- Both sides (a station counts them). The status, read every second while files are
      -- copied, counts the files that failed today and are failed still: from today's failed
      -- transfers (this index, which holds the file too), each file then read by its id,
      -- instead of every failed file, however old, looked up among its transfers.
      CREATE INDEX harvest_transfers_failed ON harvest_transfers(started_at, file_id)
        WHERE status = 'failed';
    `,
};
