/**
 * Finding files in watched folders: a full walk (at start, every few minutes, on a schedule),
 * with the watches in between (watchers.ts). The walk is the truth; a watch only makes new
 * files show up sooner. Symbolic links are not followed (a link loop on a share would never
 * end).
 */
import { lstat, opendir } from 'node:fs/promises';
import { basename, join, relative, sep } from 'node:path';
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
