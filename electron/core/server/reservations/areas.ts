/**
 * Areas: a facility resource like a tool (a room, a bay), with the tools in it. Reserving an
 * area also holds its tools (book.ts).
 */
import type { AreaInput, AreaView } from '../../../../shared/reservationApi.js';
import type { Db } from '../../db/open.js';
import { fieldError } from '../../util/errors.js';
import { newUuid } from '../../util/ids.js';

interface AreaRow {
  id: number;
  uuid: string;
  name: string;
}

function toolsOf(db: Db, areaId: number): number[] {
  return db
    .prepare('SELECT tool_id FROM area_tools WHERE area_id = ? ORDER BY tool_id')
    .pluck()
    .all(areaId) as number[];
}

export function listAreas(db: Db): { areas: AreaView[] } {
  const rows = db.prepare('SELECT id, uuid, name FROM areas ORDER BY name').all() as AreaRow[];
  return { areas: rows.map((row) => ({ ...row, tools: toolsOf(db, row.id) })) };
}

export function saveArea(db: Db, input: AreaInput, now: string): { area: AreaView } {
  const id = input.id ?? null;
  const savedId = db
    .transaction((): number => {
      if (id !== null && !db.prepare('SELECT 1 FROM areas WHERE id = ?').get(id)) {
        throw fieldError('id', `no area with id ${id}`, 'not_found');
      }
      const taken = db
        .prepare('SELECT 1 FROM areas WHERE name = ? AND id <> ?')
        .get(input.name, id ?? -1);
      if (taken) throw fieldError('name', `an area named ${input.name} exists`, 'conflict');
      const missing = [...new Set(input.tools)].filter(
        (tool) => !db.prepare('SELECT 1 FROM tools WHERE id = ?').get(tool),
      );
      if (missing.length) throw fieldError('tools', `no tool with id ${missing.join(', ')}`);
      let areaId: number;
      if (id === null) {
        areaId = Number(
          db
            .prepare('INSERT INTO areas (uuid, name, created_at, updated_at) VALUES (?, ?, ?, ?)')
            .run(newUuid(), input.name, now, now).lastInsertRowid,
        );
      } else {
        areaId = id;
        db.prepare('UPDATE areas SET name = ?, updated_at = ? WHERE id = ?').run(
          input.name,
          now,
          id,
        );
      }
      db.prepare('DELETE FROM area_tools WHERE area_id = ?').run(areaId);
      const insert = db.prepare('INSERT INTO area_tools (area_id, tool_id) VALUES (?, ?)');
      for (const tool of new Set(input.tools)) insert.run(areaId, tool);
      return areaId;
    })
    .immediate();
  const row = db.prepare('SELECT id, uuid, name FROM areas WHERE id = ?').get(savedId) as AreaRow;
  return { area: { ...row, tools: toolsOf(db, savedId) } };
}
