import type { Migration } from '../migrations.js';

export const migration043: Migration = {
  version: 43,
  name: 'when each tool was in each area',
  sql: `
      -- Server side: the spans of time an area held a tool (area_tools is the present). An
      -- experiment record (nemo/experiments.ts) counts an area's booking for a usage of a tool
      -- only where the area held the tool during the usage: an area's tools changed later do
      -- not rewrite the records of past usage. Until NULL: held now. The tools in areas before
      -- this migration are taken as held since ever.
      CREATE TABLE area_tool_spans (
        id INTEGER PRIMARY KEY,
        area_id INTEGER NOT NULL REFERENCES areas(id) ON DELETE CASCADE,
        tool_id INTEGER NOT NULL REFERENCES tools(id) ON DELETE CASCADE,
        held_from TEXT NOT NULL,
        held_until TEXT
      ) STRICT;
      CREATE INDEX area_tool_spans_tool ON area_tool_spans(tool_id, held_from);
      CREATE UNIQUE INDEX area_tool_spans_open ON area_tool_spans(area_id, tool_id)
        WHERE held_until IS NULL;
      INSERT INTO area_tool_spans (area_id, tool_id, held_from)
        SELECT area_id, tool_id, '0000-01-01T00:00:00.000Z' FROM area_tools;
      -- Kept by the database, whoever writes area_tools.
      CREATE TRIGGER area_tool_spans_begin AFTER INSERT ON area_tools BEGIN
        INSERT INTO area_tool_spans (area_id, tool_id, held_from)
          VALUES (NEW.area_id, NEW.tool_id, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));
      END;
      CREATE TRIGGER area_tool_spans_end AFTER DELETE ON area_tools BEGIN
        UPDATE area_tool_spans SET held_until = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
          WHERE area_id = OLD.area_id AND tool_id = OLD.tool_id AND held_until IS NULL;
      END;
    `,
};
