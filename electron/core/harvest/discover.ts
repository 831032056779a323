/**
 * Finding files in watched folders: a full walk (at start, every few minutes, on a schedule)
 * and a watcher in between (chokidar; on Windows one recursive watch per tree, watchesWhole). The walk is the truth; the watcher only makes new files
 * show up sooner. Symbolic links are not followed (a link loop on a share would never end).
 */
import { watch as fsWatch } from 'node:fs';
import { lstat, opendir, realpath, stat } from 'node:fs/promises';
import { basename, join, relative, sep } from 'node:path';
import { watch as chokidarWatch, type FSWatcher } from 'chokidar';
import { compileFilter, platformGlobOptions } from '../../../shared/harvest/glob.js';
import type { WatchFolder } from './config.js';
import { statFiles, type FileStat } from './copyBatch.js';

export interface FoundFile {
  absolutePath: string;
  /** Relative to the watched folder, `/`-separated. */
  relativePath: string;
  size: number;
  mtimeMs: number;
}

/**
 * Size and mtime of each path, null for one that is gone or no longer a regular file
 * (copyBatch.ts statFiles). The engine has its service worker answer (copyPool.ts stat): a walk
 * of 10,000 files spent 0.3 s of the engine's thread in stat calls and their promises.
 */
export type StatAll = (paths: string[]) => Promise<FileStat[]>;

/** Paths per StatAll call: a folder of 100,000 files does not hold the service worker long. */
const STAT_GROUP = 1024;

export interface FolderFilter {
  accepts(relativePath: string): boolean;
  skipsDirectory(relativeDir: string): boolean;
}

export function folderFilter(folder: WatchFolder): FolderFilter {
  const compiled = compileFilter(
    { include: folder.include, exclude: folder.exclude },
    platformGlobOptions(process.platform),
  );
  // Config is checked when it is stored; a filter that does not compile here takes nothing.
  if (!compiled.ok) return { accepts: () => false, skipsDirectory: () => true };
  return compiled;
}

export function relativeTo(root: string, absolutePath: string): string {
  return relative(root, absolutePath).split(sep).join('/');
}

/**
 * Walks a watched folder and hands `onFiles` every accepted regular file with its size and
 * mtime, a folder's files at a time, as soon as they are known: the harvest copies the first
 * folders while it walks the rest (a walk of 10,000 files took 0.3 to 0.6 s here). Throws when
 * the folder itself cannot be read (a share that is gone), or when `statAll` fails (the
 * service worker died: the next walk takes the rest); entries that vanish during the walk are
 * left out. Returns the folders below it that could not be read (no permission, an I/O
 * error), with why: their files are not harvested, and the harvest must say so.
 */
export async function scanFolder(
  folder: WatchFolder,
  filter: FolderFilter,
  onFiles: (files: FoundFile[]) => void,
  statAll: StatAll = statFiles,
  stopped: () => boolean = () => false,
): Promise<UnreadFolder[]> {
  const pending: string[] = [folder.path];
  const unread: UnreadFolder[] = [];
  let first = true;
  // A harvest that stops ends its walk at the next folder: a tree on a slow share must not
  // hold the stop.
  while (pending.length && !stopped()) {
    const dir = pending.pop() as string;
    let handle;
    try {
      handle = await opendir(dir, { bufferSize: 256 });
    } catch (error) {
      if (first) throw error;
      // Gone since its parent was read, or now a file: nothing of it to harvest.
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') continue;
      // A file system's own folder, closed to users by design: not the instrument's data.
      if ((code === 'EACCES' || code === 'EPERM') && isSystemFolder(dir)) continue;
      unread.push({ path: dir, error });
      continue;
    }
    first = false;
    const files: { path: string; rel: string }[] = [];
    for await (const entry of handle) {
      const path = join(dir, entry.name);
      const rel = relativeTo(folder.path, path);
      const wanted = entry.isDirectory()
        ? !filter.skipsDirectory(rel)
        : entry.isFile() && filter.accepts(rel);
      if (!wanted) continue;
      // One the harvest would take, but whose name does not open it: said, not passed over.
      if (entry.name.includes('\uFFFD') && (await undecodable(path))) {
        unread.push({ path, error: new Error(UNDECODABLE), name: true });
      } else if (entry.isDirectory()) {
        pending.push(path);
      } else {
        files.push({ path, rel });
      }
    }
    const found = await statFound(files, statAll);
    if (found.length) onFiles(found);
  }
  return unread;
}

/**
 * Folders that file systems keep for themselves at a volume's root and close to users: ext4's
 * `lost+found`, and on Windows shares `System Volume Information` and `$RECYCLE.BIN`. A walk
 * that cannot read one says nothing (any other unreadable folder is a problem to report).
 */
const SYSTEM_FOLDERS = new Set(['lost+found', 'system volume information', '$recycle.bin']);

export function isSystemFolder(path: string): boolean {
  return SYSTEM_FOLDERS.has(basename(path).toLowerCase());
}

/**
 * A folder below a watched one that a walk could not read; or (`name`) a file or folder whose
 * name cannot be used, so that neither it nor anything in it is harvested.
 */
export interface UnreadFolder {
  path: string;
  error: unknown;
  name?: true;
}

const UNDECODABLE =
  'its name is not valid UTF-8 (written in another encoding, such as Latin-1 by older ' +
  'Windows software), so it cannot be opened by name; rename it to harvest it';

/**
 * Whether a name read with U+FFFD in it stands for bytes that are not UTF-8: Node reads names
 * as UTF-8 and puts U+FFFD for what is not, and such a path names no file. A name that really
 * holds U+FFFD is found at its path.
 */
async function undecodable(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT';
  }
}

/**
 * Size and mtime of files of a watched folder, STAT_GROUP paths per `statAll` call; those that
 * are gone or not regular files are left out. For the walk, a folder at a time, and for the
 * watcher's sightings, a group at a time.
 */
export async function statFound(
  files: { path: string; rel: string }[],
  statAll: StatAll = statFiles,
): Promise<FoundFile[]> {
  const found: FoundFile[] = [];
  for (let i = 0; i < files.length; i += STAT_GROUP) {
    const group = files.slice(i, i + STAT_GROUP);
    const stats = await statAll(group.map((f) => f.path));
    group.forEach((f, j) => {
      const s = stats[j];
      if (s) found.push({ absolutePath: f.path, relativePath: f.rel, ...s });
    });
  }
  return found;
}

export interface FolderWatch {
  close(): Promise<void>;
  /**
   * What is watched (folderIdentity of the folder when the watch was set up; null when it was
   * not there), or undefined while that is being found out.
   */
  watched(): string | null | undefined;
}

/**
 * The folder at `path` (links followed) as its device and inode, or null when there is none:
 * a folder that appears, is replaced, or has a share mounted on it gets another identity.
 */
export async function folderIdentity(path: string): Promise<string | null> {
  try {
    const found = await stat(path);
    return found.isDirectory() ? `${found.dev}:${found.ino}` : null;
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
/** New folders whose watch is not proven yet, at most (see watchFolder). */
const UNPROVEN_MAX = 10_000;

/**
 * Watches a folder's tree for files that appear or change. chokidar watches the folders only,
 * not each file: the file-system events of a folder name the file they are about (chokidar's
 * `raw` event), and a folder that appears (made, or moved in whole) is reported so the caller
 * reads its files. Per-file watching cost chokidar an lstat, a watch and an event per file
 * (1.2 s of CPU and 0.5 s before the first event, for 10,000 files moved in here) and one of
 * the system's inotify watches per file (192,536 for all of a user's programs here).
 *
 * chokidar reports a new folder before it watches it. A file made in it before the watch is up
 * has no event; the caller lists the folder twice (sightings.ts folderSighted), and it is listed
 * again here at the folder's first event, which proves its watch is up.
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
      watch = watchesWhole()
        ? watchWhole(root, folder, filter, events, failed)
        : watchAt(root, folder, filter, events);
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

/**
 * Whether a watched folder's tree is watched whole (watchWhole) rather than folder by folder
 * (watchAt, chokidar): on Windows, where chokidar's handle on each folder makes Windows refuse
 * to rename or move a folder that holds a watched subfolder ("in use": chokidar issues #1380,
 * #1281), which an instrument that writes `Run_tmp` and renames it when done must be able to.
 * `LABSTATION_WATCH=whole` or `=folders` chooses on any system (the tests run watchWhole on
 * Linux, where Node builds its recursive watch from one inotify watch per folder).
 */
function watchesWhole(): boolean {
  const chosen = process.env.LABSTATION_WATCH;
  if (chosen === 'whole') return true;
  if (chosen === 'folders') return false;
  return process.platform === 'win32';
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
      if (closed || filter.skipsDirectory(dirRel) || found.length >= UNPROVEN_MAX) return;
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
    if (found.length >= UNPROVEN_MAX) events.onBurst();
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

/** watchFolder, with the folder found at `root`; paths are reported under the folder's name. */
function watchAt(
  root: string,
  folder: WatchFolder,
  filter: FolderFilter,
  events: WatchEvents,
): Closable {
  const named = namerOf(root, folder);
  const watcher: FSWatcher = chokidarWatch(root, {
    ignoreInitial: true,
    followSymlinks: false,
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
  const unproven = new Set<string>();
  const burst = burstCounter(events);
  watcher.on('raw', (_event, name: string | null, details) => {
    burst.count();
    const dir = (details as { watchedPath?: string } | undefined)?.watchedPath;
    if (!dir) {
      // Polling (CHOKIDAR_USEPOLLING): the event is a folder's, named by its full path.
      if (name) events.onFolder(named(name));
      return;
    }
    if (unproven.delete(dir)) events.onFolder(named(dir));
    // Some systems do not always name the entry (Node's fs.watch documentation).
    if (name) events.onPath(named(join(dir, name)));
    else events.onFolder(named(dir));
  });
  watcher.on('addDir', (path) => {
    if (unproven.size >= UNPROVEN_MAX) unproven.delete(unproven.values().next().value as string);
    unproven.add(path);
    events.onFolder(named(path));
  });
  watcher.on('error', (error) => events.onError(error as Error));
  watcher.on('ready', events.onReady);
  return {
    close: () => {
      burst.stop();
      return watcher.close();
    },
  };
}
