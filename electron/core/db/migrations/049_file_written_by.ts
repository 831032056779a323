import type { Migration } from '../migrations.js';

export const migration049: Migration = {
  version: 49,
  name: 'the station whose version of a file record the server holds',
  sql: `
      -- Server side: which station pushed the version of each file record held
      -- (sync/harvestWriters.ts fileWriter). Once the station that runs the record's instrument
      -- now has written it, the station that made the record, which ran the instrument before,
      -- no longer does: its late versions (a failure retried offline, or its clock ahead) had
      -- put a file the new station completed back to failed. NULL: written before this column,
      -- or on a station.
      ALTER TABLE harvest_files ADD COLUMN written_by INTEGER REFERENCES stations(id)
        ON DELETE SET NULL;
  `,
};
