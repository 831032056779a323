/**
 * The folders of watched trees that a harvest leaves out, whatever the folders' filters say:
 * a local storage location's base (the harvest would take its own copies again, a folder
 * deeper each run) and the station's own data dir (its database changes under every copy).
 * Both are found by comparing paths: as written at once, then by real path (storageGuard.ts),
 * since a link can hide an overlap from the paths as written.
 *
 * The other way round, the watched folders that lie inside a storage location's base: a copy
 * rendered into one of them fails (destination.ts intoWatchedFolder).
 */
import type { WatchFolder } from './config.js';
import type { FolderFilter } from './discover.js';
import { folderFilter } from './discover.js';
import { inFolders, realOrNearest, storageFolderIn } from './storageGuard.js';
import type { Logger } from '../util/log.js';

/** What the harvest looks at, with every path as written. */
export interface LeftOutPaths {
  watched: readonly WatchFolder[];
  /** The bases of the station's local storage locations. */
  storageBases: readonly string[];
  /** The station's data dir; null for a database in memory (tests). */
  dataDir: string | null;
}

/** The folders found inside one watched folder, relative to it ('' for the folder itself). */
interface Found {
  storage: Map<WatchFolder, string[]>;
  dataDir: Map<WatchFolder, string>;
  watchedInStorage: Map<string, string[]>;
}

/** As text, to tell a change by. */
function summary(found: Map<WatchFolder, string | string[]>): string {
  return JSON.stringify([...found].map(([folder, inside]) => [folder.path, inside]));
}

/** How long `findByRealPath` waits for the real paths: a share may hang. */
export const REAL_PATHS_MS = 2000;

export class LeftOutFolders {
  private found: Found = { storage: new Map(), dataDir: new Map(), watchedInStorage: new Map() };
  /** Per watched folder, storage and data dir together: what its filter leaves out. */
  private leftOut = new Map<WatchFolder, readonly string[]>();

  constructor(private readonly log: Logger) {}

  /** By the paths as written: at once, until `findByRealPath` is done. */
  find(paths: LeftOutPaths): void {
    this.keep(foundIn(paths, (path) => path));
  }

  /**
   * By real path. Waits at most REAL_PATHS_MS, keeping what `find` found meanwhile. The real
   * path of each path looked at, by the path as written; null when it gave up, or when
   * `current()` says the configuration it looked at is no longer the one in use (the harvest
   * reloaded meanwhile).
   */
  async findByRealPath(
    paths: LeftOutPaths,
    current: () => boolean,
  ): Promise<ReadonlyMap<string, string> | null> {
    const written = new Set([...paths.storageBases, ...paths.watched.map((f) => f.path)]);
    if (paths.dataDir !== null) written.add(paths.dataDir);
    const resolving = (async () => {
      const real = new Map<string, string>();
      await Promise.all([...written].map(async (p) => real.set(p, await realOrNearest(p))));
      return real;
    })();
    const real = await Promise.race([
      resolving,
      new Promise<null>((done) => setTimeout(() => done(null), REAL_PATHS_MS).unref()),
    ]);
    if (real === null || !current()) return null;
    this.keep(foundIn(paths, (path) => real.get(path) ?? path));
    return real;
  }

  /**
   * The folder's filter, with its storage folders and the data dir left out. They are read at
   * each check: the real paths may be found after the filter is handed to a watch.
   */
  filterOf(folder: WatchFolder): FolderFilter {
    const filter = folderFilter(folder);
    const leftOut = (rel: string): boolean => inFolders(this.leftOut.get(folder) ?? [], rel);
    return {
      accepts: (rel) => filter.accepts(rel) && !leftOut(rel),
      skipsDirectory: (rel) => filter.skipsDirectory(rel) || leftOut(rel),
    };
  }

  /** The watched folders inside a local storage location's base (as written), relative to it. */
  watchedIn(base: string): string[] {
    return this.found.watchedInStorage.get(base) ?? [];
  }

  /** Keeps what was found, and logs what changed. */
  private keep(found: Found): void {
    const before = this.found;
    this.found = found;
    this.leftOut = new Map(
      [...new Set([...found.storage.keys(), ...found.dataDir.keys()])].map((folder) => {
        const own = found.dataDir.get(folder);
        const storage = found.storage.get(folder) ?? [];
        return [folder, own === undefined ? storage : [...storage, own]];
      }),
    );
    if (summary(found.storage) !== summary(before.storage)) {
      for (const [folder, inside] of found.storage) {
        this.log.warn(
          { folder: folder.path, storage: inside },
          inside.includes('')
            ? 'harvest: this watched folder is a storage location; nothing of it is harvested'
            : 'harvest: a storage location lies inside this watched folder; left out of its harvest',
        );
      }
    }
    if (summary(found.dataDir) !== summary(before.dataDir)) {
      for (const [folder, inside] of found.dataDir) {
        this.log.warn(
          { folder: folder.path, dataDir: inside },
          "harvest: the station's data dir lies in this watched folder; left out of its harvest",
        );
      }
    }
  }
}

/** What lies in what, with each path where `where` says it is. */
function foundIn(paths: LeftOutPaths, where: (path: string) => string): Found {
  const bases = paths.storageBases.map(where);
  const dataDir = paths.dataDir === null ? null : where(paths.dataDir);
  const found: Found = { storage: new Map(), dataDir: new Map(), watchedInStorage: new Map() };
  for (const folder of paths.watched) {
    const watch = where(folder.path);
    const storage = bases.flatMap((base) => storageFolderIn(watch, base) ?? []);
    if (storage.length) found.storage.set(folder, storage);
    const own = dataDir === null ? null : storageFolderIn(watch, dataDir);
    if (own !== null) found.dataDir.set(folder, own);
  }
  const watched = paths.watched.map((folder) => where(folder.path));
  for (const base of paths.storageBases) {
    // storageFolderIn(outer, inner): where inner lies in outer. '' (a watched folder that is
    // the base) is left out here: that folder's harvest is off altogether (found.storage).
    const inside = watched.flatMap((watch) => storageFolderIn(where(base), watch) || []);
    if (inside.length) found.watchedInStorage.set(base, inside);
  }
  return found;
}
