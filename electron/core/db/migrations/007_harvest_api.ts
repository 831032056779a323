import type { Migration } from '../migrations.js';

export const migration007: Migration = {
  version: 7,
  name: 'harvest API: instrument access grants, schedule deployments, harvest runs',
  sql: `
      -- Server side: which users may read the files (and transfers) of which instrument
      -- (spec 002 UserInstrumentAccess). Admins read everything without a grant.
      CREATE TABLE user_instrument_access (
        instrument_id INTEGER NOT NULL REFERENCES instruments(id) ON DELETE CASCADE,
        user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        granted_at TEXT NOT NULL,
        granted_by_id INTEGER REFERENCES users(id),
        PRIMARY KEY (instrument_id, user_id)
      ) STRICT, WITHOUT ROWID;
      CREATE INDEX user_instrument_access_user ON user_instrument_access(user_id, instrument_id);

      -- Server side: every instrument a station was given (or registered from its own records),
      -- so records it made for an instrument since moved to another station, still waiting in
      -- its outbox, are taken; records for any other instrument are refused.
      CREATE TABLE station_instruments (
        station_id INTEGER NOT NULL REFERENCES stations(id) ON DELETE CASCADE,
        instrument_id INTEGER NOT NULL REFERENCES instruments(id) ON DELETE CASCADE,
        PRIMARY KEY (station_id, instrument_id)
      ) STRICT, WITHOUT ROWID;
      CREATE TRIGGER instruments_station_insert AFTER INSERT ON instruments
        WHEN NEW.station_id IS NOT NULL
      BEGIN
        INSERT OR IGNORE INTO station_instruments (station_id, instrument_id)
          VALUES (NEW.station_id, NEW.id);
      END;
      CREATE TRIGGER instruments_station_update AFTER UPDATE OF station_id ON instruments
        WHEN NEW.station_id IS NOT NULL
      BEGIN
        INSERT OR IGNORE INTO station_instruments (station_id, instrument_id)
          VALUES (NEW.station_id, NEW.id);
      END;

      -- A schedule's deployment on the station that runs its instrument. Server side: version
      -- counts the schedule's changes; the station reports the version it deployed, so a report
      -- about an older version leaves the deployment pending. Station side: the same columns
      -- hold what the station last reported.
      ALTER TABLE harvest_schedules ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
      ALTER TABLE harvest_schedules ADD COLUMN station_id INTEGER REFERENCES stations(id);
      ALTER TABLE harvest_schedules ADD COLUMN deployment_state TEXT NOT NULL DEFAULT 'pending'
        CHECK (deployment_state IN ('pending', 'deployed', 'failed', 'removed'));
      ALTER TABLE harvest_schedules ADD COLUMN deployed_version INTEGER;
      ALTER TABLE harvest_schedules ADD COLUMN deployed_at TEXT;
      ALTER TABLE harvest_schedules ADD COLUMN next_run_at TEXT;
      ALTER TABLE harvest_schedules ADD COLUMN deployment_error TEXT NOT NULL DEFAULT '';

      -- Station side: instruments, hooks and schedules that came from the server (replaced by
      -- its next word on them) rather than from a local bundle (left alone by sync).
      ALTER TABLE instruments ADD COLUMN from_server INTEGER NOT NULL DEFAULT 0
        CHECK (from_server IN (0, 1));
      ALTER TABLE harvest_hooks ADD COLUMN from_server INTEGER NOT NULL DEFAULT 0
        CHECK (from_server IN (0, 1));
      ALTER TABLE harvest_schedules ADD COLUMN from_server INTEGER NOT NULL DEFAULT 0
        CHECK (from_server IN (0, 1));

      -- One harvest of one instrument: asked for on the server (trigger) or started by a
      -- schedule on the station. The server's row is the request and, once the station reports,
      -- its outcome; the station keeps its own copy so a restart does not lose a queued run.
      CREATE TABLE harvest_runs (
        id INTEGER PRIMARY KEY,
        uuid TEXT NOT NULL UNIQUE,
        schedule_id INTEGER REFERENCES harvest_schedules(id) ON DELETE SET NULL,
        instrument_id INTEGER NOT NULL REFERENCES instruments(id) ON DELETE CASCADE,
        station_id INTEGER REFERENCES stations(id),
        "trigger" TEXT NOT NULL CHECK ("trigger" IN ('manual', 'schedule')),
        state TEXT NOT NULL DEFAULT 'queued'
          CHECK (state IN ('queued', 'running', 'completed', 'failed')),
        requested_by_id INTEGER REFERENCES users(id),
        requested_at TEXT NOT NULL,
        started_at TEXT,
        finished_at TEXT,
        files_completed INTEGER NOT NULL DEFAULT 0,
        files_skipped INTEGER NOT NULL DEFAULT 0,
        files_failed INTEGER NOT NULL DEFAULT 0,
        error TEXT NOT NULL DEFAULT ''
      ) STRICT;
      CREATE INDEX harvest_runs_schedule ON harvest_runs(schedule_id, requested_at);
      -- What every delta to a station carries: the runs queued for it.
      CREATE INDEX harvest_runs_queued ON harvest_runs(station_id) WHERE state = 'queued';

      -- The file filters of GET /api/files.
      CREATE INDEX harvest_files_filename ON harvest_files(filename);
      CREATE INDEX harvest_files_first_discovered ON harvest_files(first_discovered_at);


      -- Server side: files that stations upload into 'server' storage locations (issue 5).
      -- One row per version of a file sent to one destination, so a retry (same station, file,
      -- location, destination, size and hash) finds its row: it resumes at 'received', or gets
      -- the finished answer again. A new version of the file is a new row.
      CREATE TABLE harvest_uploads (
        id INTEGER PRIMARY KEY,
        uuid TEXT NOT NULL UNIQUE,
        station_id INTEGER NOT NULL REFERENCES stations(id) ON DELETE CASCADE,
        file_uuid TEXT NOT NULL,
        storage_location_id INTEGER NOT NULL REFERENCES storage_locations(id) ON DELETE CASCADE,
        -- Relative to the location's base_path, '/'-separated, as checked on arrival.
        destination_path TEXT NOT NULL,
        size INTEGER NOT NULL CHECK (size >= 0),
        -- XXH3-128 (hex) that the station declared for the whole file.
        xxhash TEXT NOT NULL,
        state TEXT NOT NULL DEFAULT 'receiving'
          CHECK (state IN ('receiving', 'completed', 'skipped')),
        -- Bytes of the partial file flushed to disk and recorded: all that a resume trusts
        -- (bytes beyond it, written before a crash, are cut off and sent again).
        received INTEGER NOT NULL DEFAULT 0 CHECK (received >= 0 AND received <= size),
        -- While receiving: the partial file, under <base_path>/.labstation-uploads/.
        partial_path TEXT,
        -- Once finished: where the file is (relative to base_path) and the server's hash of it.
        final_path TEXT,
        dest_checksum TEXT,
        note TEXT NOT NULL DEFAULT '',
        created_at TEXT NOT NULL,
        -- Last byte received or state change: what the cleanup of abandoned uploads looks at.
        updated_at TEXT NOT NULL,
        finished_at TEXT,
        CHECK (state = 'receiving' OR (final_path IS NOT NULL AND dest_checksum IS NOT NULL))
      ) STRICT;
      -- The lookup of every POST; its prefix (station_id, file_uuid) finds older versions.
      CREATE UNIQUE INDEX harvest_uploads_version ON harvest_uploads(station_id, file_uuid,
        storage_location_id, destination_path, size, xxhash);
      -- The cleanup: abandoned (receiving) and long-finished uploads, oldest first.
      CREATE INDEX harvest_uploads_age ON harvest_uploads(state, updated_at);
    `,
};
