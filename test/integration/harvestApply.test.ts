/**
 * A station applying the server's harvest configuration (electron/core/sync/applyHarvest.ts)
 * over what its own bundle made: names the server reuses never block the delta, a local record
 * is adopted by name only when the server did not send it under another uuid, and a hook for an
 * instrument not taken here is not taken either (it would apply to every instrument).
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../../electron/core/db/open.js';
import { applyDelta } from '../../electron/core/sync/apply.js';
import type { FacilityDelta, SyncHarvest } from '../../electron/core/sync/protocol.js';
import { newUuid } from '../../electron/core/util/ids.js';
import { tempDir } from './helpers.js';

const TOOL = newUuid();
const T0 = '2026-01-01T00:00:00.000Z';

function stationDb(): Db {
  const db = openDatabase(join(tempDir('labstation-apply-'), 'station.db'));
  db.prepare(
    `INSERT INTO tools (uuid, name, category, operational, visible, shutdown, created_at,
       updated_at) VALUES (?, 'SEM', '', 1, 1, 0, ?, ?)`,
  ).run(TOOL, T0, T0);
  // What a local bundle made: a location and an instrument named as the server's will be.
  db.prepare(
    `INSERT INTO storage_locations (uuid, name, type, base_path, created_at, updated_at)
     VALUES (?, 'archive', 'local', '/local/archive', ?, ?)`,
  ).run(newUuid(), T0, T0);
  db.prepare(
    `INSERT INTO instruments (uuid, name, tool_id, watch, destination_template, created_at,
       updated_at) VALUES (?, 'camera', 1, '[{"path":"/data","include":[],"exclude":[]}]',
       '{filename}', ?, ?)`,
  ).run(newUuid(), T0, T0);
  return db;
}

function delta(harvest: SyncHarvest, cursor: number): FacilityDelta {
  return {
    cursor,
    full: false,
    station: { uuid: newUuid(), name: 'sem-pc', tool: 'SEM' },
    users: [],
    projects: [],
    tools: [],
    deleted: { users: [], projects: [], tools: [] },
    harvest,
  };
}

describe("applying the server's harvest configuration", () => {
  it('adopts local records by name, keeps them on a rename, and skips orphan hooks', () => {
    const db = stationDb();
    const location = newUuid();
    const camera = newUuid();
    const unknownInstrument = newUuid();
    const config: SyncHarvest = {
      storage_locations: [
        {
          uuid: location,
          name: 'archive',
          type: 'local',
          base_path: '/srv/archive',
          enabled: true,
        },
      ],
      instruments: [
        {
          uuid: camera,
          name: 'camera',
          description: '',
          tool_uuid: TOOL,
          watch: [{ path: '/data', include: ['*.tif'], exclude: [] }],
          stability_seconds: 5,
          storage_location_uuid: location,
          destination_template: '{instrument}/{filename}',
          enabled: true,
        },
      ],
      hooks: [
        {
          uuid: newUuid(),
          name: 'for-elsewhere',
          trigger: 'pre_transfer',
          kind: 'skip',
          config: { glob: '*' },
          priority: 1,
          instrument_uuid: unknownInstrument,
          enabled: true,
        },
      ],
      schedules: [],
    };
    applyDelta(db, delta(config, 1));
    // Adopted: the same rows, now with the server's uuids and settings.
    expect(db.prepare('SELECT count(*) FROM instruments').pluck().get()).toBe(1);
    expect(db.prepare('SELECT uuid, from_server FROM instruments').get()).toEqual({
      uuid: camera,
      from_server: 1,
    });
    expect(
      db.prepare('SELECT base_path FROM storage_locations WHERE uuid = ?').pluck().get(location),
    ).toBe('/srv/archive');
    // The skip hook for an instrument this station does not have would have skipped everything.
    expect(db.prepare('SELECT count(*) FROM harvest_hooks').pluck().get()).toBe(0);

    // The server now gives the name "camera" to another instrument (new uuid) and renames the
    // first: the delta applies, and the station ends with exactly the server's two.
    const second = newUuid();
    const renamed: SyncHarvest = {
      ...config,
      hooks: [],
      instruments: [
        { ...config.instruments[0], name: 'camera (old)' },
        { ...config.instruments[0], uuid: second, name: 'camera' },
      ],
    };
    expect(() => applyDelta(db, delta(renamed, 2))).not.toThrow();
    expect(
      db.prepare('SELECT name FROM instruments WHERE from_server = 1 ORDER BY name').pluck().all(),
    ).toEqual(['camera', 'camera (old)']);
    expect(db.prepare('SELECT name FROM instruments WHERE uuid = ?').pluck().get(second)).toBe(
      'camera',
    );
    db.close();
  });

  it('never blocks on an unlisted record holding a name the server now uses', () => {
    const db = stationDb();
    // An instrument the server sent earlier under another uuid, and no longer lists, holds the
    // name the server now gives to a new one: it is not adopted (only local ones are).
    db.prepare("UPDATE instruments SET from_server = 1, name = 'scope'").run();
    const config: SyncHarvest = {
      storage_locations: [],
      instruments: [
        {
          uuid: newUuid(),
          name: 'scope',
          description: '',
          tool_uuid: TOOL,
          watch: [],
          stability_seconds: 5,
          storage_location_uuid: null,
          destination_template: '{filename}',
          enabled: true,
        },
      ],
      hooks: [],
      schedules: [],
    };
    expect(() => applyDelta(db, delta(config, 3))).not.toThrow();
    const names = db.prepare('SELECT name, enabled FROM instruments ORDER BY id').all() as {
      name: string;
      enabled: number;
    }[];
    // The server's own earlier record (another uuid) is renamed aside and disabled, not adopted.
    expect(names).toHaveLength(2);
    expect(names[0]?.name).toMatch(/^scope \(local \w+\)$/);
    expect(names[0]?.enabled).toBe(0);
    expect(names[1]).toEqual({ name: 'scope', enabled: 1 });
    db.close();
  });
});
