/**
 * Putting a verified copy at its final name without ever overwriting anything, and making
 * that name durable.
 */
import { randomBytes } from 'node:crypto';
import { link, lstat, open, rename, unlink } from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';

/**
 * `.<name>.<random>.partial` beside the destination (hidden, so no watcher takes it). A long
 * name is shortened in the partial's name, which must fit where the final name fits.
 */
export function partialPathFor(destination: string): string {
  const name = basename(destination);
  const short =
    Buffer.byteLength(name) > 200 ? Buffer.from(name).subarray(0, 180).toString() : name;
  return join(dirname(destination), `.${short}.${randomBytes(6).toString('hex')}.partial`);
}

/** `scan.tif` -> `scan (1).tif`, `scan (2).tif`, ... */
export function alternativeName(destination: string, n: number): string {
  const ext = extname(destination);
  const stem = destination.slice(0, destination.length - ext.length);
  return `${stem} (${n})${ext}`;
}

export async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

/** The first of destination, `name (1).ext`, `name (2).ext`, ... that does not exist yet. */
export async function freeName(destination: string): Promise<string> {
  if (!(await exists(destination))) return destination;
  for (let n = 1; ; n += 1) {
    const candidate = alternativeName(destination, n);
    if (!(await exists(candidate))) return candidate;
  }
}

const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EXDEV', 'EMLINK']);

/**
 * Moves `partial` to `destination` only if nothing is there: a hard link fails with EEXIST
 * instead of replacing, then the partial name goes. File systems without hard links (some
 * shares) get a check-then-rename, safe here because this station is the only writer that
 * picks names in its own destination folders. Returns false when the name was taken.
 */
export async function placeWithoutClobber(partial: string, destination: string): Promise<boolean> {
  try {
    await link(partial, destination);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? '';
    if (code === 'EEXIST') return false;
    if (!NO_HARD_LINKS.has(code)) throw error;
    if (await exists(destination)) return false;
    await rename(partial, destination);
    return true;
  }
  await unlink(partial);
  return true;
}

const folderQueues = new Map<string, Promise<unknown>>();

/**
 * Runs `work` after every earlier `inFolder` work on the same folder has finished: names in one
 * folder are chosen one placement at a time, since where the storage has no hard links, the
 * check for a free name and the rename are two steps.
 */
export async function inFolder<T>(folder: string, work: () => Promise<T>): Promise<T> {
  const key = folder.toLowerCase();
  const before = folderQueues.get(key) ?? Promise.resolve();
  const mine = before.catch(() => undefined).then(work);
  folderQueues.set(key, mine);
  try {
    return await mine;
  } finally {
    if (folderQueues.get(key) === mine) folderQueues.delete(key);
  }
}

/** fsync a folder so a rename in it survives a power cut (a no-op where folders cannot be). */
export async function syncFolder(folder: string): Promise<void> {
  let handle;
  try {
    handle = await open(folder, 'r');
    await handle.sync();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? '';
    if (!['EISDIR', 'EPERM', 'EINVAL', 'EBADF', 'EACCES'].includes(code)) throw error;
  } finally {
    await handle?.close();
  }
}

export async function removeQuietly(path: string | null): Promise<void> {
  if (!path) return;
  try {
    await unlink(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}
