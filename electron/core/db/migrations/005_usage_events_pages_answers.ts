import type { Migration } from '../migrations.js';

export const migration005: Migration = {
  version: 5,
  name: 'usage events: tool pages in id order, active events per station, answers given on the server',
  sql: `
      -- SQLite keeps (tool_id, id) order in an index on tool_id alone, so a tool's pages in the
      -- default id order seek and stop after one page instead of sorting every event of the
      -- tool (BENCHMARKS.md: 22.6 ms -> about 1 ms at page 400 of a 50,000-event tool).
      CREATE INDEX usage_events_tool ON usage_events(tool_id);

      -- One active usage per tool is the rule of a station, which records its own events
      -- (station_id null). The server holds the events of every station: two stations on one
      -- tool, or a re-imaged PC whose last event never ended, may each have one open there.
      DROP INDEX usage_events_one_active;
      CREATE UNIQUE INDEX usage_events_one_active ON usage_events(tool_id)
        WHERE "end" IS NULL AND station_id IS NULL;
      CREATE INDEX usage_events_active ON usage_events(tool_id, "end") WHERE "end" IS NULL;

      -- Server side. A station owns its events; the server adds only the answers of a pending
      -- post-usage form. station_version is the last version the station pushed (its own
      -- counter, so a resend is recognised); version counts every change the server stores,
      -- for the optimistic check of forms answered on the server. answer_acked is 0 while the
      -- station has not yet pushed the answers given here back as its own.
      ALTER TABLE usage_events ADD COLUMN station_version INTEGER;
      ALTER TABLE usage_events ADD COLUMN answered_on_server_at TEXT;
      ALTER TABLE usage_events ADD COLUMN answered_on_server_by_id INTEGER REFERENCES users(id);
      ALTER TABLE usage_events ADD COLUMN answer_acked INTEGER NOT NULL DEFAULT 1
        CHECK (answer_acked IN (0, 1));
      UPDATE usage_events SET station_version = version WHERE station_id IS NOT NULL;
      -- Answers given on the server before this version bumped version once and were never
      -- sent to the station. An event that had a pending-answers mail and is answered now may
      -- be one of them: it is treated as answered here (the station is sent the answers; if it
      -- had answered itself, it finds them the same and only confirms), and its station_version
      -- is taken one lower, so the station's next push is not mistaken for a resend.
      UPDATE usage_events
        SET answered_on_server_at = updated_at, answer_acked = 0,
          station_version = max(version - 1, 1)
        WHERE station_id IS NOT NULL AND post_usage_pending = 0 AND "end" IS NOT NULL
          AND EXISTS (SELECT 1 FROM mail_outbox m
            WHERE m.usage_event_id = usage_events.id AND m.kind = 'pending_answers');
      CREATE INDEX usage_events_answers_owed ON usage_events(station_id) WHERE answer_acked = 0;

      -- Every tool a station was registered for, so records it made for a former tool, still
      -- waiting in its outbox, are taken; records for any other tool are refused.
      CREATE TABLE station_tools (
        station_id INTEGER NOT NULL REFERENCES stations(id) ON DELETE CASCADE,
        tool_id INTEGER NOT NULL REFERENCES tools(id) ON DELETE CASCADE,
        PRIMARY KEY (station_id, tool_id)
      ) STRICT, WITHOUT ROWID;
      INSERT OR IGNORE INTO station_tools (station_id, tool_id)
        SELECT id, tool_id FROM stations WHERE tool_id IS NOT NULL;
      INSERT OR IGNORE INTO station_tools (station_id, tool_id)
        SELECT DISTINCT station_id, tool_id FROM usage_events WHERE station_id IS NOT NULL;
      CREATE TRIGGER stations_tools_insert AFTER INSERT ON stations WHEN NEW.tool_id IS NOT NULL
      BEGIN
        INSERT OR IGNORE INTO station_tools (station_id, tool_id) VALUES (NEW.id, NEW.tool_id);
      END;
      CREATE TRIGGER stations_tools_update AFTER UPDATE OF tool_id ON stations
        WHEN NEW.tool_id IS NOT NULL
      BEGIN
        INSERT OR IGNORE INTO station_tools (station_id, tool_id) VALUES (NEW.id, NEW.tool_id);
      END;
    `,
};
