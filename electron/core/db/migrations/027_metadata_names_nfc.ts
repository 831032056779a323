import type { Migration } from '../migrations.js';

export const migration027: Migration = {
  version: 27,
  name: 'notebook search: field names folded (NFC) as their values are',
  sql: `
      -- Both sides. A metadata condition looks for its field's name composed (NFC) from now on
      -- (fieldKey, shared/metadata/search.ts), as it did the value since migration 24: the
      -- names indexed before are folded, only those not composed. nfc() is open.ts's.
      UPDATE notebook_metadata_index SET name = nfc(name) WHERE name <> nfc(name);
    `,
};
