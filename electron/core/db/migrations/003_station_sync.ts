import type { Migration } from '../migrations.js';
import { changeTriggers } from './shared.js';

export const migration003: Migration = {
  version: 3,
  name: 'station sync: config change log, station origin of pushed records, client state',
  sql: `
      -- Server side: every change to what stations need gets a sequence number; a station pulls
      -- the records named since its cursor. A data dir in station mode logs nothing.
      CREATE TABLE sync_changes (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        entity TEXT NOT NULL CHECK (entity IN ('user', 'project', 'tool', 'station')),
        uuid TEXT
      ) STRICT;
      ${changeTriggers('users', 'user', 'ROW.uuid', 'username, email, first_name, last_name, badge_number, pin_hash, is_staff, is_active')}
      ${changeTriggers('projects', 'project', 'ROW.uuid', 'name, application_identifier, active')}
      ${changeTriggers('tools', 'tool', 'ROW.uuid', 'name, pre_usage_questions, post_usage_questions, category, operational, visible')}
      ${changeTriggers('user_projects', 'user', '(SELECT uuid FROM users WHERE id = ROW.user_id)', null)}
      ${changeTriggers('qualifications', 'user', '(SELECT uuid FROM users WHERE id = ROW.user_id)', null)}
      CREATE TRIGGER stations_sync_update AFTER UPDATE OF name, tool_id, enabled ON stations
      BEGIN
        INSERT INTO sync_changes (entity, uuid) VALUES ('station', NEW.uuid);
      END;

      -- Which station pushed a record (null: made on the server itself).
      ALTER TABLE usage_events ADD COLUMN station_id INTEGER REFERENCES stations(id);
      ALTER TABLE problem_reports ADD COLUMN station_id INTEGER REFERENCES stations(id);
      ALTER TABLE problem_reports ADD COLUMN resolved_by_id INTEGER REFERENCES users(id);
      ALTER TABLE consumable_withdrawals ADD COLUMN station_id INTEGER REFERENCES stations(id);

      -- Station side: the sync client's own state (the config cursor).
      CREATE TABLE sync_state (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
      ) STRICT;
    `,
};
