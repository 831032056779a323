import type { Migration } from '../migrations.js';

export const migration047: Migration = {
  version: 47,
  name: "a sidecar harvested after its file's transfer ended is merged into that file's record",
  sql: `
      -- Station side: the records a sidecar harvested since may describe (lateSidecars.ts).
      -- Noted in the transaction that records the sidecar, removed once its keys are merged
      -- into the record (or the record's own hooks, yet to run, will read it): a crash between
      -- the two leaves the row, and the next start merges.
      -- times counts the sidecars recorded for the record since the note was made: a merge
      -- under way over an earlier one lets go of the note only if none came meanwhile.
      CREATE TABLE harvest_late_sidecars (
        file_id INTEGER PRIMARY KEY REFERENCES harvest_files(id),
        noted_at TEXT NOT NULL,
        times INTEGER NOT NULL DEFAULT 1 CHECK (times >= 1)
      ) STRICT;
  `,
};
