import type { Migration } from '../migrations.js';

export const migration024: Migration = {
  version: 24,
  name: 'search: Unicode forms folded (NFC) in the notebook and file search indexes',
  sql: `
      -- Searches now compare text composed (NFC) on both sides: "é" typed composed finds "e"
      -- + U+0301 (as macOS writes names) and the other way round. The derived search text
      -- written before (searchText: lowercased only; the path index: the path as it is) is
      -- folded here, only where it changes: nothing is rewritten for text already composed,
      -- which is almost all of it. nfc() is the function open.ts registers.
      UPDATE notebook_entries SET title_search = nfc(title_search)
        WHERE title_search <> nfc(title_search);
      UPDATE notebook_search_keys SET title_search = nfc(title_search)
        WHERE title_search <> nfc(title_search);
      UPDATE notebook_metadata_index SET text = nfc(text) WHERE text <> nfc(text);
      -- A tag written twice, in two forms, is one tag now: one of them is kept (the key is
      -- (entry_id, tag_key); two forms that are both not composed, combining marks in another
      -- order, fold to one key too).
      UPDATE OR IGNORE notebook_tags SET tag_key = nfc(tag_key) WHERE tag_key <> nfc(tag_key);
      DELETE FROM notebook_tags WHERE tag_key <> nfc(tag_key);

      -- The text indexes are told what goes and what comes (their content is another table).
      CREATE TEMP TABLE folded_lines AS
        SELECT entry_id, text FROM notebook_metadata_lines WHERE text <> nfc(text);
      INSERT INTO notebook_metadata_text (notebook_metadata_text, rowid, text)
        SELECT 'delete', entry_id, text FROM folded_lines;
      UPDATE notebook_metadata_lines SET text = nfc(text)
        WHERE entry_id IN (SELECT entry_id FROM folded_lines);
      INSERT INTO notebook_metadata_text (rowid, text)
        SELECT entry_id, nfc(text) FROM folded_lines;
      DROP TABLE folded_lines;

      -- The station's path index (migration 12) holds each path composed from now on (records.ts
      -- indexPaths), while harvest_files keeps the path as the file system gave it.
      CREATE TEMP TABLE folded_paths AS
        SELECT id, relative_path FROM harvest_files
        WHERE id <= (SELECT through FROM harvest_files_path_through)
          AND relative_path <> nfc(relative_path);
      INSERT INTO harvest_files_path (harvest_files_path, rowid, relative_path)
        SELECT 'delete', id, relative_path FROM folded_paths;
      INSERT INTO harvest_files_path (rowid, relative_path)
        SELECT id, nfc(relative_path) FROM folded_paths;
      DROP TABLE folded_paths;
    `,
};
