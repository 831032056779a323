/**
 * The partial file an upload is received into, in the storage location's upload folder: made
 * there, read and written whole at an offset, and removed as an orphan once no record counts
 * on it.
 */
import { constants } from 'node:fs';
import { lstat, open, readdir, stat, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { Db } from '../../db/open.js';
import { checkInjectedFull } from '../../harvest/copy.js';
import { removeQuietly } from '../../harvest/place.js';
import { makeFolders } from '../../util/folders.js';
import { partialPaths, type ServerLocation } from './store.js';

export const UPLOAD_FOLDER = '.labstation-uploads';
export const CHUNK = 1024 * 1024;
export const NOFOLLOW = constants.O_NOFOLLOW ?? 0;

export async function writeFull(
  handle: FileHandle,
  buffer: Buffer,
  length: number,
  position: number,
) {
  checkInjectedFull();
  let written = 0;
  while (written < length) {
    const { bytesWritten } = await handle.write(
      buffer,
      written,
      length - written,
      position + written,
    );
    written += bytesWritten;
  }
}

export async function createPartial(location: ServerLocation, path: string): Promise<void> {
  const folder = join(location.base_path, UPLOAD_FOLDER);
  await makeFolders(folder, 0o700);
  const found = await lstat(folder);
  if (!found.isDirectory()) {
    throw new Error(`${folder} is not a folder (a symbolic link?); uploads cannot be kept there`);
  }
  const handle = await open(path, constants.O_CREAT | constants.O_EXCL | constants.O_RDWR, 0o644);
  await handle.close();
}

/** Partial files no record counts on, older than `before` (ms): left by a crash. */
export async function removeOrphans(
  db: Db,
  locations: ServerLocation[],
  before: number,
): Promise<number> {
  const known = partialPaths(db);
  let removed = 0;
  for (const location of locations) {
    const folder = join(location.base_path, UPLOAD_FOLDER);
    const names = await readdir(folder).catch(() => [] as string[]);
    for (const name of names) {
      const path = join(folder, name);
      if (!name.endsWith('.partial') || known.has(path)) continue;
      const found = await stat(path).catch(() => null);
      if (found?.isFile() && found.mtimeMs < before) {
        await removeQuietly(path);
        removed += 1;
      }
    }
  }
  return removed;
}
