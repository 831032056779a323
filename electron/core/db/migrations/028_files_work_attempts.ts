import type { Migration } from '../migrations.js';

export const migration028: Migration = {
  version: 28,
  name: "the files' work index holds their attempts, for the failure list's version",
  sql: `
      -- Both sides. The status's failures_version (harvest/records.ts), read every second while
      -- files are copied, sums the failed files' attempts too, so that a file failing again is
      -- seen where its next try comes out as it was (one not retried by itself): read from
      -- this index alone, as it was before without the attempts.
      DROP INDEX harvest_files_work;
      CREATE INDEX harvest_files_work ON harvest_files(state, next_attempt_at, attempts);
    `,
};
