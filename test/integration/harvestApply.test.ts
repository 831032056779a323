/**
 * A station applying the server's harvest configuration (electron/core/sync/applyHarvest.ts)
 * over what its own bundle made: names the server reuses never block the delta, a local record
 * is adopted by name only when the server did not send it under another uuid, and a hook for an
 * instrument not taken here is not taken either (it would apply to every instrument).
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../../electron/core/db/open.js';
import { enqueueFile, recordFile } from '../../electron/core/harvest/records.js';
import { getFileView } from '../../electron/core/harvest/views.js';
import { applyDelta } from '../../electron/core/sync/apply.js';
import { pendingHistory, takeHistoryPage } from '../../electron/core/sync/history.js';
import { keepSent } from '../../electron/core/sync/resend.js';
import type {
  FacilityDelta,
  SyncHarvest,
  SyncHistoryFile,
} from '../../electron/core/sync/protocol.js';
import { newUuid } from '../../electron/core/util/ids.js';
import { makeArk } from '../../shared/ark.js';
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

  it("waits for an instrument's history, takes it page by page, and takes a page again harmlessly", () => {
    const db = stationDb();
    const camera = newUuid();
    const config: SyncHarvest = {
      storage_locations: [],
      instruments: [
        {
          uuid: camera,
          name: 'camera',
          description: '',
          tool_uuid: TOOL,
          watch: [{ path: '/data', include: [], exclude: [] }],
          stability_seconds: 5,
          storage_location_uuid: null,
          destination_template: '{filename}',
          enabled: true,
        },
      ],
      hooks: [],
      schedules: [],
    };
    applyDelta(db, delta(config, 1));
    // The local instrument of that name took the server's uuid: it waits for its history.
    expect(pendingHistory(db)).toEqual([
      { instrumentId: 1, uuid: camera, name: 'camera', after: 0, fromServer: 1 },
    ]);
    const file = (n: number, state: SyncHistoryFile['state'], updated = T0): SyncHistoryFile => ({
      id: n,
      uuid: `0192f3a4-6c1e-7d2a-9b3c-${String(n).padStart(12, '0')}`,
      persistent_id: makeArk({ naan: '99999', shoulder: 'fk4' }, `h${String(n).padStart(7, '0')}`),
      persistent_id_type: 'ark',
      watch_path: '/data',
      source_path: `/data/f${n}.tif`,
      relative_path: `f${n}.tif`,
      filename: `f${n}.tif`,
      size: n,
      mtime_ms: 1.5e12 + 0.25,
      xxhash: state === 'done' ? 'ab'.repeat(16) : null,
      hash_algorithm: 'xxh3-128',
      first_discovered_at: T0,
      usage_event_uuid: newUuid(),
      metadata_: { n },
      state,
      updated_at: updated,
      transfers:
        state === 'done'
          ? [
              {
                uuid: `0192f3a4-7a2b-7c3d-8e4f-${String(n).padStart(12, '0')}`,
                status: 'completed',
                storage_location_uuid: newUuid(),
                destination_path: `/archive/f${n}.tif`,
                bytes_transferred: n,
                dest_checksum: 'ab'.repeat(16),
                checksum_verified: true,
                started_at: T0,
                completed_at: T0,
                error: '',
                note: '',
              },
            ]
          : [],
    });
    // The usage each was made during, held on the other station: sent as the server knows it.
    const context = (usage: string | null): Record<string, unknown> => ({
      usage_event: usage,
      tool: 'SEM',
      start: T0,
      end: null,
      user: { username: 'ada', name: 'Ada Lovelace', email: null },
      project: { name: 'Cathodes', application_identifier: null },
    });
    const failed = file(2, 'failed');
    failed.usage_context = context(failed.usage_event_uuid);
    // A context that names another usage than the record's, or is not one, is not trusted.
    const done = { ...file(1, 'done'), usage_context: context(newUuid()) };
    const first = { files: [done, failed], next: 2 };
    const fourth = file(4, 'waiting');
    const malformed = { ...fourth, usage_context: { usage_event: fourth.usage_event_uuid } };
    expect(takeHistoryPage(db, 1, first)).toBe(false);
    expect(pendingHistory(db)[0]?.after).toBe(2);
    expect(takeHistoryPage(db, 1, first)).toBe(false); // the same page again: nothing doubles
    // Made where the share was mounted elsewhere: placed under the folder watched here.
    const moved = { ...file(3, 'gone'), watch_path: '/mnt/old', source_path: '/mnt/old/a/f3.tif' };
    moved.relative_path = 'a/f3.tif';
    expect(takeHistoryPage(db, 1, { files: [moved, malformed], next: null })).toBe(true);
    expect(pendingHistory(db)).toEqual([]);
    const rows = db
      .prepare(
        `SELECT persistent_id, state, mtime_ms, usage_event_id, metadata_ FROM harvest_files
         ORDER BY id`,
      )
      .all() as { persistent_id: string; state: string; mtime_ms: number }[];
    expect(rows.map((r) => [r.state, r.mtime_ms])).toEqual([
      ['done', 1.5e12 + 0.25],
      ['waiting', 1.5e12 + 0.25], // failed on the other station: due here
      ['gone', 1.5e12 + 0.25],
      ['waiting', 1.5e12 + 0.25],
    ]);
    expect(rows[0]).toMatchObject({ usage_event_id: null, metadata_: '{"n":1}' });
    const elsewhere = db
      .prepare('SELECT usage_elsewhere FROM harvest_files ORDER BY id')
      .pluck()
      .all() as (string | null)[];
    expect(elsewhere[0]).toBeNull();
    expect(JSON.parse(elsewhere[1] ?? 'null')).toEqual(context(failed.usage_event_uuid));
    expect(elsewhere[2]).toBeNull();
    expect(elsewhere[3]).toBeNull(); // names no user or project: not kept
    // Its uuid stands for the usage in the record as viewed and as pushed back.
    expect(getFileView(db, 2)?.usage_event).toBe(failed.usage_event_uuid);
    db.transaction(() => enqueueFile(db, 2))();
    const pushed = db.prepare('SELECT payload FROM outbox').pluck().get() as string;
    expect(JSON.parse(pushed)).toMatchObject({ usage_event_uuid: failed.usage_event_uuid });
    db.prepare('DELETE FROM outbox').run();
    expect(
      db.prepare('SELECT watch_path, source_path FROM harvest_files WHERE id = 3').get(),
    ).toEqual({ watch_path: '/data', source_path: '/data/a/f3.tif' });
    expect(db.prepare('SELECT count(*) FROM harvest_transfers').pluck().get()).toBe(1);
    // No outbox rows: the server holds these records.
    expect(db.prepare('SELECT count(*) FROM outbox').pluck().get()).toBe(0);

    // Taken again later (the instrument came back): a newer version replaces the one held,
    // unless a copy of that file is under way here.
    db.prepare(
      "UPDATE harvest_files SET partial_path = '/archive/.f2.tif.x.partial' WHERE id = 2",
    ).run();
    const later = '2026-02-01T00:00:00.000Z';
    expect(
      takeHistoryPage(db, 1, {
        files: [file(1, 'gone', later), file(2, 'done', later)],
        next: null,
      }),
    ).toBe(true);
    expect(db.prepare('SELECT state FROM harvest_files ORDER BY id').pluck().all()).toEqual([
      'gone',
      'waiting',
      'gone',
      'waiting',
    ]);

    // Turned off on the server and on again: it waits for its history once more.
    applyDelta(
      db,
      delta({ ...config, instruments: [{ ...config.instruments[0], enabled: false }] }, 2),
    );
    expect(pendingHistory(db)).toEqual([]);
    applyDelta(db, delta(config, 3));
    expect(pendingHistory(db)).toHaveLength(1);
    db.close();
  });
});

describe('runs the server queued for an instrument this station does not have', () => {
  it('are reported failed once, with why, however often a pull lists them again', () => {
    const db = stationDb();
    const run = {
      uuid: newUuid(),
      instrument_uuid: newUuid(),
      schedule_uuid: null,
      requested_at: T0,
    };
    // A pull with no change of the harvest configuration (none of it in the delta).
    const pull = (cursor: number): ReturnType<typeof applyDelta> => {
      const d: FacilityDelta = {
        ...delta({ storage_locations: [], instruments: [], hooks: [], schedules: [] }, cursor),
        runs: [run],
      };
      delete d.harvest;
      return applyDelta(db, d);
    };
    const reports = (): { id: number; payload: string }[] =>
      db
        .prepare("SELECT id, payload FROM outbox WHERE kind = 'harvest_run' AND record_uuid = ?")
        .all(run.uuid) as { id: number; payload: string }[];
    const first = pull(1);
    expect(first.runsDeclined).toEqual([
      {
        run: run.uuid,
        instrument: run.instrument_uuid,
        reason: 'this station does not run that instrument',
      },
    ]);
    expect(reports()).toHaveLength(1);
    expect(JSON.parse(reports()[0].payload)).toMatchObject({
      uuid: run.uuid,
      state: 'failed',
      error: 'this station does not run that instrument',
    });
    // Not taken yet (the push failed, or the server refused it and it is set aside): the
    // server lists the run at every pull meanwhile, and it stays one report, said once.
    db.prepare(
      "UPDATE outbox SET held_until = ?, refusal = 'refused', refusal_code = 'forbidden', refusals = 1",
    ).run('2999-01-01T00:00:00.000Z');
    expect(pull(2).runsDeclined).toEqual([]);
    expect(pull(3).runsDeclined).toEqual([]);
    expect(reports()).toHaveLength(1);
    // Taken, and a pull sent before the server's answer still lists it: not reported again.
    db.transaction(() => keepSent(db, [reports()[0].id]))();
    expect(pull(4).runsDeclined).toEqual([]);
    expect(reports()).toHaveLength(0);
    db.close();
  });

  // harvest/folderMoves.ts; the same through a bundle and a harvest: watchMoved.test.ts.
  it("moves a folder's file records when the server's configuration moves the folder", () => {
    const db = stationDb();
    const camera = newUuid();
    const config = (...paths: string[]): SyncHarvest => ({
      storage_locations: [],
      instruments: [
        {
          uuid: camera,
          name: 'camera',
          description: '',
          tool_uuid: TOOL,
          watch: paths.map((path) => ({ path, include: [], exclude: [] })),
          stability_seconds: 5,
          storage_location_uuid: null,
          destination_template: '{filename}',
          enabled: true,
        },
      ],
      hooks: [],
      schedules: [],
    });
    let cursor = 0;
    const apply = (harvest: SyncHarvest): void => {
      cursor += 1;
      applyDelta(db, delta(harvest, cursor));
    };
    apply(config('/mnt/old/raw', '/mnt/eds'));
    const instrumentId = db
      .prepare('SELECT id FROM instruments WHERE uuid = ?')
      .pluck()
      .get(camera) as number;
    const record = (watchPath: string, relativePath: string): number =>
      recordFile(db, {
        instrumentId,
        watchPath,
        relativePath,
        sourcePath: join(watchPath, ...relativePath.split('/')),
        filename: relativePath.split('/').pop() ?? '',
        size: 1,
        mtimeMs: 1,
        firstDiscoveredAt: T0,
        usageEventId: null,
      });
    const image = record('/mnt/old/raw', 'day1/image.tif');
    const spectrum = record('/mnt/eds', 'spectrum.emd');
    const sourceOf = (id: number): unknown =>
      db.prepare('SELECT watch_path, source_path FROM harvest_files WHERE id = ?').get(id);

    // Two folders changed at once: which became which cannot be told, nothing moves.
    apply(config('/mnt/new/raw', '/mnt/eds2'));
    expect(sourceOf(image)).toEqual({
      watch_path: '/mnt/old/raw',
      source_path: '/mnt/old/raw/day1/image.tif',
    });
    // Back, and then one moved: its records follow; the other folder's stay.
    apply(config('/mnt/old/raw', '/mnt/eds'));
    apply(config('/mnt/new/raw', '/mnt/eds'));
    expect(sourceOf(image)).toEqual({
      watch_path: '/mnt/new/raw',
      source_path: '/mnt/new/raw/day1/image.tif',
    });
    expect(sourceOf(spectrum)).toEqual({
      watch_path: '/mnt/eds',
      source_path: '/mnt/eds/spectrum.emd',
    });
    // Moved again where a record of that path is held already (watched there before): the
    // record held there stays the one found at that path, the other stays where it was.
    const there = record('/mnt/other/raw', 'day1/image.tif');
    apply(config('/mnt/other/raw', '/mnt/eds'));
    expect(sourceOf(image)).toEqual({
      watch_path: '/mnt/new/raw',
      source_path: '/mnt/new/raw/day1/image.tif',
    });
    expect(sourceOf(there)).toEqual({
      watch_path: '/mnt/other/raw',
      source_path: '/mnt/other/raw/day1/image.tif',
    });
    db.close();
  });
});
