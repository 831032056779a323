import type { Migration } from '../migrations.js';

export const migration034: Migration = {
  version: 34,
  name: 'the ended usage events still to validate, newest first, found by an index of them alone',
  sql: `
      -- Server side (the server's web page asks it: server/web/usageValidation.ts
      -- usageToValidate; a station carries it unused). A facility validates most of its
      -- usage; staff asking for the ended events nobody has validated yet would otherwise walk
      -- every event, newest first, past the validated ones.
      CREATE INDEX usage_events_to_validate ON usage_events(start, id)
        WHERE validated = 0 AND "end" IS NOT NULL;
    `,
};
