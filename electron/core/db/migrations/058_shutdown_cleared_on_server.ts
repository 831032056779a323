import type { Migration } from '../migrations.js';

export const migration058: Migration = {
  version: 58,
  name: 'problem reports resolved on the server',
  sql: `
      -- Staff may bring a tool back on the server (tools.clearShutdownServer) as at its station:
      -- a report's shutdown whose station was replaced or is offline held the tool "not
      -- operational" for good. A report resolved there is owed to the station that made it
      -- (0) until the station pushes it back resolved, as a validation given on the server is.
      ALTER TABLE problem_reports
        ADD COLUMN resolution_acked INTEGER NOT NULL DEFAULT 1 CHECK (resolution_acked IN (0, 1));
    `,
};
