import type { Migration } from '../migrations.js';

export const migration035: Migration = {
  version: 35,
  name: 'the version of what a pending post-usage form shows, apart from the event’s',
  sql: `
      -- Server side (server/web/handlers.ts, sync/ingest.ts; a station carries it unused). A
      -- form answered on the server is refused when what it showed changed since it was
      -- loaded. The event's version also moves with a validation, and with a station's push
      -- that only acknowledges one, so a person answering the form while staff validated the
      -- event was told to reload it for nothing. It starts at the event's version, so that a
      -- form loaded before the upgrade is still taken.
      ALTER TABLE usage_events ADD COLUMN form_version INTEGER NOT NULL DEFAULT 1;
      UPDATE usage_events SET form_version = version;
    `,
};
