import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { WatchFolder } from '../../electron/core/harvest/config.js';
import { LeftOutFolders, type LeftOutPaths } from '../../electron/core/harvest/leftOut.js';
import { tempDir } from './helpers.js';

interface Logged {
  msg: string;
  folder: string;
}

function leftOutWithLog(): { leftOut: LeftOutFolders; logged: Logged[] } {
  const logged: Logged[] = [];
  const log = pino(
    { level: 'warn' },
    { write: (line: string) => logged.push(JSON.parse(line) as Logged) },
  );
  return { leftOut: new LeftOutFolders(log), logged };
}

const folder = (path: string): WatchFolder => ({ path, include: [], exclude: ['*.tmp'] });

describe('LeftOutFolders', () => {
  it('leaves storage bases and the data dir out of the watched folder that holds them', () => {
    const root = tempDir('labstation-leftout-');
    const src = folder(join(root, 'src'));
    const other = folder(join(root, 'other'));
    const { leftOut, logged } = leftOutWithLog();
    const paths: LeftOutPaths = {
      watched: [src, other],
      storageBases: [join(root, 'src', 'store'), join(root, 'archive')],
      dataDir: join(root, 'src', 'station', 'data'),
    };
    leftOut.find(paths);
    const filter = leftOut.filterOf(src);
    expect(filter.accepts('scan.tif')).toBe(true);
    expect(filter.accepts('storex/scan.tif')).toBe(true);
    expect(filter.accepts('store/sem-1/scan.tif')).toBe(false);
    expect(filter.skipsDirectory('store')).toBe(true);
    expect(filter.skipsDirectory('station')).toBe(false);
    expect(filter.skipsDirectory('station/data')).toBe(true);
    expect(filter.accepts('station/data/labstation.db')).toBe(false);
    // The folder's own filter still applies.
    expect(filter.accepts('scan.tmp')).toBe(false);
    const elsewhere = leftOut.filterOf(other);
    expect(elsewhere.accepts('store/scan.tif')).toBe(true);
    expect(elsewhere.skipsDirectory('station/data')).toBe(false);
    expect(logged.map((l) => [l.folder, l.msg])).toEqual([
      [
        src.path,
        'harvest: a storage location lies inside this watched folder; left out of its harvest',
      ],
      [
        src.path,
        "harvest: the station's data dir lies in this watched folder; left out of its harvest",
      ],
    ]);
    // Found again unchanged: nothing logged again.
    leftOut.find(paths);
    expect(logged).toHaveLength(2);
  });

  it('turns off a watched folder that is a storage base, and knows the watched folders inside a base', () => {
    const root = tempDir('labstation-leftout-');
    const src = folder(join(root, 'store', 'incoming'));
    const whole = folder(join(root, 'store'));
    const { leftOut, logged } = leftOutWithLog();
    leftOut.find({ watched: [src, whole], storageBases: [join(root, 'store')], dataDir: null });
    expect(leftOut.filterOf(whole).accepts('a.tif')).toBe(false);
    expect(leftOut.filterOf(whole).skipsDirectory('incoming')).toBe(true);
    expect(leftOut.filterOf(src).accepts('a.tif')).toBe(true);
    // '' (the base itself, watched) is off altogether, so only the folder inside it is named.
    expect(leftOut.watchedIn(join(root, 'store'))).toEqual(['incoming']);
    expect(leftOut.watchedIn(join(root, 'elsewhere'))).toEqual([]);
    expect(logged.map((l) => l.msg)).toContain(
      'harvest: this watched folder is a storage location; nothing of it is harvested',
    );
  });

  it('finds by real path what a link hides, and a filter handed out before sees it', async () => {
    const root = tempDir('labstation-leftout-');
    mkdirSync(join(root, 'src'));
    symlinkSync(join(root, 'src'), join(root, 'link'));
    const watched = folder(join(root, 'link'));
    const { leftOut } = leftOutWithLog();
    const paths: LeftOutPaths = {
      watched: [watched],
      // Not made yet: found by its nearest folder that is.
      storageBases: [join(root, 'src', 'store')],
      dataDir: join(root, 'src', 'data'),
    };
    leftOut.find(paths);
    const filter = leftOut.filterOf(watched);
    expect(filter.skipsDirectory('store')).toBe(false);
    expect(filter.skipsDirectory('data')).toBe(false);
    expect(await leftOut.findByRealPath(paths, () => false)).toBeNull();
    expect(filter.skipsDirectory('store')).toBe(false);
    expect(await leftOut.findByRealPath(paths, () => true)).not.toBeNull();
    expect(filter.skipsDirectory('store')).toBe(true);
    expect(filter.skipsDirectory('data')).toBe(true);
    expect(filter.accepts('scan.tif')).toBe(true);
  });
});
