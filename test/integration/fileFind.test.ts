/**
 * "Find a file" on the station (harvest.files, the Data tab, `labstation files --search`) with
 * what people paste into it: a source path as the details show it on a Windows station (its
 * folder configured with "/"), a part of one typed with "\", a path under a folder no longer
 * watched, an ARK written with hyphens or in capitals; and the server's file list by a number
 * in the metadata. Records are written straight into a station's database.
 */
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeArk } from '../../shared/ark.js';
import { openDatabase } from '../../electron/core/db/open.js';
import { sourcePathIs } from '../../electron/core/harvest/records.js';
import { indexPaths, listFiles } from '../../electron/core/harvest/views.js';
import { listFiles as listServerFiles } from '../../electron/core/server/harvest/files.js';
import { tempDir } from './helpers.js';

const now = '2026-01-05T10:00:00.000Z';

describe('finding a file by what a person pastes', () => {
  let db: Database.Database;
  const arkOf = (id: number): string => makeArk({ naan: '99999', shoulder: 'fk4' }, `0bc1df${id}`);
  const record = (
    id: number,
    instrument: number,
    watch: string,
    relative: string,
    source: string,
    metadata: unknown = {},
  ): void => {
    db.prepare(
      `INSERT INTO harvest_files (id, uuid, instrument_id, persistent_id, watch_path,
         relative_path, source_path, filename, size, mtime_ms, first_discovered_at, updated_at,
         metadata_)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1, 1, ?, ?, ?)`,
    ).run(
      id,
      `f${id}`,
      instrument,
      arkOf(id),
      watch,
      relative,
      source,
      relative.split('/').pop(),
      now,
      now,
      JSON.stringify(metadata),
    );
  };
  const found = (search: string): number[] => listFiles(db, { search }).map((f) => f.id);

  beforeAll(() => {
    db = openDatabase(join(tempDir(), 'files.db'));
    db.exec(`INSERT INTO settings (key, value) VALUES ('mode', '"station"');
      INSERT INTO tools (uuid, name, created_at, updated_at) VALUES ('t', 't', '${now}', '${now}');
      INSERT INTO instruments (uuid, name, tool_id, destination_template, watch, created_at, updated_at)
        VALUES ('w', 'win', 1, '{relative_path}', '[{"path":"C:/Data"}]', '${now}', '${now}'),
               ('l', 'linux', 1, '{relative_path}', '[{"path":"/mnt/sem2"}]', '${now}', '${now}')`);
    // On Windows, the walk joins the folder and the path below it (path.win32.join): "\" all
    // through; the record keeps the folder as configured.
    record(1, 1, 'C:/Data', '2026-11-20/grid3_0001.dm4', 'C:\\Data\\2026-11-20\\grid3_0001.dm4');
    record(2, 1, 'C:/Data', '2026-11-20/grid3_0002.dm4', 'C:\\Data\\2026-11-20\\grid3_0002.dm4');
    record(3, 1, 'C:/Data', '2026-11-21/other.dm4', 'C:\\Data\\2026-11-21\\other.dm4');
    // Made while the instrument watched /mnt/sem, which it no longer does.
    record(4, 2, '/mnt/sem', 'run/a.tif', '/mnt/sem/run/a.tif');
    record(5, 2, '/mnt/sem2', 'Run/b.tif', '/mnt/sem2/Run/b.tif');
    record(6, 2, '/mnt/sem2', 'run/c.tif', '/mnt/sem2/run/c.tif');
    indexPaths(db);
    // Made since the index was last brought up to date: read as they are.
    record(7, 1, 'C:/Data', '2026-11-20/grid3_0003.dm4', 'C:\\Data\\2026-11-20\\grid3_0003.dm4');
  });

  afterAll(() => db.close());

  it('a Windows path as the details show it, with either slash and in any letter case', () => {
    expect(found('C:\\Data\\2026-11-20\\grid3_0001.dm4')).toEqual([1]);
    expect(found('C:\\Data\\2026-11-20\\grid3_0001.dm4')).toEqual([1]);
    expect(found('c:\\data\\2026-11-20\\GRID3_0001.DM4')).toEqual([1]);
    expect(found('C:/Data/2026-11-20/grid3_0001.dm4')).toEqual([1]);
    // A folder: its files, indexed or not, and no file of a folder whose name it begins.
    expect(found('C:\\Data\\2026-11-20')).toEqual([7, 2, 1]);
    expect(found('C:\\Data\\2026-11-20\\')).toEqual([7, 2, 1]);
    expect(found('C:\\Data\\2026-11-2')).toEqual([]);
    expect(found('c:\\data')).toEqual([7, 3, 2, 1]);
    // A part of a path, typed with "\" as Windows writes it.
    expect(found('2026-11-20\\grid3')).toEqual([7, 2, 1]);
  });

  it('a path below a folder on Linux is taken as written, letter case and all', () => {
    expect(found('/mnt/sem2/run')).toEqual([6]);
    expect(found('/mnt/sem2/Run')).toEqual([5]);
    expect(found('/mnt/sem2/Run/b.tif')).toEqual([5]);
    expect(found('/mnt/sem2/run/B.tif')).toEqual([]);
  });

  it('a path under a folder no longer watched finds its file by the path stored', () => {
    expect(found('/mnt/sem/run/a.tif')).toEqual([4]);
    // Text that begins with "/" and is no stored path is text a relative path may hold.
    expect(found('/a.tif')).toEqual([4]);
    const path = '/mnt/sem/run/a.tif';
    const plan = (
      db
        .prepare(
          `EXPLAIN QUERY PLAN SELECT 1 FROM harvest_files f
             WHERE f.instrument_id IN (SELECT id FROM instruments) AND ${sourcePathIs('f')}`,
        )
        .all(path, 0, path) as { detail: string }[]
    ).map((r) => r.detail);
    expect(plan.join('\n')).toMatch(
      /USING (COVERING )?INDEX harvest_files_source \(instrument_id=\? AND source_path=\?\)/,
    );
  });

  it('a Windows path under a folder no longer watched, with either slash and in any case', () => {
    record(9, 1, 'E:\\Old', 'x/y.dm4', 'E:\\Old\\x\\y.dm4');
    expect(found('E:\\Old\\x\\y.dm4')).toEqual([9]);
    expect(found('e:/old/x/Y.DM4')).toEqual([9]);
    expect(found('e:/old/x/Y.DM')).toEqual([]);
    // A record from elsewhere (a history, another client) holding "/".
    record(11, 1, 'F:/Acq', 'run-12/grid-3.tif', 'F:/Acq/run-12/grid-3.tif');
    expect(found('f:\\acq\\run-12\\grid-3.tif')).toEqual([11]);
    expect(found('F:/Acq/run-12/grid-3.tif')).toEqual([11]);
  });

  it('a Windows folder finds the files recorded while it was configured in other case or slashes', () => {
    record(10, 1, 'c:\\data\\', '2026-11-19/early.dm4', 'c:\\data\\2026-11-19\\early.dm4');
    expect(found('C:/Data')).toEqual([10, 7, 3, 2, 1]);
    expect(found('C:\\Data\\2026-11-19')).toEqual([10]);
    expect(found('C:\\DATA\\2026-11-19\\early.dm4')).toEqual([10]);
  });

  it('an ARK written with hyphens or in capitals', () => {
    const ark = arkOf(2);
    const name = ark.slice('ark:99999/'.length);
    expect(found(ark)).toEqual([2]);
    expect(found(`ark:99999/${name.slice(0, 3)}-${name.slice(3)}`)).toEqual([2]);
    expect(found(ark.toUpperCase())).toEqual([2]);
  });

  it("the server's file list reads a metadata value as a number only as JSON writes one", () => {
    record(8, 2, '/mnt/sem2', 'run/n.tif', '/mnt/sem2/run/n.tif', { n: 16 });
    const admin = { id: 1, role: 'admin' as const };
    const ids = (value: string): number[] =>
      listServerFiles(db, admin, { metadata_key: 'n', metadata_value: value }, 'UTC').items.map(
        (f) => f.id,
      );
    expect(ids('16')).toEqual([8]);
    expect(ids('1.6e1')).toEqual([8]);
    for (const value of ['0x10', '0b10000', ' 16 ', '+16', '016'])
      expect(ids(value), value).toEqual([]);
  });
});
