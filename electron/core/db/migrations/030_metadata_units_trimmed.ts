import type { Migration } from '../migrations.js';

export const migration030: Migration = {
  version: 30,
  name: "notebook search: number fields' units indexed without the spaces around them",
  sql: `
      -- Both sides. A number range's unit is indexed and looked for without the white space
      -- around it (unitKey trims, shared/metadata/search.ts), as the search panel sends it: the
      -- units indexed before, folded by migration 29, are trimmed of the characters
      -- String.prototype.trim takes (listed here, SQL's trim() takes spaces alone), only those
      -- that change; a unit of spaces alone is none (NULL, as an empty one is indexed). The
      -- entries keep their units as written.
      CREATE TEMP TABLE js_trim_spaces AS SELECT char(9, 10, 11, 12, 13, 32, 160, 5760, 8192,
        8193, 8194, 8195, 8196, 8197, 8198, 8199, 8200, 8201, 8202, 8232, 8233, 8239, 8287, 12288,
        65279) AS spaces;
      UPDATE notebook_metadata_index
        SET unit = nullif(trim(unit, (SELECT spaces FROM js_trim_spaces)), '')
        WHERE unit <> trim(unit, (SELECT spaces FROM js_trim_spaces));
      DROP TABLE js_trim_spaces;
    `,
};
