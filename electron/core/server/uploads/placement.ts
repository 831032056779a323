/**
 * Placing a verified upload: its destination's folders made inside the storage location, a
 * name that clobbers nothing (or the same content found there: a skip), the file linked or
 * renamed there, and the folders it made taken back should it be refused.
 */
import { lstat } from 'node:fs/promises';
import { basename, dirname, posix } from 'node:path';
import type { Db } from '../../db/open.js';
import { removeEmptyFolder, takeBackFolders } from '../../util/folders.js';
import { hashFile } from '../../harvest/copy.js';
import {
  freeOrSameName,
  makeFoldersInside,
  inFolder,
  placeWithoutClobber,
  removeQuietly,
  syncFolder,
} from '../../harvest/place.js';
import { UploadRefusal } from './refusal.js';
import { deleteUpload, type Finished, type ServerLocation, type UploadRow } from './store.js';

/** True when `path` is a regular file (not a link) of `size` bytes that hashes to `hash`. */
export async function holdsSameContent(path: string, size: number, hash: string): Promise<boolean> {
  const found = await lstat(path).catch(() => null);
  return found !== null && found.isFile() && found.size === size
    ? (await hashFile(path)).hash === hash
    : false;
}

/**
 * The folders a refused placement into `folder` made (`made`, outermost first), those still
 * empty, deepest first, each in its own turn (inFolder; `folder`'s is the caller's): an upload
 * into one of them makes it again, or has put its file there, before or after, never between
 * its folder made and its file placed. Another upload's folder below a made one keeps that one
 * and those above it (rmdir refuses a folder that is not empty).
 */
export function takeBackUploadFolders(made: readonly string[], folder: string): Promise<void> {
  return takeBackFolders(made, (at) =>
    at === folder ? removeEmptyFolder(at) : inFolder(at, () => removeEmptyFolder(at)),
  );
}

/**
 * The verified partial placed at `destination` or a numbered name beside it (the folders it
 * makes listed in `made`), or removed as a skip when one of them already holds its content.
 */
export async function placeFinished(
  db: Db,
  row: UploadRow,
  location: ServerLocation,
  reread: { hash: string },
  destination: string,
  made: string[],
): Promise<Finished> {
  const partial = row.partial_path as string;
  const folder = dirname(destination);
  const outside = await makeFoldersInside(location.base_path, folder, made);
  if (outside !== null) {
    await removeQuietly(partial);
    deleteUpload(db, row.uuid);
    throw new UploadRefusal(
      400,
      `destination_path: the folder leads outside the storage location (to ${outside}, ` +
        'through a symbolic link)',
    );
  }
  // The same content at the name, or at a numbered name before a free one, is a skip.
  const holds = (path: string) => holdsSameContent(path, row.size, row.xxhash);
  let name: string;
  for (;;) {
    const next = await freeOrSameName(destination, holds);
    if (next.same) {
      await removeQuietly(partial);
      return {
        state: 'skipped',
        finalPath: posix.join(posix.dirname(row.destination_path), basename(next.name)),
        destChecksum: reread.hash,
        note: 'the destination already holds the same content',
      };
    }
    name = next.name;
    if (await placeWithoutClobber(partial, name)) break;
  }
  await syncFolder(folder);
  const finalPath = posix.join(posix.dirname(row.destination_path), basename(name));
  return {
    state: 'completed',
    finalPath,
    destChecksum: reread.hash,
    note:
      name === destination
        ? ''
        : `the destination held other content; this copy was written as ${basename(name)}`,
  };
}
