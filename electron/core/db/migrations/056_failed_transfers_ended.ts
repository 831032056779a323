import type { Migration } from '../migrations.js';

export const migration056: Migration = {
  version: 56,
  name: "today's transfers found by when they ended",
  sql: `
      -- Today's failed files are counted by when their attempt ended (harvest/status.ts
      -- FAILED_SINCE_QUERY), as completed ones are: one that started before midnight and failed
      -- after it is today's. Found through this index, which holds the file too, from today's
      -- endings alone: by the start index taken back a day, every failure of yesterday was
      -- read as well (27 ms a status, read each second, after a day of a share down). The
      -- columns of the expression are held too, so that the index alone answers.
      CREATE INDEX harvest_transfers_failed_ended
        ON harvest_transfers(coalesce(completed_at, started_at), file_id, completed_at,
          started_at)
        WHERE status = 'failed';
      -- Likewise those completed and skipped, which were found by their start taken back a
      -- day, reading every transfer of yesterday (28 ms with a day of failures); with what the
      -- totals read, so that the index alone answers.
      CREATE INDEX harvest_transfers_ended
        ON harvest_transfers(completed_at, status, from_server, bytes_transferred)
        WHERE status IN ('completed', 'skipped');
    `,
};
