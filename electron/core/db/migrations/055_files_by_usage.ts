import type { Migration } from '../migrations.js';

export const migration055: Migration = {
  version: 55,
  name: 'file records found by the usage they were made during',
  sql: `
      -- An experiment record lists the files its usage's station linked to it (server/nemo/
      -- experiments.ts), not those first seen during it by a station clock that may have been
      -- set back; the API reads a page of 100 records at a time, each by this index.
      CREATE INDEX harvest_files_usage ON harvest_files(usage_event_id)
        WHERE usage_event_id IS NOT NULL;
    `,
};
