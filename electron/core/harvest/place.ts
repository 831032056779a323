/**
 * Putting a verified copy at its final name without ever overwriting anything, and making
 * that name durable.
 */
import type { Stats } from 'node:fs';
import {
  link,
  lstat,
  open,
  realpath,
  rename,
  rmdir,
  stat,
  symlink,
  unlink,
} from 'node:fs/promises';
import { basename, dirname, extname, join, resolve } from 'node:path';
import { errorCode } from '../util/errors.js';
import type { Logger } from '../util/log.js';
import { failpoint, injected, injectedError } from '../util/failpoint.js';
import { noHardLinks, refuseLinkInTests } from './hardLinks.js';
import { randomPoolBytes } from '../util/random.js';
import { folderPrefix, makeFolders } from '../util/folders.js';
import { fitBytes, NAME_MAX_BYTES } from '../../../shared/harvest/template.js';

/**
 * `.<name>.<random>.partial` beside the destination (hidden, so no watcher takes it). A long
 * name is shortened in the partial's name, which must fit where the final name fits.
 */
export function partialPathFor(destination: string): string {
  const name = basename(destination);
  const short =
    Buffer.byteLength(name) > 200 ? Buffer.from(name).subarray(0, 180).toString() : name;
  return join(dirname(destination), `.${short}.${randomPoolBytes(6).toString('hex')}.partial`);
}

/**
 * `scan.tif` -> `scan (1).tif`, `scan (2).tif`, ... A name that would grow past 255 bytes is
 * shortened before the number (the extension kept), so the new name fits where the first did.
 */
export function alternativeName(destination: string, n: number): string {
  const folder = dirname(destination);
  const name = basename(destination);
  let ext = extname(name);
  if (Buffer.byteLength(ext) > NAME_MAX_BYTES / 2) ext = '';
  const suffix = ` (${n})${ext}`;
  const stem = fitBytes(
    name.slice(0, name.length - ext.length),
    NAME_MAX_BYTES - Buffer.byteLength(suffix),
  );
  return join(folder, `${stem}${suffix}`);
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

/** How many numbered names freeOrSameName compares with the content, at most. */
const SAME_LOOKS = 8;

/**
 * The first of destination, `name (1).ext`, `name (2).ext`, ... that does not exist yet, or,
 * should one before it already hold the content (`holds` says), that one: content harvested
 * twice into one folder, each time beside other content of its name, is not copied again.
 */
export async function freeOrSameName(
  destination: string,
  holds: (path: string) => Promise<boolean>,
): Promise<{ name: string; same: boolean }> {
  for (let n = 0; ; n += 1) {
    const name = n === 0 ? destination : alternativeName(destination, n);
    if (!(await exists(name))) return { name, same: false };
    // Each look may read a whole file: past the first few numbered names (an instrument that
    // writes image.raw again and again) only a free name is looked for. One that cannot be
    // read is not the same.
    if (n <= SAME_LOOKS && (await holds(name).catch(() => false))) return { name, same: true };
  }
}

/**
 * What `look` (stat, or lstat) finds at `path`, or null when nothing is there (ENOENT); any
 * other error (a share away, no permission) throws: not there is said only when surely so.
 */
export async function statIfThere(
  path: string,
  look: (path: string) => Promise<Stats> = stat,
): Promise<Stats | null> {
  return await look(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw error;
  });
}

/**
 * Whether `final` is the link made from `partial`: the partial's name gone since (linked, then
 * removed; none recorded) or the same file still. Only a partial surely gone counts: one that
 * cannot be looked at throws. `look`: how the partial is looked at (stat, or lstat).
 */
export async function linkedFrom(
  partial: string | null,
  final: Stats,
  look: (path: string) => Promise<Stats> = stat,
): Promise<boolean> {
  if (partial === null) return true;
  const found = await statIfThere(partial, look);
  return found === null || (found.ino === final.ino && found.dev === final.dev);
}

/**
 * Moves `partial` to `destination` only if nothing is there: a hard link fails with EEXIST
 * instead of replacing, then the partial name goes. File systems without hard links (some
 * shares) get a check-then-rename, safe here because this station is the only writer that
 * picks names in its own destination folders. Returns false when the name was taken. Once the
 * copy has its name, a partial name that cannot be removed (a scanner holding it) is left, and
 * `log` told: the copy is placed, and recorded so.
 */
export async function placeWithoutClobber(
  partial: string,
  destination: string,
  log?: Logger,
): Promise<boolean> {
  try {
    refuseLinkInTests(partial, destination);
    await link(partial, destination);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? '';
    if (code === 'EEXIST') return false;
    if (!noHardLinks(code)) throw error;
    if (await exists(destination)) return false;
    await rename(partial, destination);
    return true;
  }
  // Crash test: the copy has its name and its partial name still, as a power cut may leave it.
  failpoint('harvest.linked');
  // Its content is at the destination now: a partial that someone else removed meanwhile (a
  // server dropping the uploads of a station it refuses) is gone as it should be.
  try {
    // Test hook: the partial name cannot be removed (Windows, a scanner holding the file).
    if (injected('harvest.partial-stays')) throw injectedError('EBUSY', `unlink '${partial}'`);
    await removeQuietly(partial);
  } catch (error) {
    log?.warn({ err: error, partial }, 'harvest: a placed copy left its partial name');
  }
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

/**
 * Whether a partial that was not found is surely gone: the storage location's folder can be
 * seen, and is still mounted where it was a mount point (checkBase, as before a copy). One out
 * of reach (a share or drive gone: on Windows a path on a lost drive answers "not found" too;
 * a share unmounted from its empty folder) may hold the partial again when it is back, so its
 * name must stay recorded, for its removal before the file's next attempt. Throws why it is
 * not sure.
 */
export async function assertGoneUnder(base: string, mounts?: MountMemory): Promise<void> {
  const check = await checkBase(base, mounts);
  if (check.ok) return;
  const why =
    check.kind === 'unmounted'
      ? 'is not mounted'
      : check.error === null
        ? 'is not a folder'
        : `is out of reach (${errorCode(check.error) ?? (check.error as Error).message})`;
  throw new Error(`the storage folder ${base}, which may hold it still, ${why}`);
}

/**
 * Removes an attempt's partial; one not found counts as removed only as assertGoneUnder says.
 */
export async function removePartial(
  path: string | null,
  base: string,
  mounts?: MountMemory,
): Promise<void> {
  if (!path) return;
  try {
    // Test hook: an unplaced partial cannot be removed (Windows, a scanner holding the file).
    if (injected('harvest.partial-kept')) throw injectedError('EBUSY', `unlink '${path}'`);
    await unlink(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    await assertGoneUnder(base, mounts);
  }
}

/** How long a destination folder, once made and checked, is taken as it was. */
const FOLDER_CHECK_MS = 2000;
const checkedFolders = new Map<string, number>();

export type FolderCheck =
  /**
   * made: the folders this check made (outermost first; none for one taken as it was), for
   * the caller to take back, once empty, should nothing be placed there (folderHolds.ts).
   */
  | { ok: true; made: readonly string[] }
  /** The storage location's folder: not a folder (error null), or not reachable. */
  | { ok: false; kind: 'base'; error: unknown }
  | { ok: false; kind: 'outside'; realFolder: string }
  /** The base was a mounted file system's root, and is now a folder of the one above it. */
  | { ok: false; kind: 'unmounted' };

/** Which storage folders were seen as mount points (kept by the engine in the settings). */
export interface MountMemory {
  wasMounted(base: string): boolean;
  mounted(base: string): void;
}

/** A folder that was there (or taken as it was): one answer for all, nothing made. */
const THERE: FolderCheck = Object.freeze({ ok: true, made: Object.freeze([]) });

/**
 * Makes `folder` (inside `base`) exist and checks that it really is inside `base`: a symbolic
 * link in the storage tree must not carry a copy somewhere else. A folder that passed within
 * the last two seconds is taken as it was, without asking the file system again: for 10,000
 * small files in 100 folders that saves four file-system calls per file. A copy into a folder
 * that vanished meanwhile fails to create its partial, and the caller forgets the folder.
 */
export async function prepareFolder(
  base: string,
  folder: string,
  mounts?: MountMemory,
): Promise<FolderCheck> {
  const key = `${base}\0${folder}`;
  const until = checkedFolders.get(key);
  if (until !== undefined && until > Date.now()) return THERE;
  checkedFolders.delete(key);
  const found = await checkBase(base, mounts);
  if (!found.ok) return found;
  const made: string[] = [];
  const outside = await makeFoldersInside(base, folder, made);
  if (outside !== null) return { ok: false, kind: 'outside', realFolder: outside };
  if (checkedFolders.size > 10_000) checkedFolders.clear();
  checkedFolders.set(key, Date.now() + FOLDER_CHECK_MS);
  return made.length === 0 ? THERE : { ok: true, made };
}

/** Whether the storage location's folder can be seen (checkBase): a name not found there is not. */
export async function inReach(base: string, mounts?: MountMemory): Promise<boolean> {
  return (await checkBase(base, mounts)).ok;
}

/**
 * The storage location's folder itself: there, a folder, and still mounted where it was seen
 * as a mount point (mountProblem).
 */
async function checkBase(
  base: string,
  mounts?: MountMemory,
): Promise<{ ok: true } | Exclude<FolderCheck, { ok: true } | { kind: 'outside' }>> {
  try {
    const found = await stat(base);
    if (!found.isDirectory()) return { ok: false, kind: 'base', error: null };
    if (mounts && (await mountProblem(base, found, mounts)))
      return { ok: false, kind: 'unmounted' };
    return { ok: true };
  } catch (error) {
    return { ok: false, kind: 'base', error };
  }
}

/**
 * Null when `folder` (which need not exist yet) stays inside `base` once symbolic links are
 * resolved; otherwise where it leads. What does not exist yet cannot be a link: its deepest
 * existing ancestor decides.
 */
export async function leadsOutside(base: string, folder: string): Promise<string | null> {
  const realBase = await realpath(base);
  const within = folderPrefix(realBase);
  let probe = folder;
  for (;;) {
    try {
      const real = await realpath(probe);
      return real === realBase || real.startsWith(within) ? null : real;
    } catch (error) {
      const parent = dirname(probe);
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || parent === probe) throw error;
      probe = parent;
    }
  }
}

/**
 * Whether `base` has lost the file system mounted on it. A share is often mounted on an empty
 * folder of the local disk: unmounted, that folder is still there, and copies would fill the
 * local disk with records saying they are on the share. A base on another device than its
 * parent folder is a mount point, remembered as such; one remembered that is on its parent's
 * device again is refused until the share is back.
 */
async function mountProblem(base: string, found: Stats, mounts: MountMemory): Promise<boolean> {
  const parent = await stat(dirname(base)).catch(() => null);
  // The root of a drive or of the system (its own parent) counts as mounted.
  if (parent === null || parent.dev !== found.dev || parent.ino === found.ino) {
    mounts.mounted(base);
    return false;
  }
  return mounts.wasMounted(base);
}

/**
 * Makes `folder` (inside `base`) unless a symbolic link leads it out of `base`: checked before
 * any of it is made (a link must not get folders made where it leads), and again once made (a
 * link put there meanwhile). Null when made inside; otherwise where it leads. `made` gets the
 * folders made inside `base` (outermost first; never `base` itself, should it have been gone),
 * only when they stayed inside it: folders made through a link put there meanwhile are not
 * ours to take back.
 */
export async function makeFoldersInside(
  base: string,
  folder: string,
  made?: string[],
): Promise<string | null> {
  const before = await leadsOutside(base, folder);
  if (before !== null) return before;
  const madeNow = await makeFolders(folder);
  if (injected('harvest.link-swapped-in')) await swapInLink(base, folder, madeNow);
  const after = await leadsOutside(base, folder);
  if (after === null) {
    const within = folderPrefix(resolve(base));
    const inside = madeNow.filter((at) => resolve(at).startsWith(within));
    // Bounded: a process that makes folders it never places into (attempts that failed) must
    // not grow it for good. The oldest go (a Set keeps the order they came in): folders made
    // that long ago have reached the disk by the system's own writeback (within half a minute
    // on Linux), while the copies of those made just now still need theirs flushed.
    if (entryNotSynced.size >= 10_000) {
      for (const old of [...entryNotSynced].slice(0, 1_000)) entryNotSynced.delete(old);
    }
    for (const at of inside) entryNotSynced.add(resolve(at));
    made?.push(...inside);
  }
  return after;
}

/**
 * The folders this process made for copies whose own entry, in the folder above, no fsync has
 * covered yet. A copy's rename is made durable by an fsync of its folder, but a folder made for
 * it (the template's `{yyyy}/{mm}/{dd}`) is only an entry in its parent until that parent is
 * flushed too: after a power cut the copy could be gone with its folder, its record completed.
 */
const entryNotSynced = new Set<string>();

/**
 * Makes a copy's rename into `folder` durable: an fsync of the folder, and of each folder above
 * it up to the first this process did not make (syncPlacedFolder's duty, where each file is
 * flushed on its own; a batch's syncfs covers them all: entriesSynced).
 */
export async function syncPlacedFolder(folder: string): Promise<void> {
  await syncFolder(folder);
  const chain: string[] = [];
  for (let at = resolve(folder); entryNotSynced.has(at); at = dirname(at)) chain.push(at);
  for (const at of chain) await syncFolder(dirname(at));
  // Forgotten once all of them are flushed: a copy placed in one of them meanwhile flushes
  // them too, rather than taking them for flushed while this one is under way.
  for (const at of chain) entryNotSynced.delete(at);
}

/**
 * Makes a copy's rename into `folder` durable where no one remembers which folders above it were
 * made for it (a process started since, as the server finishing an upload placed before it
 * stopped): an fsync of `folder` and of each folder above it, up to and including `base`, the
 * storage location's folder. A few fsyncs of folders already on disk cost nothing; one left out
 * could lose the copy with its folder after a power cut while its record says completed.
 */
export async function syncFoldersUpTo(folder: string, base: string): Promise<void> {
  const top = resolve(base);
  const within = folderPrefix(top);
  let at = resolve(folder);
  await syncFolder(at);
  while (at !== top && at.startsWith(within)) {
    at = dirname(at);
    await syncFolder(at);
  }
}

/** A syncfs covered `folder`: its entry, and those of the folders above it, are on disk. */
export function entriesSynced(folder: string): void {
  let at = resolve(folder);
  while (entryNotSynced.delete(at)) at = dirname(at);
}

/**
 * Test hook: another writer to the storage swaps a symbolic link in for the folder just made,
 * between the two checks of makeFoldersInside, leading to the storage location's parent folder.
 * No test can otherwise win that race on purpose. Only a folder this call made (and so empty).
 */
async function swapInLink(base: string, folder: string, madeNow: string[]): Promise<void> {
  if (!madeNow.includes(folder)) return;
  await rmdir(folder);
  await symlink(dirname(resolve(base)), folder, 'dir');
}

/** After a failure in `folder`: check it again next time. */
export function forgetFolder(base: string, folder: string): void {
  checkedFolders.delete(`${base}\0${folder}`);
}

/**
 * Before `folder` is removed: no check of it is taken as it was any more, under whichever
 * storage location it was checked (a location's folder may lie in another's), nor in whichever
 * letter case (a folder removed on a file system that ignores case is gone in every spelling).
 * Goes through every remembered check: only a failed transfer that made folders removes them.
 */
export function forgetFolderEverywhere(folder: string): void {
  const wanted = folder.toLowerCase();
  for (const key of checkedFolders.keys()) {
    if (key.slice(key.indexOf('\0') + 1).toLowerCase() === wanted) checkedFolders.delete(key);
  }
}
