import type { Migration } from '../migrations.js';

export const migration002: Migration = {
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
};
