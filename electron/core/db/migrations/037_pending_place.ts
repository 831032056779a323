import type { Migration } from '../migrations.js';

export const migration037: Migration = {
  version: 37,
  name: 'a verified copy marked before it is placed keeps its storage location and note',
  sql: `
      -- Station side, beside verified_hash and pending_destination (migration 6): the storage
      -- location the copy went to (a pre-transfer hook may have sent it to another than the
      -- instrument's) and the note its transfer record gets (written under another name,
      -- redirected by a hook), for a copy a crash left at its name to be recorded as it would
      -- have been (harvest/recovery.ts).
      ALTER TABLE harvest_files ADD COLUMN pending_location_id INTEGER;
      ALTER TABLE harvest_files ADD COLUMN pending_note TEXT;
    `,
};
