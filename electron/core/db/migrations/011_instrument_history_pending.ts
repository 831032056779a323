import type { Migration } from '../migrations.js';

export const migration011: Migration = {
  version: 11,
  name: 'an instrument given to a station takes the file records made before',
  sql: `
      -- Station side: instruments the server gave this station whose earlier file records
      -- (made on another station, or on this one before its data dir was made anew) it has not
      -- fetched yet. Their files are not harvested until it has, or they would get new ARKs.
      CREATE TABLE harvest_history_pending (
        instrument_id INTEGER PRIMARY KEY REFERENCES instruments(id) ON DELETE CASCADE,
        -- The server's id of the last file record taken: fetching goes on from there.
        after INTEGER NOT NULL DEFAULT 0
      ) STRICT;
    `,
};
