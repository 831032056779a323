import type { Migration } from '../migrations.js';

export const migration022: Migration = {
  version: 22,
  name: 'records the server took are kept a while, to send again to a server restored from a backup',
  // Station side: an outbox row the server acknowledged moves here with its payload (same
  // id) instead of going at once, and stays for sync.keepSentDays. A server restored from a
  // backup answers a count below ids kept here: the newest version of each of those records
  // goes back to the outbox (sync/resend.ts).
  sql: `
      CREATE TABLE outbox_sent (
        id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL,
        record_uuid TEXT NOT NULL,
        payload TEXT NOT NULL,
        created_at TEXT NOT NULL,
        acked_at TEXT NOT NULL
      ) STRICT;
      CREATE INDEX outbox_sent_acked ON outbox_sent(acked_at);
      CREATE INDEX outbox_sent_record ON outbox_sent(record_uuid, kind);
    `,
};
