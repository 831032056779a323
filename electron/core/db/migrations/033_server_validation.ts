import type { Migration } from '../migrations.js';

export const migration033: Migration = {
  version: 33,
  name: 'usage events validated on the server, sent to the station until it pushes them back',
  sql: `
      -- Server side. Staff may validate an ended usage event on the server as well as at the
      -- station; like the answers of migration 5 the validation is the server's to add, and the
      -- station that owns the event is sent it until it pushes the event back validated.
      -- validated_on_server_at / _by_id say when and by whom it was given here;
      -- validation_acked is 0 while the station has not pushed it back as its own.
      ALTER TABLE usage_events ADD COLUMN validated_on_server_at TEXT;
      ALTER TABLE usage_events ADD COLUMN validated_on_server_by_id INTEGER REFERENCES users(id);
      ALTER TABLE usage_events ADD COLUMN validation_acked INTEGER NOT NULL DEFAULT 1
        CHECK (validation_acked IN (0, 1));
      CREATE INDEX usage_events_validations_owed ON usage_events(station_id)
        WHERE validation_acked = 0;
    `,
};
