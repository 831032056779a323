import type { Migration } from '../migrations.js';

export const migration054: Migration = {
  version: 54,
  name: 'search: Greek final sigma folded to sigma in the notebook search text',
  sql: `
      -- searchText lowercased text as JavaScript does, where a capital sigma at a word's end
      -- becomes final sigma (U+03C2) and elsewhere sigma (U+03C3): "ΜΑΣΑ" was kept as "μασα",
      -- and "ΜΑΣ" looked for as "μας", which it does not contain. Both sides now fold final
      -- sigma to sigma; the derived search text written before is folded here, only where it
      -- holds one (its other letters were folded as they are now).
      UPDATE notebook_entries SET title_search = replace(title_search, 'ς', 'σ')
        WHERE instr(title_search, 'ς') > 0;
      UPDATE notebook_search_keys SET title_search = replace(title_search, 'ς', 'σ')
        WHERE instr(title_search, 'ς') > 0;
      UPDATE notebook_metadata_index SET text = replace(text, 'ς', 'σ')
        WHERE instr(text, 'ς') > 0;
      -- Two tags of an entry that now fold alike are one: one of them is kept.
      UPDATE OR IGNORE notebook_tags SET tag_key = replace(tag_key, 'ς', 'σ')
        WHERE instr(tag_key, 'ς') > 0;
      DELETE FROM notebook_tags WHERE instr(tag_key, 'ς') > 0;

      -- The text index is told what goes and what comes (its content is another table).
      CREATE TEMP TABLE folded_lines AS
        SELECT entry_id, text FROM notebook_metadata_lines WHERE instr(text, 'ς') > 0;
      INSERT INTO notebook_metadata_text (notebook_metadata_text, rowid, text)
        SELECT 'delete', entry_id, text FROM folded_lines;
      UPDATE notebook_metadata_lines SET text = replace(text, 'ς', 'σ')
        WHERE entry_id IN (SELECT entry_id FROM folded_lines);
      INSERT INTO notebook_metadata_text (rowid, text)
        SELECT entry_id, replace(text, 'ς', 'σ') FROM folded_lines;
      DROP TABLE folded_lines;
    `,
};
