/**
 * What a crash or kill left of a transfer, finished or undone at the next start: the markers an
 * attempt records (attemptMarkers.ts beginAttempt, markVerified) say how far it had gone.
 */
import type { TransferStatus } from '../../../shared/harvest/management.js';
import { stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Db } from '../db/open.js';
import { cachedStatement } from '../db/statements.js';
import { failpoint } from '../util/failpoint.js';
import { redirectOf, type TransferDeps } from './attempt.js';
import { hooksFor, type Instrument } from './config.js';
import { fsyncPath } from './durable.js';
import { runPostTransferHooks } from './hooks.js';
import {
  exists,
  inReach,
  linkedFrom,
  removePartial,
  removeQuietly,
  syncFolder,
  syncPlacedFolder,
} from './place.js';
import { clearAttempt, madeFolders, unmarkVerified } from './attemptMarkers.js';
import { takeBackMade } from './folderHolds.js';
import { finishTransfer, interruptedFiles, type FileRow } from './records.js';
import { storageFolderIn } from './storageGuard.js';

/**
 * Whether what is at pending_destination is the link this station made: the partial is gone
 * (linked, then removed) or is the same file. A name someone else took between the check and
 * the link is never ours, and never deleted. Throws when the partial cannot be looked at: the
 * marks stay for a later try (a copy taken for another's would lose them).
 */
async function placedByUs(file: FileRow): Promise<boolean> {
  if (!file.pending_destination) return false;
  const final = await stat(file.pending_destination).catch(() => null);
  return final !== null && (await linkedFrom(file.partial_path, final));
}

/**
 * After a crash or kill: a copy that was under way is thrown away (its file is tried again),
 * and the destination folders its attempt made are taken back once empty (takeBackMade); a
 * verified copy that had reached its final name is recorded as completed, once. `takeBackLater`
 * gets those folders instead, for a caller that recovers several files and takes back all
 * their folders once every partial is gone: a folder one attempt made may hold the partial of
 * another, which found it made (its check taken as it was) and recorded none.
 */
export async function recoverInterrupted(
  deps: TransferDeps,
  file: FileRow,
  instrument: Instrument | undefined,
  takeBackLater?: Set<string>,
): Promise<'completed' | 'skipped' | null> {
  const { db } = deps;
  if (file.verified_hash && file.pending_destination && (await exists(file.pending_destination))) {
    const found = await deps.pool.hash(file.pending_destination);
    if (found.hash !== file.verified_hash && (await placedByUs(file))) {
      // Our copy reached its name but not the disk whole (a power cut before the batch flush,
      // durable.ts): it goes, and the file is transferred again.
      deps.log.warn(
        { file: file.source_path, destination: file.pending_destination },
        'harvest: a copy damaged by a crash was removed',
      );
      await removeQuietly(file.pending_destination);
    }
    if (found.hash === file.verified_hash) {
      // A small copy was placed before its batch's flush (durable.ts): it is made durable now,
      // before it is recorded; a failure leaves it marked, for the next try.
      const ours = await placedByUs(file);
      await fsyncPath(file.pending_destination);
      await syncPlacedFolder(dirname(file.pending_destination));
      // After a restart this process made none of the folders: the attempt's record names them.
      for (const at of madeFolders(file)) await syncFolder(dirname(at));
      // Not ours: the partial goes unplaced, so its verified marks go first (unmarkVerified). A
      // crash before the record then transfers the file again, and that finds the skip.
      if (!ours) unmarkVerified(db, file.id);
      await removeQuietly(file.partial_path);
      if (!ours) failpoint('harvest.unplaced-removed');
      const finishedAt = deps.now();
      const metadata = instrument
        ? await runPostTransferHooks(hooksFor(db, instrument.id, 'post_transfer'), {
            db,
            file,
            sourcePath: file.source_path,
            destinationPath: file.pending_destination,
            instrument: instrument.name,
          })
        : null;
      // Recorded as the attempt would have: where its copy went (a hook may have sent it to
      // another storage location than the instrument's) and its note. The same content that
      // reached the name another way (our copy never linked) is the skip it would have been.
      const kept = file.pending_note ?? '';
      const status = ours ? 'completed' : 'skipped';
      const why = ours
        ? kept
        : ['the destination already holds the same content', redirectOf(kept)]
            .filter(Boolean)
            .join('; ');
      finishTransfer(db, file.id, {
        status,
        storageLocationId:
          locationStill(db, file.pending_location_id) ?? instrument?.storage_location?.id ?? null,
        destinationPath: file.pending_destination,
        bytes: ours ? found.bytes : 0,
        destChecksum: found.hash,
        checksumVerified: true,
        startedAt: finishedAt,
        completedAt: finishedAt,
        sourceHash: file.verified_hash,
        metadata,
        note: [why, 'finished after a restart: the verified copy had reached its name']
          .filter(Boolean)
          .join('; '),
      });
      return status;
    }
  }
  const base = file.partial_path === null ? null : storageFolderOf(db, file.partial_path);
  // Our copy is not at its name (another's file may be): its partial goes unplaced, so the
  // verified marks go first (unmarkVerified), or a crash between would take a file later put at
  // that name for ours. Kept while the storage folder is out of reach (a share away, whose empty
  // mount folder answers "not found"): the copy may be at its name there, recorded once the share
  // is back; the partial's removal fails then too.
  if (file.verified_hash && (base === null || (await inReach(base, deps.mounts)))) {
    unmarkVerified(db, file.id);
  }
  if (base === null) await removeQuietly(file.partial_path);
  else await removePartial(file.partial_path, base, deps.mounts);
  failpoint('harvest.unplaced-removed');
  clearAttempt(db, file.id);
  // Only folders inside the storage folder that holds the partial, never that folder itself
  // (relative to it: ''); none where no storage location holds it any more.
  const made =
    base === null
      ? []
      : madeFolders(file).filter((at) => !['', null].includes(storageFolderIn(base, at)));
  if (takeBackLater) for (const at of made) takeBackLater.add(at);
  else if (made.length) await takeBackMade(made);
  return null;
}

/**
 * At a start, before anything is transferred: every file a crash or kill interrupted
 * (records.ts interruptedFiles), one after the other until the harvest stops, the folders
 * their attempts made taken back once every partial is gone. A file whose recovery fails stays
 * marked: tried again before its next transfer (transferQueue.ts). `run`: a one-shot run's
 * counts, to which a verified copy recorded now is added. False when stopped before the end.
 */
export async function recoverAllInterrupted(
  deps: TransferDeps,
  instrumentOf: (id: number) => Instrument | undefined,
  stopped: () => boolean,
  /** The --once run's ends by file (engine.ts RunSummary.ends), or null outside one. */
  runEnds: () => Map<number, TransferStatus> | null,
): Promise<boolean> {
  const { db, log } = deps;
  const made = new Set<string>();
  try {
    for (const file of interruptedFiles(db)) {
      if (stopped()) return false;
      try {
        const ended = await recoverInterrupted(deps, file, instrumentOf(file.instrument_id), made);
        // A verified copy that had reached its name is recorded now: this run's, for --once.
        if (ended) runEnds()?.set(file.id, ended);
      } catch (error) {
        log.error({ err: error, file: file.source_path }, 'harvest: recovery failed');
      }
    }
  } finally {
    await takeBackMade(made);
  }
  return true;
}

/** `id` when a storage location still has it (none is deleted on a station today), or null. */
function locationStill(db: Db, id: number | null): number | null {
  if (id === null) return null;
  const found = cachedStatement(db, 'SELECT 1 FROM storage_locations WHERE id = ?').get(id);
  return found ? id : null;
}

/** The local storage location's folder that holds `path` (the deepest), or null. */
function storageFolderOf(db: Db, path: string): string | null {
  const bases = cachedStatement(db, `SELECT base_path FROM storage_locations WHERE type = 'local'`)
    .pluck()
    .all() as string[];
  let found: string | null = null;
  for (const base of bases) {
    // Compared as the platform compares paths (separators, and letter case on Windows).
    const inside = storageFolderIn(base, path) !== null;
    if (inside && (found === null || base.length > found.length)) found = base;
  }
  return found;
}
