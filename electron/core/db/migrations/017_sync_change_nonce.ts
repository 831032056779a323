import type { Migration } from '../migrations.js';

export const migration017: Migration = {
  version: 17,
  name: 'each change a station pulls has a nonce its mark covers',
  sql: `
      -- Server side: a station sends back the mark of the change its cursor names
      -- (sync/export.ts changeMark). A server restored from a backup numbers its changes on
      -- from the backup's last one, and may well change the same record at the same number
      -- again (an edit lost with the restore, made again): only a random nonce tells the two
      -- changes apart. Filled in by a trigger, so every writer of changes (the triggers of
      -- migration 3 and after) gives one.
      ALTER TABLE sync_changes ADD COLUMN nonce TEXT;
      UPDATE sync_changes SET nonce = lower(hex(randomblob(8)));
      CREATE TRIGGER sync_changes_nonce AFTER INSERT ON sync_changes WHEN NEW.nonce IS NULL
      BEGIN
        UPDATE sync_changes SET nonce = lower(hex(randomblob(8))) WHERE seq = NEW.seq;
      END;
    `,
};
