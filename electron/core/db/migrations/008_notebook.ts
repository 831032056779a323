import type { Migration } from '../migrations.js';

export const migration008: Migration = {
  version: 8,
  name: 'notebook: entries and templates, their tags, and the derived metadata search tables',
  sql: `
      -- Experiments, items and their templates (spec 001). metadata is the document in
      -- Labstation's form (toNotebook) or null; problems holds what its values break (never a
      -- structural problem: those are refused). Deleted entries are kept and synced as deleted.
      -- Server side: station_id is the station that pushed the entry (null: made here), and
      -- version the station's own counter (a resend is recognised, an older push is stale).
      CREATE TABLE notebook_entries (
        id INTEGER PRIMARY KEY,
        uuid TEXT NOT NULL UNIQUE,
        kind TEXT NOT NULL
          CHECK (kind IN ('experiment', 'item', 'experiment_template', 'item_template')),
        title TEXT NOT NULL,
        -- searchText(title): "title contains" ignores case beyond ASCII, as the metadata does.
        title_search TEXT NOT NULL,
        body TEXT NOT NULL DEFAULT '',
        tags TEXT NOT NULL DEFAULT '[]',
        metadata TEXT,
        problems TEXT NOT NULL DEFAULT '[]',
        field_count INTEGER NOT NULL DEFAULT 0,
        owner_id INTEGER NOT NULL REFERENCES users(id),
        template_id INTEGER REFERENCES notebook_entries(id),
        usage_event_id INTEGER REFERENCES usage_events(id),
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        version INTEGER NOT NULL DEFAULT 1 CHECK (version >= 1),
        deleted_at TEXT,
        station_id INTEGER REFERENCES stations(id),
        CHECK (usage_event_id IS NULL OR kind = 'experiment')
      ) STRICT;
      -- A person's list, newest change first, and every template (readable by everyone).
      CREATE INDEX notebook_entries_owner ON notebook_entries(owner_id, updated_at, id)
        WHERE deleted_at IS NULL;
      CREATE INDEX notebook_entries_kind ON notebook_entries(kind, updated_at, id)
        WHERE deleted_at IS NULL;
      -- The usage_context harvest hook: the experiments attached to a usage event.
      CREATE INDEX notebook_entries_usage ON notebook_entries(usage_event_id)
        WHERE usage_event_id IS NOT NULL;
      CREATE INDEX notebook_entries_template ON notebook_entries(template_id)
        WHERE template_id IS NOT NULL;

      -- Derived from notebook_entries.tags (rewritten with every save; empty for a deleted
      -- entry): the tag filter and the tag counts.
      CREATE TABLE notebook_tags (
        entry_id INTEGER NOT NULL REFERENCES notebook_entries(id) ON DELETE CASCADE,
        tag TEXT NOT NULL,
        -- searchText(tag): tags are one regardless of letter case, beyond ASCII too.
        tag_key TEXT NOT NULL,
        PRIMARY KEY (entry_id, tag_key)
      ) STRICT, WITHOUT ROWID;
      CREATE INDEX notebook_tags_tag ON notebook_tags(tag_key, entry_id);

      -- Derived from notebook_entries.metadata: metadataIndexRows() (shared/metadata/search.ts),
      -- one row per field value, rewritten in the transaction of every save; empty for a
      -- deleted entry. Each query kind seeks one of these indexes by field name.
      CREATE TABLE notebook_metadata_index (
        entry_id INTEGER NOT NULL REFERENCES notebook_entries(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        type TEXT NOT NULL,
        text TEXT NOT NULL,
        num REAL,
        unit TEXT,
        date TEXT,
        bool INTEGER CHECK (bool IN (0, 1))
      ) STRICT;
      CREATE INDEX notebook_metadata_index_entry ON notebook_metadata_index(entry_id);
      -- entry_id last: the conditions are answered from the index alone (covering), with no
      -- lookup into the table per matching row.
      CREATE INDEX notebook_metadata_index_text ON notebook_metadata_index(name, text, entry_id);
      CREATE INDEX notebook_metadata_index_num ON notebook_metadata_index(name, num, unit,
        entry_id) WHERE num IS NOT NULL;
      CREATE INDEX notebook_metadata_index_date ON notebook_metadata_index(name, date, entry_id)
        WHERE date IS NOT NULL;
      CREATE INDEX notebook_metadata_index_bool ON notebook_metadata_index(name, bool, entry_id)
        WHERE bool IS NOT NULL;

      -- "Any field contains": the texts of an entry's rows, one per line, already lowercased by
      -- searchText; under a case-sensitive trigram index (rowid = entry id), so a phrase match
      -- is an exact substring match. Only a text holding a line break could match across two
      -- values; search.ts confirms those on the rows above. Needles under three characters
      -- scan these lines (one short row per entry) instead of every row above.
      CREATE TABLE notebook_metadata_lines (
        entry_id INTEGER PRIMARY KEY REFERENCES notebook_entries(id) ON DELETE CASCADE,
        text TEXT NOT NULL
      ) STRICT;
      CREATE VIRTUAL TABLE notebook_metadata_text USING fts5(
        text, content = 'notebook_metadata_lines', content_rowid = 'entry_id',
        tokenize = 'trigram case_sensitive 1'
      );

      -- Derived from notebook_entries: what a search filters and orders on, in a slim row. The
      -- entry rows carry the metadata and main text (often overflow pages), so filtering 20,000
      -- matches on them cost 3 to 6 microseconds each; here under one. reader is the owner, or
      -- 0 for a template (readable by everyone). Deleted entries have none.
      CREATE TABLE notebook_search_keys (
        entry_id INTEGER PRIMARY KEY REFERENCES notebook_entries(id) ON DELETE CASCADE,
        reader INTEGER NOT NULL,
        kind TEXT NOT NULL,
        title_search TEXT NOT NULL,
        updated_at TEXT NOT NULL
      ) STRICT;
      CREATE INDEX notebook_search_keys_order ON notebook_search_keys(updated_at, entry_id);
    `,
};
