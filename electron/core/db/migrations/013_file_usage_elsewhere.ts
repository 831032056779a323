import type { Migration } from '../migrations.js';

export const migration013: Migration = {
  version: 13,
  name: "a station keeps the usage of a file from an instrument's history made elsewhere",
  sql: `
      -- Station side: a file record of an instrument's history (sync/history.ts) made on
      -- another station names a usage event this station does not hold, so usage_event_id is
      -- NULL. The server sends that usage's usage_context with the record; it is kept here as
      -- JSON, and stands for the usage where the file's own usage would (the destination
      -- template's {user}, {project} and {usage_event}, the usage_context hook, the usage
      -- event's uuid pushed back to the server, the Data tab). NULL on every other record.
      ALTER TABLE harvest_files ADD COLUMN usage_elsewhere TEXT;
    `,
};
