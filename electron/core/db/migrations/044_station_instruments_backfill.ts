import type { Migration } from '../migrations.js';

export const migration044: Migration = {
  version: 44,
  name: 'station_instruments for instruments assigned before migration 7',
  sql: `
      -- Server side: migration 7 made station_instruments and its triggers but took none of
      -- the instruments already assigned to a station, so a server upgraded from version 6
      -- refused the harvest records of the very station that ran them. Taken here; on any
      -- other database the triggers have made these rows already and this adds nothing.
      INSERT OR IGNORE INTO station_instruments (station_id, instrument_id)
        SELECT station_id, id FROM instruments WHERE station_id IS NOT NULL;
  `,
};
