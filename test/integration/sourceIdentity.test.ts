/**
 * A file's identity on a station is its instrument and source path. Where the file system has
 * no letter case (Windows, macOS), a watched folder typed anew in other case names the same
 * files: their records must be found, or every file is taken for a new one, copied again
 * under a new ARK. Elsewhere `A.tif` and `a.tif` are two files. Real SQLite, the migrated
 * schema; the rule's platform is a parameter, so both run here.
 */
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../electron/core/db/open.js';
import {
  KNOWN_SOURCES,
  knownSources,
  LATEST_BY_SOURCE,
  latestBySource,
  recordFile,
} from '../../electron/core/harvest/records.js';
import { sourceKey } from '../../electron/core/harvest/storageGuard.js';
import { tempDir } from './helpers.js';

const now = '2026-01-05T10:00:00.000Z';

describe("a file's source path as its identity", () => {
  let db: Database.Database;
  const record = (instrumentId: number, watchPath: string, sourcePath: string): number =>
    recordFile(db, {
      instrumentId,
      watchPath,
      relativePath: sourcePath.slice(watchPath.length + 1).replace(/\\/g, '/'),
      sourcePath,
      filename: sourcePath.split(/[\\/]/).pop() ?? '',
      size: 1,
      mtimeMs: 1,
      firstDiscoveredAt: now,
      usageEventId: null,
    });

  beforeAll(() => {
    db = openDatabase(join(tempDir(), 'identity.db'));
    db.exec(`INSERT INTO tools (uuid, name, created_at, updated_at) VALUES ('t', 't', '${now}', '${now}');
      INSERT INTO instruments (uuid, name, tool_id, destination_template, watch, created_at, updated_at)
        VALUES ('w', 'win', 1, '{relative_path}', '[{"path":"d:\\\\data"}]', '${now}', '${now}'),
               ('l', 'linux', 1, '{relative_path}', '[{"path":"/mnt/sem"}]', '${now}', '${now}')`);
  });

  afterAll(() => db.close());

  it('finds a record made under the folder in other case where names have none', () => {
    const first = record(1, 'D:\\Data', 'D:\\Data\\Run1\\Image.TIF');
    expect(latestBySource(db, 1, 'd:\\data\\run1\\image.tif', true)?.id).toBe(first);
    expect(latestBySource(db, 1, 'D:\\Data\\Run1\\Image.TIF', true)?.id).toBe(first);
    // Not another instrument's, nor another file's.
    expect(latestBySource(db, 2, 'd:\\data\\run1\\image.tif', true)).toBeUndefined();
    expect(latestBySource(db, 1, 'd:\\data\\run1\\image.tiff', true)).toBeUndefined();
    // The newest record of the path, in whichever case it was written.
    const again = record(1, 'd:\\data', 'd:\\data\\Run1\\image.tif');
    expect(latestBySource(db, 1, 'D:\\DATA\\RUN1\\IMAGE.TIF', true)?.id).toBe(again);
    const asked = ['D:\\data\\run1\\Image.tif', 'd:\\data\\run1\\other.tif'];
    const known = knownSources(db, 1, asked, true);
    expect(known.get(asked[0])?.id).toBe(again);
    expect(known.get(asked[1])).toBeUndefined();
  });

  it('keeps names apart by case where the file system does', () => {
    const upper = record(2, '/mnt/sem', '/mnt/sem/run/A.tif');
    const lower = record(2, '/mnt/sem', '/mnt/sem/run/a.tif');
    expect(latestBySource(db, 2, '/mnt/sem/run/A.tif', false)?.id).toBe(upper);
    expect(latestBySource(db, 2, '/mnt/sem/run/a.tif', false)?.id).toBe(lower);
    expect(latestBySource(db, 2, '/mnt/sem/Run/a.tif', false)).toBeUndefined();
    const asked = ['/mnt/sem/run/A.tif', '/mnt/sem/run/a.tif', '/mnt/SEM/run/a.tif'];
    const known = knownSources(db, 2, asked, false);
    expect(known.get(asked[0])?.id).toBe(upper);
    expect(known.get(asked[1])?.id).toBe(lower);
    expect(known.get(asked[2])).toBeUndefined();
    // Case-blind, a spelling of neither finds the newest of the two.
    expect(latestBySource(db, 2, '/mnt/sem/RUN/A.TIF', true)?.id).toBe(lower);
  });

  it('folds A to Z only, as SQLite does, so both sides agree', () => {
    expect(sourceKey('D:\\Données\\É.TIF', true)).toBe('d:\\données\\É.tif');
    expect(sourceKey('D:\\Data\\A.TIF', false)).toBe('D:\\Data\\A.TIF');
    const accented = record(1, 'd:\\data', 'd:\\data\\É\\x.tif');
    expect(latestBySource(db, 1, 'D:\\DATA\\É\\X.TIF', true)?.id).toBe(accented);
    expect(latestBySource(db, 1, 'd:\\data\\é\\x.tif', true)).toBeUndefined();
    const folded = 'd:\\data\\é\\x.tif';
    expect(knownSources(db, 1, [folded], true).get(folded)).toBeUndefined();
  });

  it("takes a path's own records before those of the path in other case", () => {
    // A case-sensitive volume on a Mac, a share from Linux: two files, each its own records.
    const upper = record(1, 'd:\\data', 'd:\\data\\run2\\B.tif');
    const lower = record(1, 'd:\\data', 'd:\\data\\run2\\b.tif');
    expect(latestBySource(db, 1, 'd:\\data\\run2\\B.tif', true)?.id).toBe(upper);
    expect(latestBySource(db, 1, 'd:\\data\\run2\\b.tif', true)?.id).toBe(lower);
    const known = knownSources(db, 1, ['d:\\data\\run2\\B.tif', 'd:\\data\\run2\\b.tif'], true);
    expect(known.get('d:\\data\\run2\\B.tif')?.id).toBe(upper);
    expect(known.get('d:\\data\\run2\\b.tif')?.id).toBe(lower);
    // A spelling of neither: the newest of them.
    expect(latestBySource(db, 1, 'D:\\DATA\\RUN2\\B.TIF', true)?.id).toBe(lower);
    const neither = 'D:\\DATA\\RUN2\\B.TIF';
    expect(knownSources(db, 1, [neither], true).get(neither)?.id).toBe(lower);
  });

  it("looks a folder's paths up through the index", () => {
    const plan = (
      db.prepare(`EXPLAIN QUERY PLAN ${KNOWN_SOURCES}`).all(2, '["/mnt/sem/run/a.tif"]') as {
        detail: string;
      }[]
    ).map((r) => r.detail);
    expect(plan.join('\n')).toMatch(
      /USING INDEX harvest_files_source \(instrument_id=\? AND source_path=\?\)/,
    );
  });

  it('looks a path up through the index, in either mode', () => {
    for (const mode of [0, 1]) {
      const path = '/mnt/sem/run/a.tif';
      const plan = (
        db.prepare(`EXPLAIN QUERY PLAN ${LATEST_BY_SOURCE}`).all(2, path, mode, path, path) as {
          detail: string;
        }[]
      ).map((r) => r.detail);
      expect(plan.join('\n'), `mode ${mode}`).toMatch(
        /USING INDEX harvest_files_source \(instrument_id=\? AND source_path=\?\)/,
      );
    }
  });
});
