import type { Migration } from '../migrations.js';

export const migration006: Migration = {
  version: 6,
  name: 'harvest: storage locations, instruments, hooks, schedules, file and transfer records',
  sql: `
      CREATE TABLE storage_locations (
        id INTEGER PRIMARY KEY,
        uuid TEXT NOT NULL UNIQUE,
        name TEXT NOT NULL UNIQUE,
        -- local: a folder on the machine that writes; server: upload to the server (issue 5).
        type TEXT NOT NULL CHECK (type IN ('local', 'server')),
        base_path TEXT NOT NULL,
        enabled INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      ) STRICT;

      CREATE TABLE instruments (
        id INTEGER PRIMARY KEY,
        uuid TEXT NOT NULL UNIQUE,
        name TEXT NOT NULL UNIQUE,
        description TEXT NOT NULL DEFAULT '',
        tool_id INTEGER NOT NULL REFERENCES tools(id),
        -- Server side: the station (service account) that runs the instrument.
        station_id INTEGER REFERENCES stations(id),
        -- JSON [{"path", "include": [...], "exclude": [...]}]
        watch TEXT NOT NULL DEFAULT '[]',
        stability_seconds REAL NOT NULL DEFAULT 5 CHECK (stability_seconds >= 0),
        storage_location_id INTEGER REFERENCES storage_locations(id),
        destination_template TEXT NOT NULL,
        enabled INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
        last_harvested_at TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      ) STRICT;
      CREATE INDEX instruments_tool ON instruments(tool_id);

      CREATE TABLE harvest_hooks (
        id INTEGER PRIMARY KEY,
        uuid TEXT NOT NULL UNIQUE,
        name TEXT NOT NULL UNIQUE,
        "trigger" TEXT NOT NULL CHECK ("trigger" IN ('pre_transfer', 'post_transfer')),
        kind TEXT NOT NULL,
        config TEXT NOT NULL DEFAULT '{}',
        priority INTEGER NOT NULL DEFAULT 100,
        -- null: every instrument.
        instrument_id INTEGER REFERENCES instruments(id),
        enabled INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      ) STRICT;

      CREATE TABLE harvest_schedules (
        id INTEGER PRIMARY KEY,
        uuid TEXT NOT NULL UNIQUE,
        instrument_id INTEGER NOT NULL REFERENCES instruments(id),
        cron TEXT NOT NULL,
        timezone TEXT,
        enabled INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
        last_run_at TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      ) STRICT;
      CREATE INDEX harvest_schedules_instrument ON harvest_schedules(instrument_id);

      -- One row per version of a source file (a file changed after its harvest is a new record
      -- with a new ARK). The columns after metadata_ are the station's work state: state is
      -- waiting (for a transfer), failed (retried at next_attempt_at), done (completed or
      -- skipped) or gone (the source vanished before it could be copied). partial_path is set
      -- before a copy starts; verified_hash and pending_destination before the verified copy
      -- is renamed into place, so a restart after a crash knows what it may find on disk.
      CREATE TABLE harvest_files (
        id INTEGER PRIMARY KEY,
        uuid TEXT NOT NULL UNIQUE,
        instrument_id INTEGER NOT NULL REFERENCES instruments(id),
        station_id INTEGER REFERENCES stations(id),
        persistent_id TEXT NOT NULL UNIQUE,
        persistent_id_type TEXT NOT NULL DEFAULT 'ark',
        watch_path TEXT NOT NULL,
        relative_path TEXT NOT NULL,
        source_path TEXT NOT NULL,
        filename TEXT NOT NULL,
        size INTEGER NOT NULL,
        mtime_ms REAL NOT NULL,
        xxhash TEXT,
        hash_algorithm TEXT NOT NULL DEFAULT 'xxh3-128',
        first_discovered_at TEXT NOT NULL,
        usage_event_id INTEGER REFERENCES usage_events(id),
        metadata_ TEXT NOT NULL DEFAULT '{}',
        state TEXT NOT NULL DEFAULT 'waiting'
          CHECK (state IN ('waiting', 'failed', 'done', 'gone')),
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at TEXT,
        partial_path TEXT,
        verified_hash TEXT,
        pending_destination TEXT,
        updated_at TEXT NOT NULL
      ) STRICT;
      CREATE INDEX harvest_files_source ON harvest_files(instrument_id, source_path);
      CREATE INDEX harvest_files_discovered ON harvest_files(instrument_id, first_discovered_at);
      -- Not partial: SQLite would not use an index WHERE state IN (...) for state = 'failed'.
      CREATE INDEX harvest_files_work ON harvest_files(state, next_attempt_at);
      CREATE INDEX harvest_files_in_flight ON harvest_files(id) WHERE partial_path IS NOT NULL;

      -- One row per attempt that got as far as a decision: completed, skipped or failed.
      CREATE TABLE harvest_transfers (
        id INTEGER PRIMARY KEY,
        uuid TEXT NOT NULL UNIQUE,
        file_id INTEGER NOT NULL REFERENCES harvest_files(id),
        status TEXT NOT NULL CHECK (status IN ('completed', 'skipped', 'failed')),
        storage_location_id INTEGER REFERENCES storage_locations(id),
        destination_path TEXT,
        bytes_transferred INTEGER NOT NULL DEFAULT 0,
        dest_checksum TEXT,
        checksum_verified INTEGER NOT NULL DEFAULT 0 CHECK (checksum_verified IN (0, 1)),
        started_at TEXT NOT NULL,
        completed_at TEXT,
        error TEXT NOT NULL DEFAULT '',
        note TEXT NOT NULL DEFAULT '',
        -- Nothing is completed without a verified checksum.
        CHECK (status <> 'completed' OR (checksum_verified = 1 AND dest_checksum IS NOT NULL))
      ) STRICT;
      CREATE INDEX harvest_transfers_file ON harvest_transfers(file_id);
      CREATE INDEX harvest_transfers_started ON harvest_transfers(started_at);
      -- A file is completed exactly once, whatever crashes and retries happen around it.
      CREATE UNIQUE INDEX harvest_transfers_one_completed ON harvest_transfers(file_id)
        WHERE status = 'completed';
    `,
};
