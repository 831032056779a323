import type { Migration } from '../migrations.js';

export const migration012: Migration = {
  version: 12,
  name: "a station finds files by a part of their path through an index of the path's trigrams",
  sql: `
      -- Station side: "Find a file" (harvest.files search) looks for a part of the path below
      -- the watched folder. LIKE '%text%' reads every record (0.17 s at a million files, and
      -- the Data tab asks again at each change); this index of the paths' trigrams, without
      -- case, gives the few records that can hold the text. Its text is harvest_files' own
      -- (external content): the index only. Records are indexed in bulk, after they are made
      -- (records.ts indexPaths, as each walk of the harvest starts; a search reads the newer
      -- ones as they are), not by a trigger: FTS5 writes a segment per statement in a trigger,
      -- 45 us per file on the harvest's thread.
      -- A path is never changed and a record never deleted, so the records with an id above
      -- the one noted in harvest_files_path_through are the ones to index. A server's
      -- records are not searched so: not indexed.
      CREATE VIRTUAL TABLE harvest_files_path USING fts5(
        relative_path, content = 'harvest_files', content_rowid = 'id', tokenize = 'trigram'
      );
      CREATE TABLE harvest_files_path_through (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        through INTEGER NOT NULL
      ) STRICT;
      INSERT INTO harvest_files_path (rowid, relative_path)
        SELECT id, relative_path FROM harvest_files
        WHERE (SELECT value FROM settings WHERE key = 'mode') IS NOT '"server"' ORDER BY id;
      INSERT INTO harvest_files_path_through (id, through)
        SELECT 1, CASE WHEN (SELECT value FROM settings WHERE key = 'mode') IS NOT '"server"'
          THEN coalesce(max(id), 0) ELSE 0 END FROM harvest_files;
    `,
};
