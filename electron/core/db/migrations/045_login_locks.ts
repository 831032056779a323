import type { Migration } from '../migrations.js';

export const migration045: Migration = {
  version: 45,
  name: 'login locks that grow',
  sql: `
      -- Station side: the locks a login has had since its last right PIN. Each lock lasts
      -- twice as long as the one before (station/logon.ts), so five guesses every few minutes
      -- no longer go on for days; a right PIN clears the row, and with it the count.
      ALTER TABLE login_failures ADD COLUMN locks INTEGER NOT NULL DEFAULT 0 CHECK (locks >= 0);
  `,
};
