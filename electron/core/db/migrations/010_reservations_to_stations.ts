import type { Migration } from '../migrations.js';
import { changeTriggers } from './shared.js';

export const migration010: Migration = {
  version: 10,
  name: 'reservations to stations: reservation and area changes logged, the station copy',
  sql: `
      -- Server side: the change log learns two more entities. SQLite cannot change a CHECK in
      -- place, so the table is rebuilt with its rows and its AUTOINCREMENT position (stations
      -- hold cursors into it). The triggers of migration 3 name the table, not its old
      -- definition: legacy renaming leaves them as they are, and they write to the new table.
      PRAGMA legacy_alter_table = ON;
      CREATE TABLE sync_changes_new (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        entity TEXT NOT NULL
          CHECK (entity IN ('user', 'project', 'tool', 'station', 'reservation', 'area')),
        uuid TEXT
      ) STRICT;
      INSERT INTO sync_changes_new (seq, entity, uuid) SELECT seq, entity, uuid FROM sync_changes;
      DELETE FROM sqlite_sequence WHERE name = 'sync_changes_new';
      INSERT INTO sqlite_sequence (name, seq)
        SELECT 'sync_changes_new', seq FROM sqlite_sequence WHERE name = 'sync_changes';
      DROP TABLE sync_changes;
      ALTER TABLE sync_changes_new RENAME TO sync_changes;
      PRAGMA legacy_alter_table = OFF;
      ${changeTriggers('reservations', 'reservation', 'ROW.uuid', 'user_id, project_id, tool_id, area_id, start, "end", cancelled, question_data')}
      ${changeTriggers('areas', 'area', 'ROW.uuid', 'name')}
      ${changeTriggers('area_tools', 'area', '(SELECT uuid FROM areas WHERE id = ROW.area_id)', null)}

      -- Station side: the reservations of the station's tool (its own and those of areas
      -- holding it) that had not ended at the last pull, as the server sent them; each delta
      -- that carries reservations replaces them all. Names are copied so the list reads offline.
      CREATE TABLE station_reservations (
        uuid TEXT PRIMARY KEY,
        server_id INTEGER NOT NULL,
        tool_uuid TEXT,
        area_name TEXT,
        target_name TEXT NOT NULL,
        user_uuid TEXT NOT NULL,
        user_name TEXT NOT NULL,
        creator_uuid TEXT NOT NULL,
        project_uuid TEXT,
        project_name TEXT,
        start TEXT NOT NULL,
        "end" TEXT NOT NULL,
        question_data TEXT NOT NULL DEFAULT ''
      ) STRICT, WITHOUT ROWID;
      CREATE INDEX station_reservations_end ON station_reservations("end", start);
    `,
};
