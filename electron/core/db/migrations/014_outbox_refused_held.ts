import type { Migration } from '../migrations.js';

export const migration014: Migration = {
  version: 14,
  name: 'a station sets aside a record its server refused, so the rest still goes',
  sql: `
      -- Station side: a pushed record the server refuses (a person or project it does not
      -- hold, a rule it applies) no longer holds back every record queued after it. It waits
      -- until held_until (NULL: due), longer after each refusal (refusals), or until the
      -- facility changes when the server lacked something it names (refusal_code
      -- unknown_reference); refusal says why.
      ALTER TABLE outbox ADD COLUMN held_until TEXT;
      ALTER TABLE outbox ADD COLUMN refusal TEXT;
      ALTER TABLE outbox ADD COLUMN refusal_code TEXT;
      ALTER TABLE outbox ADD COLUMN refusals INTEGER NOT NULL DEFAULT 0;
    `,
};
