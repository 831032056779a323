import type { Migration } from '../migrations.js';

export const migration029: Migration = {
  version: 29,
  name: "notebook search: number fields' units folded (NFC, the micro sign as mu) as their names are",
  sql: `
      -- Both sides. A number range's unit is indexed and looked for composed (NFC), the micro
      -- sign U+00B5 written as the Greek mu U+03BC (unitKey, shared/metadata/search.ts), as the
      -- field's name is since migration 27: the units indexed before are folded the same way,
      -- only those that change (the entries keep their unit as written). nfc() is open.ts's.
      UPDATE notebook_metadata_index SET unit = replace(nfc(unit), char(181), char(956))
        WHERE unit <> replace(nfc(unit), char(181), char(956));
    `,
};
