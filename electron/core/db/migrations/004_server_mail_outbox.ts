import type { Migration } from '../migrations.js';

export const migration004: Migration = {
  version: 4,
  name: 'server mail outbox: pending-answers notices and reminders',
  sql: `
      -- Server side: every e-mail is written here first (in the transaction of the record that
      -- causes it), then delivered by the mail worker with retry. One mail of each kind per
      -- usage event at most: a re-pushed event cannot queue a second notice or reminder.
      CREATE TABLE mail_outbox (
        id INTEGER PRIMARY KEY,
        uuid TEXT NOT NULL UNIQUE,
        kind TEXT NOT NULL,
        usage_event_id INTEGER REFERENCES usage_events(id) ON DELETE SET NULL,
        "to" TEXT NOT NULL,
        cc TEXT NOT NULL DEFAULT '',
        subject TEXT NOT NULL,
        text TEXT NOT NULL,
        html TEXT,
        status TEXT NOT NULL DEFAULT 'queued'
          CHECK (status IN ('queued', 'sent', 'failed', 'cancelled')),
        attempts INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
        next_attempt_at TEXT NOT NULL,
        last_error TEXT,
        created_at TEXT NOT NULL,
        sent_at TEXT,
        UNIQUE (usage_event_id, kind)
      ) STRICT;
      -- The worker's queue: due mails in order.
      CREATE INDEX mail_outbox_due ON mail_outbox(next_attempt_at, id) WHERE status = 'queued';
    `,
};
