import type { Migration } from '../migrations.js';

export const migration038: Migration = {
  version: 38,
  name: 'a Retry asked for starts the backoff of the failures that follow it over',
  sql: `
      -- Station side: a file's attempts when someone last asked for it to be retried (Retry,
      -- Retry all; harvest/records.ts retryNow). The backoff after a failure counts the
      -- attempts since, so a Retry that fails again (the share is still half set up, say) is
      -- tried again after the first step, not the hour its earlier failures had come to; the
      -- attempts shown stay all of them.
      ALTER TABLE harvest_files ADD COLUMN retried_at_attempts INTEGER NOT NULL DEFAULT 0;
    `,
};
