import type { Migration } from '../migrations.js';

export const migration045: Migration = {
  version: 45,
  name: 'login locks that grow',
  sql: `
      -- Station side: the locks a login has had since its last right PIN. Each lock lasts
      -- twice as long as the one before (station/logon.ts), so five guesses every few minutes
      -- no longer go on for days; a right PIN clears the row, and with it the count, and so
      -- do two days without a wrong one.
      ALTER TABLE login_failures ADD COLUMN locks INTEGER NOT NULL DEFAULT 0 CHECK (locks >= 0);
      -- A new PIN (set by an admin, synced from the server) lifts the lock and its count:
      -- someone kept out by another's wrong guesses gets back in with it.
      CREATE TRIGGER users_pin_changed_unlocks AFTER UPDATE OF pin_hash ON users
        WHEN NEW.pin_hash IS NOT OLD.pin_hash
      BEGIN
        DELETE FROM login_failures WHERE login_key = 'user:' || NEW.id;
      END;
  `,
};
