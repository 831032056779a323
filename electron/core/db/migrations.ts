import type { Db } from './open.js';
/**
 * Numbered schema migrations. Each runs in one transaction and sets PRAGMA user_version to its
 * number. Never edit a migration that has shipped: add the next one.
 */
export interface Migration {
  version: number;
  name: string;
  sql: string;
  /** Work SQL text cannot do alone, run after `sql` in the same transaction. */
  run?: (db: Db) => void;
  /**
   * Rebuilds tables that others reference: foreign keys are off while it runs (so dropping
   * the old table deletes nothing through ON DELETE), and checked before it commits.
   */
  rebuildsTables?: boolean;
}

export const migrations: readonly Migration[] = [
  {
    version: 1,
    name: 'station foundation: people, projects, tools, usage events',
    sql: `
      CREATE TABLE settings (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
      ) STRICT;

      CREATE TABLE users (
        id INTEGER PRIMARY KEY,
        uuid TEXT NOT NULL UNIQUE,
        username TEXT NOT NULL UNIQUE COLLATE NOCASE,
        email TEXT NOT NULL DEFAULT '',
        first_name TEXT NOT NULL DEFAULT '',
        last_name TEXT NOT NULL DEFAULT '',
        badge_number TEXT UNIQUE,
        pin_hash TEXT,
        is_staff INTEGER NOT NULL DEFAULT 0 CHECK (is_staff IN (0, 1)),
        is_active INTEGER NOT NULL DEFAULT 1 CHECK (is_active IN (0, 1)),
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      ) STRICT;

      CREATE TABLE projects (
        id INTEGER PRIMARY KEY,
        uuid TEXT NOT NULL UNIQUE,
        name TEXT NOT NULL UNIQUE,
        application_identifier TEXT NOT NULL DEFAULT '',
        active INTEGER NOT NULL DEFAULT 1 CHECK (active IN (0, 1)),
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      ) STRICT;

      CREATE TABLE user_projects (
        user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        PRIMARY KEY (user_id, project_id)
      ) STRICT, WITHOUT ROWID;

      CREATE TABLE tools (
        id INTEGER PRIMARY KEY,
        uuid TEXT NOT NULL UNIQUE,
        name TEXT NOT NULL UNIQUE,
        pre_usage_questions TEXT NOT NULL DEFAULT '[]',
        post_usage_questions TEXT NOT NULL DEFAULT '[]',
        shutdown INTEGER NOT NULL DEFAULT 0 CHECK (shutdown IN (0, 1)),
        shutdown_reason TEXT NOT NULL DEFAULT '',
        shutdown_since TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      ) STRICT;

      CREATE TABLE qualifications (
        user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        tool_id INTEGER NOT NULL REFERENCES tools(id) ON DELETE CASCADE,
        PRIMARY KEY (user_id, tool_id)
      ) STRICT, WITHOUT ROWID;

      CREATE TABLE usage_events (
        id INTEGER PRIMARY KEY,
        uuid TEXT NOT NULL UNIQUE,
        user_id INTEGER NOT NULL REFERENCES users(id),
        operator_id INTEGER NOT NULL REFERENCES users(id),
        project_id INTEGER NOT NULL REFERENCES projects(id),
        tool_id INTEGER NOT NULL REFERENCES tools(id),
        start TEXT NOT NULL,
        "end" TEXT,
        validated INTEGER NOT NULL DEFAULT 0 CHECK (validated IN (0, 1)),
        validated_by_id INTEGER REFERENCES users(id),
        remote_work INTEGER NOT NULL DEFAULT 0 CHECK (remote_work IN (0, 1)),
        pre_run_data TEXT NOT NULL DEFAULT '',
        run_data TEXT NOT NULL DEFAULT '',
        post_usage_pending INTEGER NOT NULL DEFAULT 0 CHECK (post_usage_pending IN (0, 1)),
        reminder_due INTEGER NOT NULL DEFAULT 0 CHECK (reminder_due IN (0, 1)),
        force_ended_by_id INTEGER REFERENCES users(id),
        version INTEGER NOT NULL DEFAULT 1,
        updated_at TEXT NOT NULL,
        CHECK ("end" IS NULL OR "end" >= start)
      ) STRICT;
      -- One active usage per tool, enforced by the database itself.
      CREATE UNIQUE INDEX usage_events_one_active ON usage_events(tool_id) WHERE "end" IS NULL;
      CREATE INDEX usage_events_tool_start ON usage_events(tool_id, start, "end");
      CREATE INDEX usage_events_user_pending ON usage_events(user_id) WHERE post_usage_pending = 1;

      CREATE TABLE problem_reports (
        id INTEGER PRIMARY KEY,
        uuid TEXT NOT NULL UNIQUE,
        tool_id INTEGER NOT NULL REFERENCES tools(id),
        usage_event_id INTEGER REFERENCES usage_events(id),
        user_id INTEGER NOT NULL REFERENCES users(id),
        question TEXT NOT NULL,
        description TEXT NOT NULL,
        force_shutdown INTEGER NOT NULL CHECK (force_shutdown IN (0, 1)),
        safety_hazard INTEGER NOT NULL CHECK (safety_hazard IN (0, 1)),
        created_at TEXT NOT NULL,
        resolved_at TEXT
      ) STRICT;
      CREATE INDEX problem_reports_tool ON problem_reports(tool_id, created_at);

      CREATE TABLE consumable_withdrawals (
        id INTEGER PRIMARY KEY,
        uuid TEXT NOT NULL UNIQUE,
        consumable TEXT NOT NULL,
        quantity REAL NOT NULL CHECK (quantity > 0),
        user_id INTEGER NOT NULL REFERENCES users(id),
        project_id INTEGER NOT NULL REFERENCES projects(id),
        usage_event_id INTEGER NOT NULL REFERENCES usage_events(id),
        tool_id INTEGER NOT NULL REFERENCES tools(id),
        question TEXT NOT NULL,
        created_at TEXT NOT NULL
      ) STRICT;
      CREATE INDEX consumable_withdrawals_usage ON consumable_withdrawals(usage_event_id);

      CREATE TABLE login_failures (
        login_key TEXT PRIMARY KEY,
        failures INTEGER NOT NULL,
        locked_until TEXT,
        last_failure_at TEXT NOT NULL
      ) STRICT;

      -- Transactional outbox: rows written in the same transaction as the record they carry,
      -- pushed to the server in id order, deleted only after the server acknowledged them.
      CREATE TABLE outbox (
        id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL,
        record_uuid TEXT NOT NULL,
        payload TEXT NOT NULL,
        created_at TEXT NOT NULL
      ) STRICT;
    `,
  },
  {
    version: 2,
    name: 'server mode: accounts, API tokens, stations, NEMO fields, areas, reservations',
    sql: `
      ALTER TABLE users ADD COLUMN password_hash TEXT;
      ALTER TABLE users ADD COLUMN role TEXT NOT NULL DEFAULT 'user'
        CHECK (role IN ('admin', 'staff', 'user'));
      CREATE UNIQUE INDEX users_email ON users(email COLLATE NOCASE) WHERE email <> '';

      ALTER TABLE tools ADD COLUMN category TEXT NOT NULL DEFAULT '';
      ALTER TABLE tools ADD COLUMN operational INTEGER NOT NULL DEFAULT 1 CHECK (operational IN (0, 1));
      ALTER TABLE tools ADD COLUMN visible INTEGER NOT NULL DEFAULT 1 CHECK (visible IN (0, 1));

      CREATE TABLE areas (
        id INTEGER PRIMARY KEY,
        uuid TEXT NOT NULL UNIQUE,
        name TEXT NOT NULL UNIQUE,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      ) STRICT;

      CREATE TABLE reservations (
        id INTEGER PRIMARY KEY,
        uuid TEXT NOT NULL UNIQUE,
        user_id INTEGER NOT NULL REFERENCES users(id),
        creator_id INTEGER NOT NULL REFERENCES users(id),
        project_id INTEGER REFERENCES projects(id),
        tool_id INTEGER REFERENCES tools(id),
        area_id INTEGER REFERENCES areas(id),
        start TEXT NOT NULL,
        "end" TEXT NOT NULL,
        cancelled INTEGER NOT NULL DEFAULT 0 CHECK (cancelled IN (0, 1)),
        question_data TEXT NOT NULL DEFAULT '',
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        CHECK ("end" > start),
        CHECK ((tool_id IS NULL) <> (area_id IS NULL))
      ) STRICT;
      CREATE INDEX reservations_tool_start ON reservations(tool_id, start, "end");
      CREATE INDEX reservations_start ON reservations(start);

      -- API tokens and station keys are random secrets: a SHA-256 of them is stored, never them.
      CREATE TABLE api_tokens (
        id INTEGER PRIMARY KEY,
        user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        token_hash TEXT NOT NULL UNIQUE,
        prefix TEXT NOT NULL,
        name TEXT NOT NULL DEFAULT '',
        created_at TEXT NOT NULL,
        last_used_at TEXT
      ) STRICT;

      CREATE TABLE stations (
        id INTEGER PRIMARY KEY,
        uuid TEXT NOT NULL UNIQUE,
        name TEXT NOT NULL UNIQUE,
        description TEXT NOT NULL DEFAULT '',
        tool_id INTEGER REFERENCES tools(id),
        key_hash TEXT NOT NULL UNIQUE,
        enabled INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
        created_at TEXT NOT NULL,
        last_seen_at TEXT
      ) STRICT;

      -- The NEMO-style filters: every list query seeks an index on its filter, then orders by id.
      CREATE INDEX usage_events_start ON usage_events(start, "end");
      CREATE INDEX usage_events_user_start ON usage_events(user_id, start);
      CREATE INDEX usage_events_project_start ON usage_events(project_id, start);
      CREATE INDEX usage_events_operator ON usage_events(operator_id);
    `,
  },
  {
    version: 3,
    name: 'station sync: config change log, station origin of pushed records, client state',
    sql: `
      -- Server side: every change to what stations need gets a sequence number; a station pulls
      -- the records named since its cursor. A data dir in station mode logs nothing.
      CREATE TABLE sync_changes (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        entity TEXT NOT NULL CHECK (entity IN ('user', 'project', 'tool', 'station')),
        uuid TEXT
      ) STRICT;
      ${changeTriggers('users', 'user', 'ROW.uuid', 'username, email, first_name, last_name, badge_number, pin_hash, is_staff, is_active')}
      ${changeTriggers('projects', 'project', 'ROW.uuid', 'name, application_identifier, active')}
      ${changeTriggers('tools', 'tool', 'ROW.uuid', 'name, pre_usage_questions, post_usage_questions, category, operational, visible')}
      ${changeTriggers('user_projects', 'user', '(SELECT uuid FROM users WHERE id = ROW.user_id)', null)}
      ${changeTriggers('qualifications', 'user', '(SELECT uuid FROM users WHERE id = ROW.user_id)', null)}
      CREATE TRIGGER stations_sync_update AFTER UPDATE OF name, tool_id, enabled ON stations
      BEGIN
        INSERT INTO sync_changes (entity, uuid) VALUES ('station', NEW.uuid);
      END;

      -- Which station pushed a record (null: made on the server itself).
      ALTER TABLE usage_events ADD COLUMN station_id INTEGER REFERENCES stations(id);
      ALTER TABLE problem_reports ADD COLUMN station_id INTEGER REFERENCES stations(id);
      ALTER TABLE problem_reports ADD COLUMN resolved_by_id INTEGER REFERENCES users(id);
      ALTER TABLE consumable_withdrawals ADD COLUMN station_id INTEGER REFERENCES stations(id);

      -- Station side: the sync client's own state (the config cursor).
      CREATE TABLE sync_state (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
      ) STRICT;
    `,
  },
  {
    version: 4,
    name: 'server mail outbox: pending-answers notices and reminders',
    sql: `
      -- Server side: every e-mail is written here first (in the transaction of the record that
      -- causes it), then delivered by the mail worker with retry. One mail of each kind per
      -- usage event at most: a re-pushed event cannot queue a second notice or reminder.
      CREATE TABLE mail_outbox (
        id INTEGER PRIMARY KEY,
        uuid TEXT NOT NULL UNIQUE,
        kind TEXT NOT NULL,
        usage_event_id INTEGER REFERENCES usage_events(id) ON DELETE SET NULL,
        "to" TEXT NOT NULL,
        cc TEXT NOT NULL DEFAULT '',
        subject TEXT NOT NULL,
        text TEXT NOT NULL,
        html TEXT,
        status TEXT NOT NULL DEFAULT 'queued'
          CHECK (status IN ('queued', 'sent', 'failed', 'cancelled')),
        attempts INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
        next_attempt_at TEXT NOT NULL,
        last_error TEXT,
        created_at TEXT NOT NULL,
        sent_at TEXT,
        UNIQUE (usage_event_id, kind)
      ) STRICT;
      -- The worker's queue: due mails in order.
      CREATE INDEX mail_outbox_due ON mail_outbox(next_attempt_at, id) WHERE status = 'queued';
    `,
  },
  {
    version: 5,
    name: 'usage events: tool pages in id order, active events per station, answers given on the server',
    sql: `
      -- SQLite keeps (tool_id, id) order in an index on tool_id alone, so a tool's pages in the
      -- default id order seek and stop after one page instead of sorting every event of the
      -- tool (BENCHMARKS.md: 22.6 ms -> about 1 ms at page 400 of a 50,000-event tool).
      CREATE INDEX usage_events_tool ON usage_events(tool_id);

      -- One active usage per tool is the rule of a station, which records its own events
      -- (station_id null). The server holds the events of every station: two stations on one
      -- tool, or a re-imaged PC whose last event never ended, may each have one open there.
      DROP INDEX usage_events_one_active;
      CREATE UNIQUE INDEX usage_events_one_active ON usage_events(tool_id)
        WHERE "end" IS NULL AND station_id IS NULL;
      CREATE INDEX usage_events_active ON usage_events(tool_id, "end") WHERE "end" IS NULL;

      -- Server side. A station owns its events; the server adds only the answers of a pending
      -- post-usage form. station_version is the last version the station pushed (its own
      -- counter, so a resend is recognised); version counts every change the server stores,
      -- for the optimistic check of forms answered on the server. answer_acked is 0 while the
      -- station has not yet pushed the answers given here back as its own.
      ALTER TABLE usage_events ADD COLUMN station_version INTEGER;
      ALTER TABLE usage_events ADD COLUMN answered_on_server_at TEXT;
      ALTER TABLE usage_events ADD COLUMN answered_on_server_by_id INTEGER REFERENCES users(id);
      ALTER TABLE usage_events ADD COLUMN answer_acked INTEGER NOT NULL DEFAULT 1
        CHECK (answer_acked IN (0, 1));
      UPDATE usage_events SET station_version = version WHERE station_id IS NOT NULL;
      -- Answers given on the server before this version bumped version once and were never
      -- sent to the station. An event that had a pending-answers mail and is answered now may
      -- be one of them: it is treated as answered here (the station is sent the answers; if it
      -- had answered itself, it finds them the same and only confirms), and its station_version
      -- is taken one lower, so the station's next push is not mistaken for a resend.
      UPDATE usage_events
        SET answered_on_server_at = updated_at, answer_acked = 0,
          station_version = max(version - 1, 1)
        WHERE station_id IS NOT NULL AND post_usage_pending = 0 AND "end" IS NOT NULL
          AND EXISTS (SELECT 1 FROM mail_outbox m
            WHERE m.usage_event_id = usage_events.id AND m.kind = 'pending_answers');
      CREATE INDEX usage_events_answers_owed ON usage_events(station_id) WHERE answer_acked = 0;

      -- Every tool a station was registered for, so records it made for a former tool, still
      -- waiting in its outbox, are taken; records for any other tool are refused.
      CREATE TABLE station_tools (
        station_id INTEGER NOT NULL REFERENCES stations(id) ON DELETE CASCADE,
        tool_id INTEGER NOT NULL REFERENCES tools(id) ON DELETE CASCADE,
        PRIMARY KEY (station_id, tool_id)
      ) STRICT, WITHOUT ROWID;
      INSERT OR IGNORE INTO station_tools (station_id, tool_id)
        SELECT id, tool_id FROM stations WHERE tool_id IS NOT NULL;
      INSERT OR IGNORE INTO station_tools (station_id, tool_id)
        SELECT DISTINCT station_id, tool_id FROM usage_events WHERE station_id IS NOT NULL;
      CREATE TRIGGER stations_tools_insert AFTER INSERT ON stations WHEN NEW.tool_id IS NOT NULL
      BEGIN
        INSERT OR IGNORE INTO station_tools (station_id, tool_id) VALUES (NEW.id, NEW.tool_id);
      END;
      CREATE TRIGGER stations_tools_update AFTER UPDATE OF tool_id ON stations
        WHEN NEW.tool_id IS NOT NULL
      BEGIN
        INSERT OR IGNORE INTO station_tools (station_id, tool_id) VALUES (NEW.id, NEW.tool_id);
      END;
    `,
  },
  {
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
  },
  {
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
  },
  {
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
  },
  {
    version: 9,
    name: 'reservations: tools in areas, reservation question sets, the area overlap index',
    sql: `
      -- The tools in an area: an area reservation also holds them (server/reservations/book.ts).
      CREATE TABLE area_tools (
        area_id INTEGER NOT NULL REFERENCES areas(id) ON DELETE CASCADE,
        tool_id INTEGER NOT NULL REFERENCES tools(id) ON DELETE CASCADE,
        PRIMARY KEY (area_id, tool_id)
      ) STRICT, WITHOUT ROWID;
      CREATE INDEX area_tools_tool ON area_tools(tool_id, area_id);

      -- Spec 000's table reservation_questions. questions is a canonical question list (the
      -- usage questions' language). The only_for_* lists are the link tables below; an empty
      -- list means no restriction.
      CREATE TABLE reservation_question_sets (
        id INTEGER PRIMARY KEY,
        uuid TEXT NOT NULL UNIQUE,
        enabled INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
        name TEXT NOT NULL UNIQUE,
        questions TEXT NOT NULL DEFAULT '[]',
        tool_reservations INTEGER NOT NULL DEFAULT 0 CHECK (tool_reservations IN (0, 1)),
        area_reservations INTEGER NOT NULL DEFAULT 0 CHECK (area_reservations IN (0, 1)),
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      ) STRICT;
      CREATE TABLE reservation_question_set_tools (
        set_id INTEGER NOT NULL REFERENCES reservation_question_sets(id) ON DELETE CASCADE,
        tool_id INTEGER NOT NULL REFERENCES tools(id) ON DELETE CASCADE,
        PRIMARY KEY (set_id, tool_id)
      ) STRICT, WITHOUT ROWID;
      CREATE TABLE reservation_question_set_areas (
        set_id INTEGER NOT NULL REFERENCES reservation_question_sets(id) ON DELETE CASCADE,
        area_id INTEGER NOT NULL REFERENCES areas(id) ON DELETE CASCADE,
        PRIMARY KEY (set_id, area_id)
      ) STRICT, WITHOUT ROWID;
      CREATE TABLE reservation_question_set_projects (
        set_id INTEGER NOT NULL REFERENCES reservation_question_sets(id) ON DELETE CASCADE,
        project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        PRIMARY KEY (set_id, project_id)
      ) STRICT, WITHOUT ROWID;

      -- The overlap check of a booking seeks (tool_id, start) on reservations_tool_start
      -- (migration 2) and (area_id, start) here.
      CREATE INDEX reservations_area_start ON reservations(area_id, start, "end");
    `,
  },
  {
    version: 10,
    name: 'reservations to stations: reservation and area changes logged, the station copy',
    sql: `
      -- Server side: the change log learns two more entities. SQLite cannot change a CHECK in
      -- place, so the table is rebuilt with its rows and its AUTOINCREMENT position (stations
      -- hold cursors into it). The triggers of migration 3 name the table, not its old
      -- definition: legacy renaming leaves them as they are, and they write to the new table.
      PRAGMA legacy_alter_table = ON;
      CREATE TABLE sync_changes_new (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        entity TEXT NOT NULL
          CHECK (entity IN ('user', 'project', 'tool', 'station', 'reservation', 'area')),
        uuid TEXT
      ) STRICT;
      INSERT INTO sync_changes_new (seq, entity, uuid) SELECT seq, entity, uuid FROM sync_changes;
      DELETE FROM sqlite_sequence WHERE name = 'sync_changes_new';
      INSERT INTO sqlite_sequence (name, seq)
        SELECT 'sync_changes_new', seq FROM sqlite_sequence WHERE name = 'sync_changes';
      DROP TABLE sync_changes;
      ALTER TABLE sync_changes_new RENAME TO sync_changes;
      PRAGMA legacy_alter_table = OFF;
      ${changeTriggers('reservations', 'reservation', 'ROW.uuid', 'user_id, project_id, tool_id, area_id, start, "end", cancelled, question_data')}
      ${changeTriggers('areas', 'area', 'ROW.uuid', 'name')}
      ${changeTriggers('area_tools', 'area', '(SELECT uuid FROM areas WHERE id = ROW.area_id)', null)}

      -- Station side: the reservations of the station's tool (its own and those of areas
      -- holding it) that had not ended at the last pull, as the server sent them; each delta
      -- that carries reservations replaces them all. Names are copied so the list reads offline.
      CREATE TABLE station_reservations (
        uuid TEXT PRIMARY KEY,
        server_id INTEGER NOT NULL,
        tool_uuid TEXT,
        area_name TEXT,
        target_name TEXT NOT NULL,
        user_uuid TEXT NOT NULL,
        user_name TEXT NOT NULL,
        creator_uuid TEXT NOT NULL,
        project_uuid TEXT,
        project_name TEXT,
        start TEXT NOT NULL,
        "end" TEXT NOT NULL,
        question_data TEXT NOT NULL DEFAULT ''
      ) STRICT, WITHOUT ROWID;
      CREATE INDEX station_reservations_end ON station_reservations("end", start);
    `,
  },
  {
    version: 11,
    name: 'an instrument given to a station takes the file records made before',
    sql: `
      -- Station side: instruments the server gave this station whose earlier file records
      -- (made on another station, or on this one before its data dir was made anew) it has not
      -- fetched yet. Their files are not harvested until it has, or they would get new ARKs.
      CREATE TABLE harvest_history_pending (
        instrument_id INTEGER PRIMARY KEY REFERENCES instruments(id) ON DELETE CASCADE,
        -- The server's id of the last file record taken: fetching goes on from there.
        after INTEGER NOT NULL DEFAULT 0
      ) STRICT;
    `,
  },
  {
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
  },
  {
    version: 13,
    name: "a station keeps the usage of a file from an instrument's history made elsewhere",
    sql: `
      -- Station side: a file record of an instrument's history (sync/history.ts) made on
      -- another station names a usage event this station does not hold, so usage_event_id is
      -- NULL. The server sends that usage's usage_context with the record; it is kept here as
      -- JSON, and stands for the usage where the file's own usage would (the destination
      -- template's {user}, {project} and {usage_event}, the usage_context hook, the usage
      -- event's uuid pushed back to the server, the Data tab). NULL on every other record.
      ALTER TABLE harvest_files ADD COLUMN usage_elsewhere TEXT;
    `,
  },
  {
    version: 14,
    name: 'a station sets aside a record its server refused, so the rest still goes',
    sql: `
      -- Station side: a pushed record the server refuses (a person or project it does not
      -- hold, a rule it applies) no longer holds back every record queued after it. It waits
      -- until held_until (NULL: due), longer after each refusal (refusals), or until the
      -- facility changes when the server lacked something it names (refusal_code
      -- unknown_reference); refusal says why.
      ALTER TABLE outbox ADD COLUMN held_until TEXT;
      ALTER TABLE outbox ADD COLUMN refusal TEXT;
      ALTER TABLE outbox ADD COLUMN refusal_code TEXT;
      ALTER TABLE outbox ADD COLUMN refusals INTEGER NOT NULL DEFAULT 0;
    `,
  },
  {
    version: 15,
    name: 'ids of deleted instruments, storage locations, service accounts, schedules and hooks are never given again',
    // The harvest API (spec 002) names these by id: a client holding the id of a deleted
    // schedule must get 404, not the next schedule made, which SQLite gave the highest id
    // freed. AUTOINCREMENT ids only grow; a table gets it by being made anew.
    sql: '',
    rebuildsTables: true,
    run: (db) => {
      for (const table of [
        'instruments',
        'storage_locations',
        'stations',
        'harvest_schedules',
        'harvest_hooks',
      ]) {
        addAutoincrement(db, table);
      }
    },
  },
  {
    version: 16,
    name: 'a password changed or an account deactivated ends the logins made before',
    sql: `
      -- Server side: a JWT carries the account's credentials_version when it was made
      -- (server/auth.ts); a new password, or the account turned off, counts it up, and the
      -- tokens made before no longer authenticate (an admin resetting a taken-over account
      -- cuts the taker's session; a re-activated account does not revive old logins). A
      -- trigger, so every writer (the admin pages, an imported bundle) counts.
      ALTER TABLE users ADD COLUMN credentials_version INTEGER NOT NULL DEFAULT 0;
      CREATE TRIGGER users_credentials_version AFTER UPDATE OF password_hash, is_active ON users
        WHEN NEW.password_hash IS NOT OLD.password_hash
          OR (OLD.is_active = 1 AND NEW.is_active = 0)
      BEGIN
        UPDATE users SET credentials_version = OLD.credentials_version + 1 WHERE id = NEW.id;
      END;
    `,
  },
  {
    version: 17,
    name: 'each change a station pulls has a nonce its mark covers',
    sql: `
      -- Server side: a station sends back the mark of the change its cursor names
      -- (sync/export.ts changeMark). A server restored from a backup numbers its changes on
      -- from the backup's last one, and may well change the same record at the same number
      -- again (an edit lost with the restore, made again): only a random nonce tells the two
      -- changes apart. Filled in by a trigger, so every writer of changes (the triggers of
      -- migration 3 and after) gives one.
      ALTER TABLE sync_changes ADD COLUMN nonce TEXT;
      UPDATE sync_changes SET nonce = lower(hex(randomblob(8)));
      CREATE TRIGGER sync_changes_nonce AFTER INSERT ON sync_changes WHEN NEW.nonce IS NULL
      BEGIN
        UPDATE sync_changes SET nonce = lower(hex(randomblob(8))) WHERE seq = NEW.seq;
      END;
    `,
  },
  {
    version: 18,
    name: 'a JWT logged out of no longer authenticates',
    sql: `
      -- Server side: POST /auth/jwt/logout ends the JWT it is called with (server/app.ts), by
      -- the SHA-256 of the token (any token, those made before this version too), until the
      -- time it would have expired anyway (expires_at, Unix seconds); rows past that are of
      -- no use and are deleted at the next logout.
      CREATE TABLE ended_jwts (
        token_hash TEXT PRIMARY KEY,
        expires_at INTEGER NOT NULL
      ) STRICT, WITHOUT ROWID;
    `,
  },
  {
    version: 19,
    name: 'a record the server refused for lacking another waits for that one',
    sql: `
      -- Station side: a pushed record refused because the server lacks a record it names
      -- (unknown_reference with PushError.missing: its usage, its file) waits for that record
      -- by its uuid, and is offered again as soon as the server has acknowledged it, instead
      -- of at its hold's end (sync/client.ts). NULL on every other row.
      ALTER TABLE outbox ADD COLUMN waits_for TEXT;
      CREATE INDEX outbox_waits_for ON outbox(waits_for) WHERE waits_for IS NOT NULL;
    `,
  },
  {
    version: 20,
    name: "a station's key is held by the one Labstation that uses it",
    sql: `
      -- Server side: the data dir (its id, sync/identity.ts) and host that last used the key,
      -- and when. Another one is refused while that one is in use (server/sync/stationAuth.ts);
      -- a new key (admin) lets the next one take it. NULL until a station sends them.
      ALTER TABLE stations ADD COLUMN install_id TEXT;
      ALTER TABLE stations ADD COLUMN install_host TEXT;
      ALTER TABLE stations ADD COLUMN install_seen_at TEXT;
    `,
  },
  {
    version: 21,
    name: 'a data dir restored from a backup is told apart by the outbox ids the server took',
    // Station side: outbox ids only grow (AUTOINCREMENT), also once every row has left, so the
    // highest the server acknowledged from this data dir is one it made. Server side: that id
    // (install_acked_through, for the data dir that holds the key); a data dir whose outbox
    // has made no id that high is older than what it pushed: restored from a backup
    // (sync/restored.ts).
    sql: 'ALTER TABLE stations ADD COLUMN install_acked_through INTEGER;',
    rebuildsTables: true,
    run: (db) => addAutoincrement(db, 'outbox'),
  },
  {
    version: 22,
    name: 'records the server took are kept a while, to send again to a server restored from a backup',
    // Station side: an outbox row the server acknowledged moves here with its payload (same
    // id) instead of going at once, and stays for sync.keepSentDays. A server restored from a
    // backup answers a count below ids kept here: the newest version of each of those records
    // goes back to the outbox (sync/resend.ts).
    sql: `
      CREATE TABLE outbox_sent (
        id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL,
        record_uuid TEXT NOT NULL,
        payload TEXT NOT NULL,
        created_at TEXT NOT NULL,
        acked_at TEXT NOT NULL
      ) STRICT;
      CREATE INDEX outbox_sent_acked ON outbox_sent(acked_at);
      CREATE INDEX outbox_sent_record ON outbox_sent(record_uuid, kind);
    `,
  },
  {
    version: 23,
    name: 'a person turned off loses their API tokens, so turning them on again does not revive them',
    sql: `
      -- Server side: as the logins of migration 16, the API tokens of a person who is turned
      -- off end then, not only while the account is off: a token handed to a script or taken
      -- from one does not come back when the account is turned on again (an admin makes a new
      -- one). A trigger, so every writer (the admin pages, an imported bundle) counts.
      DELETE FROM api_tokens WHERE user_id IN (SELECT id FROM users WHERE is_active = 0);
      CREATE TRIGGER users_deactivated_api_tokens AFTER UPDATE OF is_active ON users
        WHEN OLD.is_active = 1 AND NEW.is_active = 0
      BEGIN
        DELETE FROM api_tokens WHERE user_id = NEW.id;
      END;
    `,
  },
  {
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
  },
  {
    version: 25,
    name: 'a report of a run or a deployment says when the station made it, so a late one does not undo a newer',
    sql: `
      -- Both sides. A station stamps each report of a run (of a schedule's deployment) it
      -- queues with the moment it made it, always after its last one of that record (as
      -- harvest_files.updated_at); the server keeps the stamp of the last report it applied,
      -- and one older than that (set aside and offered again, sent again after a cut) is kept
      -- out as stale instead of setting newer progress back. Null: no report yet, or reports
      -- of a station too old to stamp them (taken as before).
      ALTER TABLE harvest_runs ADD COLUMN reported_at TEXT;
      ALTER TABLE harvest_schedules ADD COLUMN deployment_reported_at TEXT;
    `,
  },
  {
    version: 26,
    name: "an index of failed transfers by start, for the status's files failed today",
    sql: `
      -- Both sides (a station counts them). The status, read every second while files are
      -- copied, counts the files that failed today and are failed still: from today's failed
      -- transfers (this index, which holds the file too), each file then read by its id,
      -- instead of every failed file, however old, looked up among its transfers.
      CREATE INDEX harvest_transfers_failed ON harvest_transfers(started_at, file_id)
        WHERE status = 'failed';
    `,
  },
  {
    version: 27,
    name: 'notebook search: field names folded (NFC) as their values are',
    sql: `
      -- Both sides. A metadata condition looks for its field's name composed (NFC) from now on
      -- (fieldKey, shared/metadata/search.ts), as it did the value since migration 24: the
      -- names indexed before are folded, only those not composed. nfc() is open.ts's.
      UPDATE notebook_metadata_index SET name = nfc(name) WHERE name <> nfc(name);
    `,
  },
  {
    version: 28,
    name: "the files' work index holds their attempts, for the failure list's version",
    sql: `
      -- Both sides. The status's failures_version (harvest/records.ts), read every second while
      -- files are copied, sums the failed files' attempts too, so that a file failing again is
      -- seen where its next try comes out as it was (one not retried by itself): read from
      -- this index alone, as it was before without the attempts.
      DROP INDEX harvest_files_work;
      CREATE INDEX harvest_files_work ON harvest_files(state, next_attempt_at, attempts);
    `,
  },
  {
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
  },
  {
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
  },
  {
    version: 31,
    name: "ids of deleted uploads are never given again, so a refused station's request at work cannot reach another upload",
    // Server side. A station refused (a new key, disabled, deleted) loses its unfinished
    // uploads' records at once (dropUploadsOfRefused) while a request of it may still be at
    // work on one; SQLite gave the highest id freed to the next upload, another station's. The
    // receiver names uploads by uuid (uploads/receive.ts), and ids now only grow as well.
    sql: '',
    rebuildsTables: true,
    run: (db) => addAutoincrement(db, 'harvest_uploads'),
  },
  {
    version: 32,
    name: "an attempt's marker names the destination folders it made, for recovery to take back",
    sql: `
      -- Station side. A station killed while a copy is under way leaves the destination folders
      -- that copy's check made (the template's {yyyy}/{mm}/{dd}/...); the restart removes the
      -- partial, and takes those folders back too once empty (harvest/recovery.ts
      -- recoverInterrupted). made_folders is written with partial_path, in the same UPDATE: a
      -- JSON array of paths, outermost first; null when the check made none.
      ALTER TABLE harvest_files ADD COLUMN made_folders TEXT;
    `,
  },
  {
    version: 33,
    name: 'usage events validated on the server, sent to the station until it pushes them back',
    sql: `
      -- Server side. Staff may validate an ended usage event on the server as well as at the
      -- station; like the answers of migration 5 the validation is the server's to add, and the
      -- station that owns the event is sent it until it pushes the event back validated.
      -- validated_on_server_at / _by_id say when and by whom it was given here;
      -- validation_acked is 0 while the station has not pushed it back as its own.
      ALTER TABLE usage_events ADD COLUMN validated_on_server_at TEXT;
      ALTER TABLE usage_events ADD COLUMN validated_on_server_by_id INTEGER REFERENCES users(id);
      ALTER TABLE usage_events ADD COLUMN validation_acked INTEGER NOT NULL DEFAULT 1
        CHECK (validation_acked IN (0, 1));
      CREATE INDEX usage_events_validations_owed ON usage_events(station_id)
        WHERE validation_acked = 0;
    `,
  },
  {
    version: 34,
    name: 'the ended usage events still to validate, newest first, found by an index of them alone',
    sql: `
      -- Server side (the server's web page asks it: server/web/usageValidation.ts
      -- usageToValidate; a station carries it unused). A facility validates most of its
      -- usage; staff asking for the ended events nobody has validated yet would otherwise walk
      -- every event, newest first, past the validated ones.
      CREATE INDEX usage_events_to_validate ON usage_events(start, id)
        WHERE validated = 0 AND "end" IS NOT NULL;
    `,
  },
];

/**
 * Makes `table` anew with AUTOINCREMENT on its id, rows, indexes and triggers as they were
 * (SQLite's procedure for a change ALTER TABLE cannot make; foreign keys off meanwhile).
 */
function addAutoincrement(db: Db, table: string): void {
  const sql = db
    .prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?")
    .pluck()
    .get(table) as string;
  const head = `CREATE TABLE ${table} (`;
  const made = sql.replace(/\bid INTEGER PRIMARY KEY,/, 'id INTEGER PRIMARY KEY AUTOINCREMENT,');
  if (!sql.startsWith(head) || made === sql) {
    throw new Error(`migration: ${table} is not made as expected: ${sql.slice(0, 80)}`);
  }
  const kept = db
    .prepare(
      `SELECT sql FROM sqlite_master WHERE tbl_name = ? AND type IN ('index', 'trigger')
         AND sql IS NOT NULL ORDER BY type, name`,
    )
    .pluck()
    .all(table) as string[];
  const columns = (
    db.prepare('SELECT name FROM pragma_table_info(?)').pluck().all(table) as string[]
  )
    .map((name) => `"${name}"`)
    .join(', ');
  const fresh = `${table}_autoincrement`;
  db.exec(`CREATE TABLE ${fresh} (${made.slice(head.length)}`);
  db.exec(`INSERT INTO ${fresh} (${columns}) SELECT ${columns} FROM ${table} ORDER BY id`);
  db.exec(`DROP TABLE ${table}`);
  db.exec(`ALTER TABLE ${fresh} RENAME TO ${table}`);
  for (const statement of kept) db.exec(statement);
}

/**
 * The triggers of migration 3 that log a change of `table` as a change of `entity` (named by
 * `uuidExpr`, with ROW standing for NEW or OLD). Kept byte-stable: migration 3 has shipped
 * once it has.
 */
function changeTriggers(
  table: string,
  entity: string,
  uuidExpr: string,
  updateColumns: string | null,
): string {
  const notStation = `coalesce((SELECT value FROM settings WHERE key = 'mode'), '') <> '"station"'`;
  const body = (row: 'NEW' | 'OLD'): string =>
    `INSERT INTO sync_changes (entity, uuid) VALUES ('${entity}', ${uuidExpr.replaceAll('ROW', row)});`;
  const update = updateColumns === null ? '' : `UPDATE OF uuid, ${updateColumns}`;
  return `
      CREATE TRIGGER ${table}_sync_insert AFTER INSERT ON ${table} WHEN ${notStation}
      BEGIN ${body('NEW')} END;
      CREATE TRIGGER ${table}_sync_update AFTER ${update || 'UPDATE'} ON ${table} WHEN ${notStation}
      BEGIN ${body('OLD')} ${body('NEW')} END;
      CREATE TRIGGER ${table}_sync_delete AFTER DELETE ON ${table} WHEN ${notStation}
      BEGIN ${body('OLD')} END;`;
}

export const LATEST_VERSION = migrations[migrations.length - 1]?.version ?? 0;
