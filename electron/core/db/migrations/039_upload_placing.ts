import type { Migration } from '../migrations.js';

export const migration039: Migration = {
  version: 39,
  name: 'an upload marks the name it is placed at before its link',
  sql: `
      -- Server side: the name a verified upload is being placed at (server/uploads/placement.ts),
      -- written before the link. A server stopped between the link and the record finds the
      -- file there when the upload is asked for again (resumed, superseded, swept): recorded
      -- completed at that name, not sent again and taken for a skip, nor left without a record.
      ALTER TABLE harvest_uploads ADD COLUMN placing_path TEXT;
    `,
};
