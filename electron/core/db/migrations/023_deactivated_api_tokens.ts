import type { Migration } from '../migrations.js';

export const migration023: Migration = {
  version: 23,
  name: 'a person turned off loses their API tokens, so turning them on again does not revive them',
  sql: `
      -- Server side: as the logins of migration 16, the API tokens of a person who is turned
      -- off end then, not only while the account is off: a token handed to a script or taken
      -- from one does not come back when the account is turned on again (an admin makes a new
      -- one). A trigger, so every writer (the admin pages, an imported bundle) counts.
      DELETE FROM api_tokens WHERE user_id IN (SELECT id FROM users WHERE is_active = 0);
      CREATE TRIGGER users_deactivated_api_tokens AFTER UPDATE OF is_active ON users
        WHEN OLD.is_active = 1 AND NEW.is_active = 0
      BEGIN
        DELETE FROM api_tokens WHERE user_id = NEW.id;
      END;
    `,
};
