import type { Migration } from '../migrations.js';

export const migration025: Migration = {
  version: 25,
  name: 'a report of a run or a deployment says when the station made it, so a late one does not undo a newer',
  sql: `
      -- Both sides. A station stamps each report of a run (of a schedule's deployment) it
      -- queues with the moment it made it, always after its last one of that record (as
      -- harvest_files.updated_at); the server keeps the stamp of the last report it applied,
      -- and one older than that (set aside and offered again, sent again after a cut) is kept
      -- out as stale instead of setting newer progress back. Null: no report yet, or reports
      -- of a station too old to stamp them (taken as before).
      ALTER TABLE harvest_runs ADD COLUMN reported_at TEXT;
      ALTER TABLE harvest_schedules ADD COLUMN deployment_reported_at TEXT;
    `,
};
