/**
 * Areas: a facility resource like a tool (a room, a bay), with the tools in it. Reserving an
 * area also holds its tools (book.ts).
 */
import type { AreaInput, AreaView } from '../../../../shared/reservationApi.js';
import type { Db } from '../../db/open.js';
import { fieldError } from '../../util/errors.js';
import { changedElsewhere } from '../admin/facilitySaves.js';
import { newUuid } from '../../util/ids.js';

interface AreaRow {
  id: number;
  uuid: string;
  name: string;
  updated_at: string;
}

function toolsOf(db: Db, areaId: number): number[] {
  return db
    .prepare('SELECT tool_id FROM area_tools WHERE area_id = ? ORDER BY tool_id')
    .pluck()
    .all(areaId) as number[];
}

export function listAreas(db: Db): { areas: AreaView[] } {
  const rows = db
    .prepare('SELECT id, uuid, name, updated_at FROM areas ORDER BY name')
    .all() as AreaRow[];
  return { areas: rows.map((row) => ({ ...row, tools: toolsOf(db, row.id) })) };
}

/**
 * An area's bookings hold the tools the area holds now (book.ts): a tool added to it may not
 * meet another booking of that tool, its own or another area's, while one of the area's
 * bookings that has not ended holds it; the save is refused naming both (cancel one first).
 * A tool taken out of an area leaves its bookings holding less, which meets nothing.
 */
function refuseDoubleBooking(db: Db, areaId: number, tool: number, now: string): void {
  const hit = db
    .prepare(
      `SELECT r.id AS ours, q.id AS theirs, q.start, q."end", t.name AS tool
       FROM reservations r
       JOIN reservations q ON q.cancelled = 0 AND q.id <> r.id
         AND q.start < r."end" AND q."end" > r.start
         AND (q.tool_id = @tool OR q.area_id IN
           (SELECT area_id FROM area_tools WHERE tool_id = @tool AND area_id <> @area))
       JOIN tools t ON t.id = @tool
       WHERE r.area_id = @area AND r.cancelled = 0 AND r."end" > @now
       ORDER BY r.start, q.start LIMIT 1`,
    )
    .get({ area: areaId, tool, now }) as
    { ours: number; theirs: number; start: string; end: string; tool: string } | undefined;
  if (!hit) return;
  throw fieldError(
    'tools',
    `${hit.tool} is booked from ${hit.start} to ${hit.end} (reservation ${hit.theirs}) while ` +
      `reservation ${hit.ours} of this area would hold it too; cancel one of them first`,
    'conflict',
  );
}

export function saveArea(db: Db, input: AreaInput, now: string): { area: AreaView } {
  const id = input.id ?? null;
  const savedId = db
    .transaction((): number => {
      if (id !== null) {
        const stored = db.prepare('SELECT name, updated_at FROM areas WHERE id = ?').get(id) as
          { name: string; updated_at: string } | undefined;
        if (!stored) throw fieldError('id', `no area with id ${id}`, 'not_found');
        if (input.updated_at !== undefined && stored.updated_at !== input.updated_at) {
          throw changedElsewhere(stored.name, stored.updated_at);
        }
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
      const before = new Set(id === null ? [] : toolsOf(db, id));
      const tools = new Set(input.tools);
      // Only what changes: the database keeps when the area held each tool (migration 43).
      const remove = db.prepare('DELETE FROM area_tools WHERE area_id = ? AND tool_id = ?');
      for (const tool of before) if (!tools.has(tool)) remove.run(areaId, tool);
      const insert = db.prepare('INSERT INTO area_tools (area_id, tool_id) VALUES (?, ?)');
      for (const tool of tools) if (!before.has(tool)) insert.run(areaId, tool);
      for (const tool of tools) {
        if (!before.has(tool)) refuseDoubleBooking(db, areaId, tool, now);
      }
      return areaId;
    })
    .immediate();
  const row = db
    .prepare('SELECT id, uuid, name, updated_at FROM areas WHERE id = ?')
    .get(savedId) as AreaRow;
  return { area: { ...row, tools: toolsOf(db, savedId) } };
}
