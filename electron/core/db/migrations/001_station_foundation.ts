import type { Migration } from '../migrations.js';

export const migration001: Migration = {
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
};
