import type { Migration } from '../migrations.js';

const NOW = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')";

export const migration051: Migration = {
  version: 51,
  name: "a station's rights to a former tool or instrument end once it has taken the move",
  sql: `
      -- Server side: station_tools and station_instruments let a station write records of a
      -- tool or instrument it ran before (records made then may still wait in its outbox), and
      -- they did so for good: a key of a station moved elsewhere, or of a PC replaced and never
      -- disabled, could go on writing new usage (billed) and file records for them. Now each
      -- right that ended says when (ended_at, server time), and learned_at says when the
      -- station first asked for changes with its configuration current, so having applied the
      -- move (server/sync/formerRights.ts). A record it made after that is refused; until then
      -- everything it made is taken (a station offline knows nothing of the move).
      ALTER TABLE station_tools ADD COLUMN ended_at TEXT;
      ALTER TABLE station_tools ADD COLUMN learned_at TEXT;
      ALTER TABLE station_instruments ADD COLUMN ended_at TEXT;
      ALTER TABLE station_instruments ADD COLUMN learned_at TEXT;

      -- The rights that ended before this version: when is not known; the station's next pull
      -- with its configuration current starts their count.
      UPDATE station_tools SET ended_at = ${NOW}
        WHERE NOT EXISTS (SELECT 1 FROM stations s
          WHERE s.id = station_tools.station_id AND s.tool_id = station_tools.tool_id);
      -- An instrument with no station (registered from a station's own records, unassigned)
      -- stays the right of the station that registered it.
      UPDATE station_instruments SET ended_at = ${NOW}
        WHERE EXISTS (SELECT 1 FROM instruments i WHERE i.id = station_instruments.instrument_id
          AND i.station_id IS NOT NULL AND i.station_id <> station_instruments.station_id);

      DROP TRIGGER stations_tools_update;
      CREATE TRIGGER stations_tools_update AFTER UPDATE OF tool_id ON stations
        WHEN OLD.tool_id IS NOT NEW.tool_id
      BEGIN
        UPDATE station_tools SET ended_at = ${NOW}, learned_at = NULL
          WHERE station_id = NEW.id AND tool_id = OLD.tool_id AND ended_at IS NULL;
        INSERT INTO station_tools (station_id, tool_id)
          SELECT NEW.id, NEW.tool_id WHERE NEW.tool_id IS NOT NULL
          ON CONFLICT DO UPDATE SET ended_at = NULL, learned_at = NULL;
      END;

      DROP TRIGGER instruments_station_update;
      CREATE TRIGGER instruments_station_update AFTER UPDATE OF station_id ON instruments
        WHEN OLD.station_id IS NOT NEW.station_id
      BEGIN
        UPDATE station_instruments SET ended_at = ${NOW}, learned_at = NULL
          WHERE instrument_id = NEW.id AND station_id IS NOT NEW.station_id AND ended_at IS NULL;
        INSERT INTO station_instruments (station_id, instrument_id)
          SELECT NEW.station_id, NEW.id WHERE NEW.station_id IS NOT NULL
          ON CONFLICT DO UPDATE SET ended_at = NULL, learned_at = NULL;
      END;
    `,
};
