/**
 * The watches between walks: what happens in a watched folder's tree, reported as it happens,
 * so that new files show up in a second rather than at the next walk. The walk (discover.ts)
 * is the truth; a watch only makes files show up sooner. Three ways, by system
 * (`LABSTATION_WATCH` chooses on any):
 * - `folders` (Linux): one watch of Node's per folder (watchEach);
 * - `whole` (Windows, macOS): one recursive watch per tree, kept by the system (watchWhole);
 * - `poll`: chokidar, polling each folder, for file systems that send no events (watchPolled).
 * Symbolic links below a watched folder are not followed, as the walk does not follow them.
 */
import { watch as fsWatch, type FSWatcher, type Stats } from 'node:fs';
import { lstat, opendir, realpath, stat } from 'node:fs/promises';
import { basename, dirname, join, relative, sep } from 'node:path';
import { watch as chokidarWatch } from 'chokidar';
import type { WatchFolder } from './config.js';
import { relativeTo, type FolderFilter } from './discover.js';
import { sourceKey } from './storageGuard.js';

export interface FolderWatch {
  close(): Promise<void>;
  /**
   * What is watched (folderIdentity of the folder when the watch was set up; null when it was
   * not there), or undefined while that is being found out.
   */
  watched(): string | null | undefined;
}

/**
 * The folder at `path` (links followed) as its device and folderOf (inode and time of birth),
 * or null when there is none: a folder that appears, is replaced, or has a share mounted on it
 * gets another identity.
 */
export async function folderIdentity(path: string): Promise<string | null> {
  try {
    const found = await stat(path);
    return found.isDirectory() ? `${found.dev}:${folderOf(found)}` : null;
  } catch {
    return null;
  }
}

export interface WatchEvents {
  /** Something happened to this path (created, written, renamed, deleted): look at it. */
  onPath: (absolutePath: string) => void;
  /** A folder appeared, or changed without saying what in it: read its files. */
  onFolder: (absolutePath: string) => void;
  /**
   * A burst of events ended (BURST_EVENTS or more, then none for BURST_QUIET_MS). Events may
   * have been dropped in it: a full inotify queue drops them without a word. Walk the folder.
   */
  onBurst: () => void;
  onError: (error: Error) => void;
  /** The watch is set up; what appeared while it was being set up is for a walk to find. */
  onReady: () => void;
}

/** A burst of at least this many events is followed by a walk (WatchEvents.onBurst). */
const BURST_EVENTS = 1000;
/** A burst ends after this long without an event. */
const BURST_QUIET_MS = 1000;
/**
 * A folder moved in with more folders than this below it is not reported folder by folder: the
 * whole watched folder is walked instead (WatchEvents.onBurst).
 */
const FOLDERS_REPORTED_MAX = 10_000;

/**
 * Watches a folder's tree for files that appear or change: the folders are watched, not each
 * file, as a folder's events name the file they are about, and a folder that appears (made, or
 * moved in whole) is reported so the caller reads its files.
 */
export function watchFolder(
  folder: WatchFolder,
  filter: FolderFilter,
  events: WatchEvents,
): FolderWatch {
  // A watched folder that is itself a symbolic link (`/data/sem` -> `/mnt/disk2/sem`) is
  // watched where it leads, as the walk reads it there; links below it are not followed.
  // Resolved in libuv's pool: a share that hangs must not hold the thread that serves the UI.
  // One not there (yet) is watched by its name: the walks find it, and the engine sets up its
  // watch again once a walk finds it there, or another folder in its place (watched()).
  let closed = false;
  let watch: Closable | null = null;
  let identity: string | null | undefined;
  void realpath(folder.path)
    .catch(() => folder.path)
    .then(async (root) => {
      identity = await folderIdentity(root);
      if (closed) return;
      // A whole-tree watch that failed is a folder to watch anew at the next walk (watches.ts
      // renew), as one replaced is: Node closes it, and with it the whole tree's events.
      const failed = (): void => {
        identity = 'the watch failed';
      };
      const mode = watchMode();
      watch =
        mode === 'whole'
          ? watchWhole(root, folder, filter, events, failed)
          : mode === 'poll'
            ? watchPolled(root, folder, filter, events)
            : watchEach(root, identity, folder, filter, events, failed);
    });
  return {
    close: async () => {
      closed = true;
      await watch?.close();
    },
    watched: () => identity,
  };
}

interface Closable {
  close(): Promise<void>;
}

export type WatchMode = 'folders' | 'whole' | 'poll';

/**
 * How a watched folder's tree is watched. Folder by folder (watchEach) on Linux. One recursive
 * watch of the whole tree (watchWhole), which the system keeps, on Windows, where a handle on
 * each folder makes Windows refuse to rename or move a folder that holds a watched subfolder
 * ("in use": chokidar issues #1380, #1281), which an instrument that writes `Run_tmp` and
 * renames it when done must be able to; and on macOS, where libuv builds every watch of a
 * process into one FSEvents stream, rebuilt from all the watched paths at each watch added or
 * ended (events in between are lost, and watching N folders costs N x N). `LABSTATION_WATCH=
 * folders`, `=whole` or `=poll` chooses on any system (the tests run watchWhole on Linux, where
 * Node builds its recursive watch from one inotify watch per folder and per file), and
 * chokidar's own `CHOKIDAR_USEPOLLING` (but `0` or `false`) still asks for polling.
 */
export function watchMode(): WatchMode {
  const chosen = process.env.LABSTATION_WATCH;
  if (chosen === 'folders' || chosen === 'whole' || chosen === 'poll') return chosen;
  const polling = process.env.CHOKIDAR_USEPOLLING?.toLowerCase();
  if (polling !== undefined && polling !== '' && polling !== '0' && polling !== 'false') {
    return 'poll';
  }
  return process.platform === 'win32' || process.platform === 'darwin' ? 'whole' : 'folders';
}

/**
 * Counts events, and reports a burst (WatchEvents.onBurst) once BURST_QUIET_MS pass without one
 * after BURST_EVENTS or more.
 */
function burstCounter(events: WatchEvents): { count(): void; stop(): void } {
  let burst = 0;
  let quiet: NodeJS.Timeout | undefined;
  return {
    count: () => {
      burst += 1;
      quiet ??= setTimeout(() => {
        quiet = undefined;
        if (burst >= BURST_EVENTS) events.onBurst();
        burst = 0;
      }, BURST_QUIET_MS).unref();
      quiet.refresh();
    },
    stop: () => clearTimeout(quiet),
  };
}

/** Paths under `root` as reported under the watched folder's own name (a link's). */
function namerOf(root: string, folder: WatchFolder): (path: string) => string {
  return root === folder.path
    ? (path: string) => path
    : (path: string) => join(folder.path, relative(root, path));
}

/**
 * watchFolder with one recursive watch of the whole tree (Node's `fs.watch` with `recursive`:
 * on Windows one handle on the folder, over its subtree). Its events name a path relative to
 * the folder; a folder made or moved in is reported with every folder below it (one event
 * names the top of a tree moved in), as chokidar reports each.
 */
function watchWhole(
  root: string,
  folder: WatchFolder,
  filter: FolderFilter,
  events: WatchEvents,
  failed: () => void,
): Closable {
  const named = namerOf(root, folder);
  const burst = burstCounter(events);
  let closed = false;
  // In a folder the filter skips (storage inside the watched tree, excluded folders).
  const skipped = (rel: string): boolean => {
    const parts = rel.split('/');
    for (let depth = 1; depth < parts.length; depth++) {
      if (filter.skipsDirectory(parts.slice(0, depth).join('/'))) return true;
    }
    return false;
  };
  const folderFound = async (path: string, rel: string): Promise<void> => {
    const found: string[] = [];
    const below = async (dir: string, dirRel: string): Promise<void> => {
      if (closed || filter.skipsDirectory(dirRel) || found.length >= FOLDERS_REPORTED_MAX) return;
      found.push(dir);
      let entries;
      try {
        entries = await opendir(dir);
        for await (const entry of entries) {
          if (entry.isDirectory()) await below(join(dir, entry.name), `${dirRel}/${entry.name}`);
        }
      } catch {
        return; // gone again, unreadable, a share cut while read: the walk says so
      }
    };
    await below(path, rel);
    if (closed) return;
    if (found.length >= FOLDERS_REPORTED_MAX) events.onBurst();
    else for (const dir of found) events.onFolder(named(dir));
  };
  let watcher;
  try {
    watcher = fsWatch(root, { recursive: true }, (event, name) => {
      // Some systems do not always name the entry (Node's fs.watch documentation); and on
      // Windows an event without a name is one whose buffer overflowed: anything in the tree
      // may have changed.
      if (name === null) return events.onBurst();
      const rel = name.split(sep).join('/');
      // Not counted toward a burst: a storage folder in the tree has events at every copy.
      if (skipped(rel)) return;
      burst.count();
      const path = join(root, name);
      events.onPath(named(path));
      // A folder made or moved in has a "rename" (Windows also says "change" of a folder whose
      // files changed, which is not read whole again for it).
      if (event !== 'rename') return;
      lstat(path)
        .then((found) => (found.isDirectory() ? folderFound(path, rel) : undefined))
        .catch(() => undefined);
    });
  } catch (error) {
    // Not there (yet): the walks find it, and the watch is set up again then (watches.ts).
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') events.onError(error as Error);
    return { close: () => Promise.resolve() };
  }
  watcher.on('error', (error) => {
    failed();
    events.onError(error);
  });
  setImmediate(() => {
    if (!closed) events.onReady();
  });
  return {
    close: () => {
      closed = true;
      burst.stop();
      watcher.close();
      return Promise.resolve();
    },
  };
}

/**
 * A folder watched by watchEach: its watch, its path as spelled when it was watched, which
 * folder it is (folderOf: a new one gets a new watch), whether its watch said it went, and the
 * folders below it that are watched.
 */
interface WatchedFolder {
  watcher: FSWatcher;
  path: string;
  folder: string;
  gone: boolean;
  below: Set<string>;
}

/**
 * Which folder `found` is: its inode and time of birth. A folder made again where one was
 * removed often gets the old inode (ext4 gives it at once), and its watch may never say that
 * the old one went by the name it is watched under: inotify reports a folder's own removal by
 * the name its first watch was set up under (libuv keeps one path per inode's watch), which is
 * the folder's former name once it was renamed. So the time of birth tells them apart, where
 * the file system keeps one (where it keeps none, the inode and the gone mark still do).
 */
function folderOf(found: Stats): string {
  return `${found.ino}:${found.birthtimeMs}`;
}

/**
 * watchFolder with one watch of Node's (`fs.watch`: inotify on Linux) on each folder of the
 * tree that the filter does not skip. A folder's events name the entry they are about. An
 * entry made, removed or renamed ("rename") that is a folder is watched with every folder below
 * it, and each is reported (read by the caller) once its watch is up, so no file made in it
 * falls between the read and the watch; a watched folder that is gone, or is another folder
 * now, has its watches and those below it ended (or set up anew). After a burst, whose events
 * the system may have dropped (inotify's queue holds 16,384), or an event that names nothing,
 * the watches are checked against the tree: a folder made in the burst is watched.
 *
 * Not chokidar, which at each event in a folder reads the whole folder again with an lstat of
 * every entry, to tell what was added: with 50,000 files in a folder, 60 written into it in 30 s
 * cost it 35 s of CPU, and being up on 200,000 files 3.3 s and 576 MiB (`npm run bench:watch`).
 * Here an event costs one lstat, of the entry it names (0.04 s for those 60), and being up
 * reads the folders' entries without a stat (0.31 s, 55 MiB).
 */
function watchEach(
  root: string,
  /** folderIdentity of `root` when the watch was set up: its removal is told from an entry of its name going. */
  rootIdentity: string | null,
  folder: WatchFolder,
  filter: FolderFilter,
  events: WatchEvents,
  failed: () => void,
): Closable {
  const named = namerOf(root, folder);
  // By path, without case where names have none (a folder renamed in case only is one folder).
  const keyOf = (path: string): string => sourceKey(path);
  const watched = new Map<string, WatchedFolder>();
  let closed = false;
  // A watch that cannot be set up for another reason than its folder being gone (the system's
  // limit of watches, ENOSPC on Linux; no permission) is said once per reason: the walks still
  // find its files.
  const refusalsSaid = new Set<string>();
  // The latest look at each path under way (entryChanged): an older one that ends later does
  // not undo what the newer saw (libuv's pool may answer lstat calls out of order).
  const looks = new Map<string, number>();
  let lookCount = 0;

  /** Ends the watch of `dir` and of every folder below it. */
  const unwatch = (dir: string): void => {
    const key = keyOf(dir);
    const one = watched.get(key);
    if (!one) return;
    for (const child of one.below) unwatch(child);
    one.watcher.close();
    watched.delete(key);
    watched.get(keyOf(dirname(dir)))?.below.delete(dir);
  };

  const watchOne = (dir: string, folder: string): boolean => {
    let watcher: FSWatcher;
    try {
      watcher = fsWatch(dir, (event, name) => happened(dir, event, name));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'unknown';
      if (code !== 'ENOENT' && code !== 'ENOTDIR' && !refusalsSaid.has(code)) {
        refusalsSaid.add(code);
        events.onError(error as Error);
      }
      return false;
    }
    watcher.on('error', (error) => {
      // The folder went (Windows says EPERM): its parent's event ends its watch; the watched
      // folder itself is watched anew at the next walk (watches.ts renew).
      if (dir === root) failed();
      if (watched.get(keyOf(dir))?.watcher === watcher) unwatch(dir);
      if (!closed) events.onError(error);
    });
    // Another watch of the folder (a look that ran beside this one) is ended, not lost.
    unwatch(dir);
    watched.set(keyOf(dir), { watcher, path: dir, folder, gone: false, below: new Set() });
    if (dir !== root) watched.get(keyOf(dirname(dir)))?.below.add(dir);
    return true;
  };

  /** Whether `dir` is watched as this folder (folderOf), its watch not gone. */
  const watchedAs = (dir: string, folder: string): boolean => {
    const one = watched.get(keyOf(dir));
    return one !== undefined && !one.gone && one.folder === folder;
  };

  /**
   * Watches `top` and the folders below it that the filter takes, but those watched already;
   * returns those it watched, top first (a folder is watched before its entries are read, so an
   * entry made meanwhile has an event). `seen` gets every folder found.
   */
  const watchTree = async (
    top: string,
    topFolder: string,
    seen?: Set<string>,
  ): Promise<string[]> => {
    const added: string[] = [];
    const pending: [string, string][] = [[top, topFolder]];
    while (pending.length && !closed) {
      const [dir, folder] = pending.pop() as [string, string];
      if (!watchedAs(dir, folder)) {
        if (!watchOne(dir, folder)) continue;
        added.push(dir);
      }
      seen?.add(keyOf(dir));
      try {
        const entries = await opendir(dir, { bufferSize: 256 });
        for await (const entry of entries) {
          if (closed) break;
          if (!entry.isDirectory()) continue;
          const path = join(dir, entry.name);
          if (filter.skipsDirectory(relativeTo(root, path))) continue;
          const found = await lstat(path).catch(() => null);
          if (found?.isDirectory()) pending.push([path, folderOf(found)]);
        }
      } catch {
        // Gone again, unreadable, a share cut while read: the walk says so.
      }
    }
    return added;
  };

  /**
   * An entry of a watched folder was made, removed or renamed: a folder there now is watched
   * (and reported), one gone is not.
   */
  const entryChanged = async (path: string): Promise<void> => {
    const look = ++lookCount;
    looks.set(path, look);
    const found = await lstat(path).catch(() => null);
    if (looks.get(path) !== look) return;
    looks.delete(path);
    if (closed) return;
    if (!found?.isDirectory()) {
      unwatch(path);
      return;
    }
    if (watchedAs(path, folderOf(found)) || filter.skipsDirectory(relativeTo(root, path))) return;
    // New, made again, or another folder moved in under its name.
    unwatch(path);
    const added = await watchTree(path, folderOf(found));
    if (closed) return;
    if (added.length >= FOLDERS_REPORTED_MAX) events.onBurst();
    else for (const dir of added) events.onFolder(named(dir));
  };

  /**
   * The watches checked against the tree, after events may have been dropped: every folder
   * there is watched (its files are read by the walk that follows a burst), and the watches of
   * folders no longer there are ended. One check at a time; one asked for meanwhile runs after.
   */
  let checking: Promise<void> | null = null;
  let checkAgain = false;
  const checkTree = (): void => {
    if (checking) {
      checkAgain = true;
      return;
    }
    checking = (async () => {
      do {
        checkAgain = false;
        const top = await stat(root).catch(() => null);
        if (closed || !top?.isDirectory()) break;
        const seen = new Set<string>();
        await watchTree(root, folderOf(top), seen);
        for (const [key, one] of [...watched]) {
          if (closed) break;
          if (seen.has(key) || !watched.has(key)) continue;
          const now = await lstat(one.path).catch(() => null);
          if (!now?.isDirectory() || folderOf(now) !== one.folder) unwatch(one.path);
        }
      } while (checkAgain && !closed);
    })().finally(() => {
      checking = null;
    });
  };

  const burst = burstCounter({
    ...events,
    onBurst: () => {
      checkTree();
      events.onBurst();
    },
  });

  const happened = (dir: string, event: string, name: string | null): void => {
    if (closed) return;
    burst.count();
    // Some systems do not always name the entry (Node's fs.watch documentation); Windows names
    // none when its buffer overflowed.
    if (name === null) {
      checkTree();
      return events.onFolder(named(dir));
    }
    const path = join(dir, name);
    events.onPath(named(path));
    if (event !== 'rename') return;
    // A watch names its own folder when the folder is removed or moved away (inotify's
    // IN_DELETE_SELF, IN_MOVE_SELF); an entry of that name in it is told apart by its parent's
    // event, which looks at the folder again, or for the watched folder itself by what is there.
    const own = watched.get(keyOf(dir));
    if (own && name === basename(dir)) {
      own.gone = true;
      if (dir === root) {
        void folderIdentity(root).then((now) => {
          if (!closed && now !== rootIdentity) failed();
        });
      }
    }
    void entryChanged(path);
  };

  void (async () => {
    const top = await stat(root).catch(() => null);
    // Not there (yet): the walks find it, and the watch is set up again then (watches.ts).
    if (top?.isDirectory()) await watchTree(root, folderOf(top));
    if (!closed) events.onReady();
  })();
  return {
    close: () => {
      closed = true;
      burst.stop();
      for (const one of watched.values()) one.watcher.close();
      watched.clear();
      return Promise.resolve();
    },
  };
}

/**
 * watchFolder by chokidar polling each folder (`LABSTATION_WATCH=poll`), for a file system that
 * sends no events (some network and container mounts): a folder whose entries changed is
 * reported, and read by the caller. Files are not polled: a stability check reads its own.
 */
function watchPolled(
  root: string,
  folder: WatchFolder,
  filter: FolderFilter,
  events: WatchEvents,
): Closable {
  const named = namerOf(root, folder);
  const watcher = chokidarWatch(root, {
    ignoreInitial: true,
    followSymlinks: false,
    usePolling: true,
    ignored: (path, stats) => {
      if (path === root) return false;
      const rel = relativeTo(root, path);
      // Outside the root (only ".." climbs: "..raw" is a folder in it, as the walk reads it).
      if (rel === '..' || rel.startsWith('../')) return true;
      // Without stats chokidar asks again with them; only folders are watched.
      if (!stats) return false;
      return stats.isDirectory() ? filter.skipsDirectory(rel) : true;
    },
  });
  const burst = burstCounter(events);
  // A polled folder's event names the folder by its full path.
  watcher.on('raw', (_event, path: string | null) => {
    burst.count();
    if (path) events.onFolder(named(path));
  });
  watcher.on('addDir', (path) => events.onFolder(named(path)));
  watcher.on('error', (error) => events.onError(error as Error));
  watcher.on('ready', events.onReady);
  return {
    close: () => {
      burst.stop();
      return watcher.close();
    },
  };
}
