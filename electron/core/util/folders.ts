/**
 * `mkdir -p` that says why it failed. Node's recursive mkdir (20.x) answers ENOENT whatever
 * stopped it below an existing folder: a read-only file system (EROFS), a file system out of
 * inodes (ENOSPC), no permission (EACCES). A caller that takes ENOENT to mean "a folder
 * vanished meanwhile" would then try again for ever. Here, an ENOENT is checked by making the
 * missing folders one at a time, which gives the real error.
 *
 * Answers the folders this call made, outermost first (none when `folder` was there), so that
 * a caller whose work there is refused can take back what it made (removeEmptyFolder).
 */
import { mkdir, rmdir, stat } from 'node:fs/promises';
import { dirname, sep } from 'node:path';

/**
 * What the paths inside `folder` start with: the folder and a separator, which a root (`/`,
 * `E:\\`, a storage location on a whole drive) already ends in.
 */
export function folderPrefix(folder: string): string {
  return folder.endsWith(sep) ? folder : folder + sep;
}

export async function makeFolders(folder: string, mode?: number): Promise<string[]> {
  const options = mode === undefined ? { recursive: true } : { recursive: true, mode };
  try {
    // The first folder it made, or undefined: it made that one and each below it to `folder`.
    const first = await mkdir(folder, options);
    return first === undefined ? [] : chainFrom(first, folder);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST' || code === 'ENOTDIR') throw await notAFolder(folder, error);
    if (code !== 'ENOENT') throw error;
  }
  // The folders to make, from the deepest one that exists down to `folder`.
  const missing: string[] = [];
  for (let at = folder; ; at = dirname(at)) {
    try {
      await stat(at);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      missing.unshift(at);
      // The root itself is missing: nothing to make it in (a drive that is gone).
      if (dirname(at) === at) break;
    }
  }
  const made: string[] = [];
  for (const at of missing) {
    try {
      await mkdir(at, mode === undefined ? undefined : { mode });
      made.push(at);
    } catch (error) {
      // Made meanwhile by someone else: go on. Anything else is why, ENOENT included (a
      // folder above went away meanwhile).
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOTDIR') throw await notAFolder(at, error);
      if (code !== 'EEXIST') throw error;
    }
  }
  return made;
}

/**
 * `first` and each folder below it down to `folder`, outermost first; none when `first` is not
 * spelled as one of `folder`'s (what was made is then not known, and nothing is taken back).
 */
function chainFrom(first: string, folder: string): string[] {
  const chain: string[] = [];
  for (let at = folder; ; at = dirname(at)) {
    chain.unshift(at);
    if (at === first) return chain;
    if (dirname(at) === at) return [];
  }
}

/**
 * Removes `folder` if it is empty: true when it is gone (or was). A folder that is not empty
 * stays (rmdir refuses it, ENOTEMPTY: another writer put something there), as does one that
 * cannot be removed for another reason; never throws, a folder left is only an empty folder.
 */
export async function removeEmptyFolder(folder: string): Promise<boolean> {
  try {
    await rmdir(folder);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT';
  }
}

/**
 * Takes back folders a caller made for work that did not happen (`made`, outermost first, as
 * makeFolders answers them): deepest first, each through `remove` (removeEmptyFolder unless the
 * caller must order it with its other writers there), stopping at the first that stays, since
 * the folders above it hold it.
 */
export async function takeBackFolders(
  made: readonly string[],
  remove: (folder: string, index: number) => Promise<boolean> = removeEmptyFolder,
): Promise<void> {
  for (let i = made.length - 1; i >= 0; i -= 1) if (!(await remove(made[i], i))) return;
}

/**
 * Why a folder could not be made when something on its way is not a folder (mkdir's EEXIST or
 * ENOTDIR): which path that is, as a harvest whose destination folder is named like a file
 * already there (a file `run1`, then a folder `run1/`) must say, or the reason reads as if
 * the folder were there.
 */
async function notAFolder(folder: string, error: unknown): Promise<unknown> {
  for (let at = folder; dirname(at) !== at; at = dirname(at)) {
    try {
      if ((await stat(at)).isDirectory()) return error;
      return Object.assign(
        new Error(`${at} is a file, where a folder is needed; rename or move that file`),
        { code: 'ENOTDIR' },
      );
    } catch (statError) {
      const code = (statError as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') return error;
    }
  }
  return error;
}
