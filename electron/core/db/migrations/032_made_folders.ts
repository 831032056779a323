import type { Migration } from '../migrations.js';

export const migration032: Migration = {
  version: 32,
  name: "an attempt's marker names the destination folders it made, for recovery to take back",
  sql: `
      -- Station side. A station killed while a copy is under way leaves the destination folders
      -- that copy's check made (the template's {yyyy}/{mm}/{dd}/...); the restart removes the
      -- partial, and takes those folders back too once empty (harvest/recovery.ts
      -- recoverInterrupted). made_folders is written with partial_path, in the same UPDATE: a
      -- JSON array of paths, outermost first; null when the check made none.
      ALTER TABLE harvest_files ADD COLUMN made_folders TEXT;
    `,
};
