import { describe, expect, it } from 'vitest';
import type { WatchFolder } from '../../../electron/core/harvest/config.js';
import type { ListedFile } from '../../../electron/core/harvest/copyBatch.js';
import { RecentListings } from '../../../electron/core/harvest/listings.js';

const watched = (path: string): WatchFolder => ({ path, include: [], exclude: [] });
const file = (path: string, size = 10, mtimeMs = 1000, ino = 1): ListedFile => ({
  path,
  size,
  mtimeMs,
  ino,
});

describe('RecentListings', () => {
  it('passes over what the last listing of the folder held unchanged, for keptMs', () => {
    let now = 0;
    const listings = new RecentListings(() => now, 3000);
    const src = watched('/data/src');
    const first = [file('/data/src/a.tif'), file('/data/src/b.tif'), file('/data/src/c.tif')];
    expect(listings.newSince(src, '/data/src', first)).toEqual(first);
    listings.remember(src, '/data/src', first, new Set());
    now = 2000;
    const second = [
      file('/data/src/a.tif'),
      file('/data/src/b.tif', 11),
      file('/data/src/c.tif', 10, 1000, 2),
      file('/data/src/d.tif'),
    ];
    // b grew, c was put back in its place as another file, d is new: a alone is passed over.
    expect(listings.newSince(src, '/data/src', second).map((f) => f.path)).toEqual([
      '/data/src/b.tif',
      '/data/src/c.tif',
      '/data/src/d.tif',
    ]);
    // Another folder, or the same folder watched through another watched folder, is its own.
    expect(listings.newSince(src, '/data/src/sub', first)).toEqual(first);
    expect(listings.newSince(watched('/data/src'), '/data/src', first)).toEqual(first);
    now = 3001;
    expect(listings.newSince(src, '/data/src', first)).toEqual(first);
  });

  it('looks again at the files left to a copy under way, and forgets all on clear', () => {
    const listings = new RecentListings(() => 0, 3000);
    const src = watched('/data/src');
    const files = [file('/data/src/a.tif'), file('/data/src/b.tif')];
    listings.remember(src, '/data/src', files, new Set(['/data/src/b.tif']));
    expect(listings.newSince(src, '/data/src', files).map((f) => f.path)).toEqual([
      '/data/src/b.tif',
    ]);
    listings.clear();
    expect(listings.newSince(src, '/data/src', files)).toEqual(files);
  });
});
