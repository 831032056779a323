import type { Migration } from '../migrations.js';

export const migration016: Migration = {
  version: 16,
  name: 'a password changed or an account deactivated ends the logins made before',
  sql: `
      -- Server side: a JWT carries the account's credentials_version when it was made
      -- (server/auth.ts); a new password, or the account turned off, counts it up, and the
      -- tokens made before no longer authenticate (an admin resetting a taken-over account
      -- cuts the taker's session; a re-activated account does not revive old logins). A
      -- trigger, so every writer (the admin pages, an imported bundle) counts.
      ALTER TABLE users ADD COLUMN credentials_version INTEGER NOT NULL DEFAULT 0;
      CREATE TRIGGER users_credentials_version AFTER UPDATE OF password_hash, is_active ON users
        WHEN NEW.password_hash IS NOT OLD.password_hash
          OR (OLD.is_active = 1 AND NEW.is_active = 0)
      BEGIN
        UPDATE users SET credentials_version = OLD.credentials_version + 1 WHERE id = NEW.id;
      END;
    `,
};
