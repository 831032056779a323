import type { Migration } from '../migrations.js';

export const migration020: Migration = {
  version: 20,
  name: "a station's key is held by the one Labstation that uses it",
  sql: `
      -- Server side: the data dir (its id, sync/identity.ts) and host that last used the key,
      -- and when. Another one is refused while that one is in use (server/sync/stationAuth.ts);
      -- a new key (admin) lets the next one take it. NULL until a station sends them.
      ALTER TABLE stations ADD COLUMN install_id TEXT;
      ALTER TABLE stations ADD COLUMN install_host TEXT;
      ALTER TABLE stations ADD COLUMN install_seen_at TEXT;
    `,
};
