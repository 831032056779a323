/**
 * The reservations part of a station's delta (server/sync/exportReservations.ts), on a real
 * SQLite file with the change log's triggers: which reservations a station of the SEM gets (its
 * own tool's and those of areas holding it, not cancelled, not ended), and when the list is
 * sent again (a change that can alter it; not a booking of another tool).
 */
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../../electron/core/db/open.js';
import { facilityDelta, latestChange } from '../../electron/core/server/sync/export.js';
import { newUuid } from '../../electron/core/util/ids.js';
import { tempDir } from './helpers.js';

const T0 = '2026-01-01T00:00:00.000Z';
const SEM = 1;
const AFM = 2;
let db: Db;
const station = { id: 1, uuid: 'station-sem', name: 'sem', tool_id: SEM };

const future = (hours: number): string => new Date(Date.now() + hours * 3600_000).toISOString();

function book(
  target: { tool: number } | { area: number },
  start: string,
  end: string,
  cancelled = 0,
): string {
  const uuid = newUuid();
  db.prepare(
    `INSERT INTO reservations (uuid, user_id, creator_id, project_id, tool_id, area_id, start,
       "end", cancelled, question_data, created_at, updated_at)
     VALUES (?, 1, 1, 1, ?, ?, ?, ?, ?, '{"a":1}', ?, ?)`,
  ).run(
    uuid,
    'tool' in target ? target.tool : null,
    'area' in target ? target.area : null,
    start,
    end,
    cancelled,
    T0,
    T0,
  );
  return uuid;
}

const listed = (cursor: number): string[] | undefined =>
  facilityDelta(db, station, cursor).reservations?.map((r) => r.uuid);

beforeAll(() => {
  db = openDatabase(join(tempDir('labstation-sync-reservations-'), 'server.db'));
  db.exec(`INSERT INTO settings (key, value) VALUES ('mode', '"server"');
    INSERT INTO users (id, uuid, username, created_at, updated_at) VALUES (1, 'u1', 'alice', '${T0}', '${T0}');
    INSERT INTO projects (id, uuid, name, created_at, updated_at) VALUES (1, 'p1', 'P1', '${T0}', '${T0}');
    INSERT INTO tools (id, uuid, name, created_at, updated_at) VALUES (${SEM}, 't1', 'SEM', '${T0}', '${T0}');
    INSERT INTO tools (id, uuid, name, created_at, updated_at) VALUES (${AFM}, 't2', 'AFM', '${T0}', '${T0}');
    INSERT INTO stations (id, uuid, name, tool_id, key_hash, created_at)
      VALUES (1, 'station-sem', 'sem', ${SEM}, 'h', '${T0}');
    INSERT INTO areas (id, uuid, name, created_at, updated_at) VALUES (1, 'area-bay', 'Bay', '${T0}', '${T0}');
    INSERT INTO areas (id, uuid, name, created_at, updated_at) VALUES (2, 'area-afm', 'AFM room', '${T0}', '${T0}');
    INSERT INTO area_tools (area_id, tool_id) VALUES (1, ${SEM}), (1, ${AFM}), (2, ${AFM});`);
});

describe("a station's reservations in its delta", () => {
  it('lists the tool’s and its areas’ reservations that have not ended, by start', () => {
    const own = book({ tool: SEM }, future(2), future(3));
    const running = book({ tool: SEM }, future(-1), future(1));
    const bay = book({ area: 1 }, future(5), future(6));
    book({ tool: SEM }, future(-3), future(-2)); // over
    book({ tool: SEM }, future(7), future(8), 1); // cancelled
    book({ tool: AFM }, future(2), future(3)); // another tool
    book({ area: 2 }, future(2), future(3)); // an area without the SEM
    expect(listed(0)).toEqual([running, own, bay]);
    const delta = facilityDelta(db, station, 0);
    expect(delta.reservations?.find((r) => r.uuid === bay)).toMatchObject({
      tool_uuid: null,
      area_name: 'Bay',
      target_name: 'Bay',
      user_name: 'alice',
      project_name: 'P1',
      question_data: '{"a":1}',
    });
  });

  it('is sent again after a change that can alter it, and not after a booking of another tool', () => {
    let cursor = latestChange(db);
    expect(listed(cursor)).toBeUndefined();

    book({ tool: AFM }, future(10), future(11));
    expect(listed(cursor)).toBeUndefined();
    cursor = latestChange(db);

    const mine = book({ tool: SEM }, future(10), future(11));
    expect(listed(cursor)).toContain(mine);
    cursor = latestChange(db);

    db.prepare('UPDATE reservations SET cancelled = 1, updated_at = ? WHERE uuid = ?').run(
      T0,
      mine,
    );
    expect(listed(cursor)).not.toContain(mine);
    cursor = latestChange(db);

    // The SEM leaves the bay: the bay's reservation is no longer the station's.
    db.prepare('DELETE FROM area_tools WHERE area_id = 1 AND tool_id = ?').run(SEM);
    const after = listed(cursor);
    expect(after).toBeDefined();
    expect(
      after?.some((uuid) => {
        const row = db.prepare('SELECT area_id FROM reservations WHERE uuid = ?').get(uuid) as {
          area_id: number | null;
        };
        return row.area_id !== null;
      }),
    ).toBe(false);
  });
});
