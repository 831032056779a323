/**
 * Destination folders a transfer made and then put nothing in (its copy failed, was dropped,
 * or found the same content elsewhere) are taken back once empty, without ever removing a
 * folder another transfer of this station is about to place into.
 *
 * Folders are made by prepareFolder, and not in their folder's turn (place.ts inFolder): a copy
 * runs between the folder made and the file placed, and the copies into one folder run in
 * parallel (two copy workers, batches of files). So each transfer holds its destination folder
 * from before its check (prepareHeldFolder) until its end (letGoFolder), and a folder is
 * removed only when no transfer holds it or a folder below it:
 *
 * - The check for holders and the start of a removal are one synchronous step (takeBack), as
 *   is a hold and the look for removals under way (prepareHeldFolder). A transfer that held its
 *   folder first is seen, and nothing on its way is removed while it holds it; one that holds
 *   it after sees the removal, waits for it to end, and prepareFolder makes the folder again
 *   (its remembered check is dropped before the removal starts). No removal starts while it
 *   holds the folder, so it is there from its check to its end.
 * - A removal stops at the first folder that stays: one not empty (rmdir refuses it), or one
 *   held. The folders it still had to take back are left with a holder (the folder held, at or
 *   below), for whichever of its transfers ends last; one that put a file there drops them,
 *   as nothing above a file is empty.
 * - Only folders made by prepareFolder (by this attempt, or by another that failed and left
 *   them to the holders, or by one a crash interrupted: takeBackMade) are ever removed: never
 *   the storage location's folder, nor one that was there before.
 *
 * The success path costs a counter per folder and no file-system call: only a transfer that
 * ends without a file in its folder looks further.
 */
import { folderPrefix, removeEmptyFolder, takeBackFolders } from '../util/folders.js';
import {
  forgetFolderEverywhere,
  prepareFolder,
  type FolderCheck,
  type MountMemory,
} from './place.js';

/** Destination folder (as spelled) -> how many transfers hold it. */
const holders = new Map<string, number>();
/** Held folder -> folders made for it, or above it, to take back when its last holder lets go. */
const leftOvers = new Map<string, string[]>();
/** Folder (in lower case) -> its removal under way. */
const removals = new Map<string, Promise<boolean>>();

/** Nothing made: for a transfer whose check made no folder, or threw. */
export const NONE_MADE: readonly string[] = Object.freeze([]);

/** Whether `folder` is `at` or lies below it; letter case ignored, which only spares more. */
function atOrBelow(folder: string, at: string): boolean {
  const f = folder.toLowerCase();
  return f === at || f.startsWith(folderPrefix(at));
}

/**
 * prepareFolder for a transfer into `folder`, which it holds from this call until letGoFolder
 * (called once, however the transfer ends, even when this throws).
 */
export function prepareHeldFolder(
  base: string,
  folder: string,
  mounts?: MountMemory,
): Promise<FolderCheck> {
  holders.set(folder, (holders.get(folder) ?? 0) + 1);
  if (removals.size === 0) return prepareFolder(base, folder, mounts);
  return removalsOver(folder).then(() => prepareFolder(base, folder, mounts));
}

/** Until no removal of `folder` or of a folder above it is under way (none starts meanwhile). */
async function removalsOver(folder: string): Promise<void> {
  for (;;) {
    let pending: Promise<boolean> | undefined;
    for (const [at, removal] of removals) if (atOrBelow(folder, at)) pending = removal;
    if (pending === undefined) return;
    await pending;
  }
}

/**
 * A transfer into `folder` ends. `made`: the folders its check made; `filled`: a file is at a
 * name in `folder` (copied, or the same content found there), so none of the folders above it
 * is empty. Answers the removal of what is to be taken back, when this was the last holder and
 * something is; otherwise null (no promise, no file-system call).
 */
export function letGoFolder(
  folder: string,
  made: readonly string[],
  filled: boolean,
): Promise<void> | null {
  const left = (holders.get(folder) ?? 1) - 1;
  if (left > 0) holders.set(folder, left);
  else holders.delete(folder);
  if (filled) {
    if (leftOvers.size !== 0) leftOvers.delete(folder);
    return null;
  }
  if (made.length === 0 && leftOvers.size === 0) return null;
  const waiting = leftOvers.get(folder) ?? [];
  waiting.push(...made);
  if (left > 0) {
    if (waiting.length) leftOvers.set(folder, waiting);
    return null;
  }
  leftOvers.delete(folder);
  return waiting.length === 0 ? null : takeBack(waiting);
}

/**
 * Removes the empty ones of `folders` (all on one line from a held folder up), deepest first,
 * stopping at the first that stays: not empty, or held, then left to that holder.
 */
function takeBack(folders: string[]): Promise<void> {
  // Outermost first, as takeBackFolders takes them; each once.
  const line = [...new Set(folders)].sort((a, b) => a.length - b.length);
  return takeBackFolders(line, (at, index) => {
    const key = at.toLowerCase();
    for (const held of holders.keys()) {
      if (!atOrBelow(held, key)) continue;
      const waiting = leftOvers.get(held) ?? [];
      waiting.push(...line.slice(0, index + 1));
      leftOvers.set(held, waiting);
      return Promise.resolve(false);
    }
    // A check of it taken as it was would skip making it again.
    forgetFolderEverywhere(at);
    const removal: Promise<boolean> = removeEmptyFolder(at).then((gone) => {
      if (removals.get(key) === removal) removals.delete(key);
      return gone;
    });
    removals.set(key, removal);
    return removal;
  });
}

/**
 * Takes back the folders attempts a crash interrupted had made (recorded with their markers,
 * attemptMarkers.ts beginAttempt), once their partials are gone (recovery.ts
 * recoverInterrupted): those still empty are removed, deepest first. Each is taken back on its own, since the
 * folders of several attempts are not one line: one that stays (not empty, or held by a
 * transfer under way, then left to it) does not keep the others from going.
 */
export async function takeBackMade(folders: Iterable<string>): Promise<void> {
  // A folder's path is longer than any above it: the longest first are the deepest first.
  const deepestFirst = [...new Set(folders)].sort((a, b) => b.length - a.length);
  for (const folder of deepestFirst) await takeBack([folder]);
}

/**
 * The destination folders of a batch of small files (batch.ts): each checked once and held
 * from its check until the batch ends (letGo, however it ends).
 */
export class BatchFolders {
  private readonly checks = new Map<string, { folder: string; check: Promise<boolean> }>();
  private readonly made = new Map<string, readonly string[]>();
  /** Folders a copy of the batch is in (or may be, after a placement that was cut short). */
  private readonly filled = new Set<string>();

  /** prepareHeldFolder, once per folder: whether it passed (false when it threw). */
  check(base: string, folder: string, mounts?: MountMemory): Promise<boolean> {
    const key = `${base}\0${folder}`;
    let found = this.checks.get(key);
    if (found === undefined) {
      const check = prepareHeldFolder(base, folder, mounts).then(
        (checked) => {
          if (checked.ok && checked.made.length) this.made.set(key, checked.made);
          return checked.ok;
        },
        () => false,
      );
      found = { folder, check };
      this.checks.set(key, found);
    }
    return found.check;
  }

  /** The folders the check of `folder` made (after check), for the attempts' markers. */
  madeFor(base: string, folder: string): readonly string[] {
    return this.made.get(`${base}\0${folder}`) ?? NONE_MADE;
  }

  /** A copy of the batch is at a name in `folder`. */
  fill(folder: string): void {
    this.filled.add(folder);
  }

  async letGo(): Promise<void> {
    for (const [key, { folder, check }] of this.checks) {
      await check;
      const takingBack = letGoFolder(
        folder,
        this.made.get(key) ?? NONE_MADE,
        this.filled.has(folder),
      );
      if (takingBack) await takingBack;
    }
  }
}
