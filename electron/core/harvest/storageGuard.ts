/**
 * Storage locations inside a watched folder. A harvest that found its own copies there would
 * harvest them again, a folder deeper each run. Import refuses such a bundle (bundle.ts), but a
 * configuration from the server is not checked against this station's disks, and links hide
 * the overlap from a comparison of paths as written (a watch of `/data/link` that leads to
 * `/data/src`, storage at `/data/src/store`). So the harvest itself leaves out every folder of
 * a watched tree that is, on disk, a local storage location's base: compared by real path.
 */
import { realpathSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, sep } from 'node:path';
import { platformGlobOptions } from '../../../shared/harvest/glob.js';

/**
 * The folder (relative to `watch`, `/`-separated; '' for the watched folder itself) at which
 * `base` lies inside `watch`, or null when it does not.
 */
export function storageFolderIn(watch: string, base: string): string | null {
  const rel = relative(watch, base);
  if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return null;
  return rel.split(sep).join('/');
}

/** Whether one of two folders is the other, or lies inside it. */
export function foldersOverlap(a: string, b: string): boolean {
  return storageFolderIn(a, b) !== null || storageFolderIn(b, a) !== null;
}

/**
 * Where `path` is on disk: its real path, or (for a path not made yet, as a storage location's
 * base often is before its first copy) the real path of its nearest existing folder with the
 * rest appended. The path as written when nothing of it can be resolved.
 */
export async function realOrNearest(path: string): Promise<string> {
  const rest: string[] = [];
  for (let at = path; ; at = dirname(at)) {
    try {
      return join(await realpath(at), ...rest.reverse());
    } catch {
      if (dirname(at) === at) return path;
      rest.push(basename(at));
    }
  }
}

/** realOrNearest, for a one-shot command's checks. */
export function realOrNearestSync(path: string): string {
  const rest: string[] = [];
  for (let at = path; ; at = dirname(at)) {
    try {
      return join(realpathSync.native(at), ...rest.reverse());
    } catch {
      if (dirname(at) === at) return path;
      rest.push(basename(at));
    }
  }
}

/**
 * Whether this platform's file systems compare names without letter case (NTFS, APFS as
 * formatted by default), as its globs do (platformGlobOptions).
 */
export const CASE_BLIND_NAMES = platformGlobOptions(process.platform).caseInsensitive;

/**
 * A source path as a file's identity compares it where names are compared without case
 * (CASE_BLIND_NAMES: Windows and macOS, whose usual file systems keep case but ignore it): A to
 * Z folded, as SQLite's NOCASE folds them, so that a watched folder typed anew in other case
 * (`d:\data` for `D:\Data`) finds its files' records, not 10,000 new files to copy again
 * under new ARKs. Other letters are compared as written.
 */
export function sourceKey(path: string, caseBlind = CASE_BLIND_NAMES): string {
  return caseBlind ? path.replace(/[A-Z]+/g, (letters) => letters.toLowerCase()) : path;
}

/**
 * Whether `rel` (relative to a watched folder) is one of `folders` or inside one; without
 * letter case where the file system has none: `sem/2025` is in the folder `SEM` on Windows,
 * where a copy written there would be harvested again, one folder deeper each time.
 */
export function inFolders(
  folders: readonly string[],
  rel: string,
  caseBlind = CASE_BLIND_NAMES,
): boolean {
  const named = (path: string): string => (caseBlind ? path.toLowerCase() : path);
  const path = named(rel);
  return folders.some((folder) => {
    const f = named(folder);
    return f === '' || path === f || path.startsWith(`${f}/`);
  });
}
