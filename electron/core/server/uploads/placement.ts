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
  linkedFrom,
  placeWithoutClobber,
  removeQuietly,
  statIfThere,
  syncFoldersUpTo,
  syncPlacedFolder,
} from '../../harvest/place.js';
import { UploadRefusal } from './refusal.js';
import {
  deleteUpload,
  markPlacing,
  type Finished,
  type ServerLocation,
  type UploadRow,
} from './store.js';
import { injected } from '../../util/failpoint.js';

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
      markPlacing(db, row.uuid, null);
      await removeQuietly(partial);
      return {
        state: 'skipped',
        finalPath: posix.join(posix.dirname(row.destination_path), basename(next.name)),
        destChecksum: reread.hash,
        note: 'the destination already holds the same content',
      };
    }
    name = next.name;
    markPlacing(db, row.uuid, name);
    if (await placeWithoutClobber(partial, name)) break;
  }
  // Test hook: the server stops between the link and the record (a crash, a power cut).
  if (injected('upload.placed-unrecorded')) throw new Error('injected: stopped before the record');
  // With the folders the placement made, as a station's copy (harvest/place.ts).
  await syncPlacedFolder(folder);
  const finalPath = posix.join(posix.dirname(row.destination_path), basename(name));
  return {
    state: 'completed',
    finalPath,
    destChecksum: reread.hash,
    note: placedNote(name, destination),
  };
}

/** The note of a copy placed at `name` for `destination` (the same, or a numbered name). */
function placedNote(name: string, destination: string): string {
  return name === destination
    ? ''
    : `the destination held other content; this copy was written as ${basename(name)}`;
}

/**
 * An upload the server stopped between its link and its record (its placing_path, markPlacing):
 * the outcome to record when the file at that name is its copy (its content, and its partial
 * gone after the link or the same file still), or null, the mark cleared (the link never
 * happened, or the name holds another's file). The copy is made durable before it counts. A
 * name or partial that cannot be looked at (a share away) throws, the mark kept for a later try.
 */
export async function placedBefore(
  db: Db,
  row: UploadRow,
  location: ServerLocation,
  destination: string,
): Promise<Finished | null> {
  const at = row.placing_path;
  if (at === null) return null;
  const found = await statIfThere(at, lstat);
  const ours =
    found !== null &&
    found.isFile() &&
    row.received === row.size &&
    (await linkedFrom(row.partial_path, found, lstat));
  // A file there that cannot be read whole is not taken for this upload's.
  const same = (): Promise<boolean> =>
    holdsSameContent(at, row.size, row.xxhash).catch(() => false);
  if (!ours || !(await same())) {
    markPlacing(db, row.uuid, null);
    return null;
  }
  await removeQuietly(row.partial_path);
  // The folders the placement made are not known any more (a server restarted since): each
  // one up to the storage location's is flushed, as syncPlacedFolder would have.
  await syncFoldersUpTo(dirname(at), location.base_path);
  return {
    state: 'completed',
    finalPath: posix.join(posix.dirname(row.destination_path), basename(at)),
    destChecksum: row.xxhash,
    note: [placedNote(at, destination), 'recorded after the server restarted']
      .filter(Boolean)
      .join('; '),
  };
}
