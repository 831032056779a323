import type { Migration } from '../migrations.js';

export const migration009: Migration = {
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
};
