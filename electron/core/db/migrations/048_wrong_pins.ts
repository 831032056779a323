import type { Migration } from '../migrations.js';

export const migration048: Migration = {
  version: 48,
  name: 'wrong PINs across logins lock log-on at the station',
  sql: `
      -- Station side: every wrong PIN of the last day, for the station's lock across logins
      -- (station/logon.ts stationWide). login_failures keeps one count per login, set back to
      -- 0 by that login's own lock: guesses, login after login, never added up there.
      -- A right PIN removes its login's rows of the minutes before (typos that end in it count
      -- for nothing); rows older than the day are removed at the next wrong PIN.
      CREATE TABLE wrong_pins (
        id INTEGER PRIMARY KEY,
        login_key TEXT NOT NULL,
        at TEXT NOT NULL
      ) STRICT;
      CREATE INDEX wrong_pins_at ON wrong_pins(at);
      CREATE INDEX wrong_pins_login ON wrong_pins(login_key, at);
  `,
};
