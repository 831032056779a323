import type { Migration } from '../migrations.js';

export const migration057: Migration = {
  version: 57,
  name: 'answers a station gave to a form answered on the server first',
  sql: `
      -- A post-usage form left pending (a usage force-ended) may be answered on the server and,
      -- while the station is offline, at the station too. The server's answers are kept (the
      -- first to reach it), and the station takes them at its next pull; the station's, free
      -- text and all, were dropped without a trace. On the server, this holds the station's
      -- answers (JSON text, as run_data) that were not kept, for staff to read; null when none.
      ALTER TABLE usage_events ADD COLUMN station_answers_not_kept TEXT;
    `,
};
