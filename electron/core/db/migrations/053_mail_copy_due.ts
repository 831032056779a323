import type { Migration } from '../migrations.js';

export const migration053: Migration = {
  version: 53,
  name: "the operator's copy of a sent mail, tried again when its mail server said try later",
  sql: `
      -- Server side: a mail whose user has it (sent) may still owe the operator's copy, which
      -- goes in an envelope of its own: its mail server answered "try later" (4xx) or could not
      -- be reached. copy_due: when it is tried again (NULL: nothing owed); copy_attempts: its
      -- tries that failed; copy_error: why the last one did.
      ALTER TABLE mail_outbox ADD COLUMN copy_due TEXT;
      ALTER TABLE mail_outbox ADD COLUMN copy_attempts INTEGER NOT NULL DEFAULT 0
        CHECK (copy_attempts >= 0);
      ALTER TABLE mail_outbox ADD COLUMN copy_error TEXT;
      CREATE INDEX mail_outbox_copy_due ON mail_outbox(copy_due, id) WHERE copy_due IS NOT NULL;
    `,
};
