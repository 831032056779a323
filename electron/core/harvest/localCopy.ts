/**
 * The local verified copy of one file (transfer.ts transferFile, for a `local` storage
 * location): a partial written beside the destination while the source is hashed, fsynced,
 * re-read and hashed, its verification recorded, then renamed to a name no other file holds,
 * the folder fsynced, and only then the outcome recorded. A crash anywhere leaves markers that
 * recovery.ts follows.
 */
import { lstat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import {
  abandonAttempt,
  completedNote,
  describeError,
  dropPartial,
  holdsSame,
  sameContentOutcome,
  type Ending,
  type Target,
  type TransferDeps,
  type TransferEnd,
} from './attempt.js';
import { hooksFor, type Hook, type Instrument, type StorageLocation } from './config.js';
import { intoWatchedFolder } from './destination.js';
import { BATCH_DURABILITY_BELOW } from './durable.js';
import { runPostTransferHooks } from './hooks.js';
import { letGoFolder, NONE_MADE, prepareHeldFolder } from './folderHolds.js';
import {
  freeOrSameName,
  inFolder,
  partialPathFor,
  placeWithoutClobber,
  statIfThere,
  syncPlacedFolder,
  type FolderCheck,
} from './place.js';
import { beginAttempt, markVerified } from './attemptMarkers.js';
import { errorCode } from '../util/errors.js';
import { sameBytes, type FileRow } from './records.js';

/** A local copy under way: where it goes, and what it has left on disk so far. */
interface LocalAttempt {
  file: FileRow;
  instrument: Instrument;
  location: StorageLocation;
  /** The copy's name (a full path), and its folder. */
  destination: string;
  folder: string;
  redirected: string;
  post: Hook[];
  /** Its flush is left to deps.settle, with other small copies (durable.ts). */
  batched: boolean;
  /** The partial while it is this attempt's to remove: from its naming until it is placed. */
  partial: string | null;
  /** The copy is at its name (see finishPlaced). */
  placed: boolean;
  // The folders the check made, and whether a file is at a name in the folder as this attempt
  // ends: if not, those still empty are taken back (folderHolds.ts).
  made: readonly string[];
  filled: boolean;
}

/**
 * The verified copy into a local storage location. A failure before the copy has its name drops
 * what the attempt made (abandonAttempt) and is recorded; the destination folder, held for the
 * attempt, is let go however it ends.
 */
export async function copyLocally(
  deps: TransferDeps,
  file: FileRow,
  instrument: Instrument,
  target: Target,
  end: Ending,
): Promise<TransferEnd> {
  const { location } = target;
  const destination = join(location.base_path, ...target.relative.split('/'));
  // Recorded with a copy refused too: its record says where the file was to go.
  end.destination = destination;
  const looping = intoWatchedFolder(deps, location.base_path, target.relative);
  if (looping !== null) return await end.fail(looping, false);
  const attempt: LocalAttempt = {
    file,
    instrument,
    location,
    destination,
    folder: dirname(destination),
    redirected: target.redirected,
    post: hooksFor(deps.db, instrument.id, 'post_transfer'),
    batched: deps.settle !== undefined && file.size < BATCH_DURABILITY_BELOW,
    partial: null,
    placed: false,
    made: NONE_MADE,
    filled: false,
  };
  try {
    return await copyIntoFolder(deps, attempt, end);
  } catch (error) {
    if (attempt.placed) throw error;
    const place = {
      base: location.base_path,
      destination,
      partial: attempt.partial,
      mounts: deps.mounts,
    };
    if (await abandonAttempt(deps.db, file.id, place, error)) return 'requeue';
    return await end.fail(describeError(error));
  } finally {
    const takingBack = letGoFolder(attempt.folder, attempt.made, attempt.filled);
    if (takingBack) await takingBack;
  }
}

/** The steps of a local copy, in order, each of which may end it. */
async function copyIntoFolder(
  deps: TransferDeps,
  attempt: LocalAttempt,
  end: Ending,
): Promise<TransferEnd> {
  const checked = await prepareHeldFolder(attempt.location.base_path, attempt.folder, deps.mounts);
  if (!checked.ok) {
    const refused = folderRefusal(attempt.location, attempt.folder, checked);
    return await end.fail(refused.error, refused.retry);
  }
  attempt.made = checked.made;
  const alreadyThere = await skipIfAlreadyThere(deps, attempt, end);
  if (alreadyThere !== null) return alreadyThere;
  const copy = await copyAndVerify(deps, attempt, end);
  if (typeof copy === 'string') return copy;
  const placement = await placeVerified(deps, attempt, copy);
  attempt.filled = true;
  if (placement.same) return await dropForSameContent(deps, attempt, copy, placement.name, end);
  return await finishPlaced(deps, attempt, copy, placement.name, end);
}

/** Why the destination folder was refused (place.ts prepareFolder), and whether to retry. */
function folderRefusal(
  location: StorageLocation,
  folder: string,
  checked: Exclude<FolderCheck, { ok: true }>,
): { error: string; retry: boolean } {
  if (checked.kind === 'unmounted') {
    return {
      error:
        `storage location ${location.name}: ${location.base_path} held a mounted share or disk, ` +
        'and now holds none: it is not mounted; nothing was copied to the local disk under it',
      retry: true,
    };
  }
  if (checked.kind === 'base') {
    return {
      error:
        checked.error === null
          ? `storage location ${location.name}: ${location.base_path} is not a folder`
          : `storage location ${location.name} (${location.base_path}) is not reachable: ${describeError(checked.error)}`,
      retry: true,
    };
  }
  return {
    error:
      `destination folder ${folder} leads outside the storage location ` +
      `(to ${checked.realFolder}, through a symbolic link)`,
    retry: false,
  };
}

/**
 * The same content already there (a re-imaged station, a second copy of a share): skipped.
 * A link at the name is no copy (holdsSame). Null when a copy is to be made.
 */
async function skipIfAlreadyThere(
  deps: TransferDeps,
  attempt: LocalAttempt,
  end: Ending,
): Promise<TransferEnd | null> {
  const { file, destination } = attempt;
  const existing = await lstat(destination).catch(() => null);
  if (existing?.isFile() && existing.size === file.size) {
    let source, dest;
    try {
      [source, dest] = await Promise.all([
        deps.pool.hash(file.source_path),
        deps.pool.hash(destination),
      ]);
    } catch (error) {
      // The source (or the copy there) moved or deleted while compared: a new look, as for a
      // source gone during its copy (the file is gone, or found again as it is now).
      if (errorCode(error) === 'ENOENT') return 'requeue';
      throw error;
    }
    const after = await statIfThere(file.source_path);
    if (!after || !sameBytes(file, after)) return 'requeue';
    if (source.hash === dest.hash) {
      attempt.filled = true;
      const skip = {
        file,
        post: attempt.post,
        instrument: attempt.instrument,
        destination,
        hash: dest.hash,
        redirected: attempt.redirected,
      };
      return await end.store(await sameContentOutcome(deps, skip));
    }
  }
  return null;
}

/** A copy at its partial whose hash is the source's. */
interface VerifiedCopy {
  partial: string;
  sourceHash: string;
  destHash: string;
  bytes: number;
}

/**
 * Copies the source to a partial beside the destination, hashing both (copy.ts). The partial's
 * name is recorded before it is made, so a crash leaves nothing unknown behind. A copy whose
 * source changed, or whose hashes differ, is dropped and the attempt ends.
 */
async function copyAndVerify(
  deps: TransferDeps,
  attempt: LocalAttempt,
  end: Ending,
): Promise<VerifiedCopy | TransferEnd> {
  const { db } = deps;
  const { file } = attempt;
  const partial = partialPathFor(attempt.destination);
  attempt.partial = partial;
  beginAttempt(db, file.id, partial, attempt.made);
  const result = await deps.pool.copy(
    {
      source: file.source_path,
      partial,
      size: file.size,
      mtimeMs: file.mtime_ms,
      durable: !attempt.batched,
    },
    (bytes) => deps.progress(file.id, bytes),
  );
  const dropped = { base: attempt.location.base_path, partial, mounts: deps.mounts };
  if (result.outcome === 'source_changed') {
    await dropPartial(db, file.id, dropped);
    deps.log.info(
      { file: file.source_path, detail: result.detail },
      'harvest: source changed, re-queued',
    );
    return 'requeue';
  }
  if (result.sourceHash !== result.destHash) {
    await dropPartial(db, file.id, dropped);
    return await end.fail(
      `checksum mismatch: the source hashed ${result.sourceHash}, the copy ${result.destHash}; ` +
        'the copy was deleted',
    );
  }
  return {
    partial,
    sourceHash: result.sourceHash,
    destHash: result.destHash,
    bytes: result.bytes,
  };
}

/**
 * Gives the verified copy its name, never over another file: the destination, or the next free
 * numbered name. same: that name already holds this content (the copy is not placed).
 */
function placeVerified(
  deps: TransferDeps,
  attempt: LocalAttempt,
  copy: VerifiedCopy,
): Promise<{ name: string; same: boolean }> {
  const { db } = deps;
  const { file, destination } = attempt;
  // Verified. Record that before the rename, so a crash in between can be finished. Names in
  // one folder are chosen one transfer at a time: where the storage has no hard links, the
  // check for a free name and the rename are two steps.
  return inFolder(attempt.folder, async () => {
    // The name itself first: the link refuses it if it is taken (no separate check).
    let name = destination;
    for (;;) {
      markVerified(db, file.id, copy.destHash, name, {
        locationId: attempt.location.id,
        note: completedNote(name, destination, attempt.redirected),
        waitForDisk: attempt.batched || name !== destination,
      });
      if (await placeWithoutClobber(copy.partial, name, deps.log)) return { name, same: false };
      // Taken (since the check before the copy, by another source of this run, say): the
      // same content there or at a numbered name is a skip, as it would have been then.
      const next = await freeOrSameName(destination, (path) =>
        holdsSame(deps, path, copy.bytes, copy.destHash),
      );
      if (next.same) return next;
      name = next.name;
    }
  });
}

/** `name` was found holding the same content as the copy was placed: the copy goes, a skip. */
async function dropForSameContent(
  deps: TransferDeps,
  attempt: LocalAttempt,
  copy: VerifiedCopy,
  name: string,
  end: Ending,
): Promise<TransferEnd> {
  const dropped = { base: attempt.location.base_path, partial: copy.partial, mounts: deps.mounts };
  const gone = await dropPartial(deps.db, attempt.file.id, dropped);
  attempt.partial = null;
  if (!gone) {
    // A skip would forget the partial's name (only a failure keeps it), and the partial, a
    // whole copy of the file, would stay for good: failed, retried; the next attempt removes
    // it first, then finds the same content again.
    return await end.fail(
      `the destination already holds the same content (${name}), but this copy's partial ` +
        `could not be removed: ${copy.partial}`,
    );
  }
  const hash = copy.destHash;
  return await end.store(
    await sameContentOutcome(deps, {
      file: attempt.file,
      post: attempt.post,
      instrument: attempt.instrument,
      destination: name,
      hash,
      redirected: attempt.redirected,
    }),
  );
}

/** The copy is at its name `final`: made durable, described by the post hooks, recorded. */
async function finishPlaced(
  deps: TransferDeps,
  attempt: LocalAttempt,
  copy: VerifiedCopy,
  final: string,
  end: Ending,
): Promise<TransferEnd> {
  const { file } = attempt;
  // From here on the copy is at its name: whatever fails now is finished by recovery, which
  // the markers left in place lead to, never recorded as a failed copy.
  attempt.partial = null;
  attempt.placed = true;
  if (attempt.batched) await deps.settle!(final);
  else await syncPlacedFolder(dirname(final));
  const completedAt = deps.now();
  const metadata = await runPostTransferHooks(attempt.post, {
    db: deps.db,
    file,
    sourcePath: file.source_path,
    destinationPath: final,
    instrument: attempt.instrument.name,
  });
  return await end.store({
    status: 'completed',
    destinationPath: final,
    bytes: copy.bytes,
    destChecksum: copy.destHash,
    checksumVerified: true,
    completedAt,
    sourceHash: copy.sourceHash,
    metadata,
    note: completedNote(final, attempt.destination, attempt.redirected),
  });
}
