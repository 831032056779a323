/**
 * What the two ways of transferring files share (one at a time: transfer.ts; small ones in
 * batches: batch.ts): what an attempt needs, how its outcomes read, and how a copy dropped on
 * the way is cleaned up.
 */
import { lstat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import type { Db } from '../db/open.js';
import { errorCode } from '../util/errors.js';
import { failpoint } from '../util/failpoint.js';
import type { Logger } from '../util/log.js';
import type { Hook, Instrument, StorageLocation } from './config.js';
import type { CopyPool } from './copyPool.js';
import { runPostTransferHooks } from './hooks.js';
import { exists, forgetFolder, type MountMemory, removePartial } from './place.js';
import { clearAttempt, unmarkVerified } from './attemptMarkers.js';
import type { FileRow, TransferOutcome } from './records.js';

export interface TransferDeps {
  db: Db;
  pool: CopyPool;
  log: Logger;
  now(): string;
  /**
   * When a file that has now failed `attempts` times (since a Retry was last asked for) is
   * tried again; null = not by itself.
   */
  retryAt(attempts: number): string | null;
  progress(fileId: number, bytes: number): void;
  /** Stores an attempt's outcome (finishTransfer), possibly together with others. */
  record(fileId: number, outcome: TransferOutcome): Promise<void>;
  /**
   * Makes a placed small copy durable (data and folder entry) together with others
   * (durable.ts). Without it, each copy is flushed on its own.
   */
  settle?(path: string): Promise<void>;
  /** settle for a batch of small copies (batch.ts): one outcome per path, in order. */
  settleAll?: (paths: string[]) => Promise<PromiseSettledResult<void>[]>;
  /**
   * The watched folders inside a local storage location's base (as written), relative to it
   * and `/`-separated, found on disk by the engine: a copy rendered into one would be harvested
   * again, a folder deeper each time (watchedFolderOf).
   */
  watchedIn?(basePath: string): readonly string[];
  /** The storage folders seen as mount points (prepareFolder); none remembered without it. */
  mounts?: MountMemory;
  /**
   * Aborted when the harvest stops: an upload under way ends then (upload.ts), not after its
   * retries against a server that does not answer. None: it runs to its end.
   */
  stopSignal?: AbortSignal;
}

/** finished: an outcome is stored. requeue: check stability again. gone: the source vanished. */
export type TransferEnd = 'finished' | 'requeue' | 'gone';

/** An attempt's outcome as its steps give it: its start and storage location are added later. */
export type AttemptOutcome = Omit<TransferOutcome, 'startedAt' | 'storageLocationId'>;

/**
 * How an attempt stores its end. Its storage location and destination are recorded with the
 * outcome as far as they are known when it ends: the steps set them as they find them.
 */
export interface Ending {
  location: StorageLocation | null;
  destination: string | null;
  store(outcome: AttemptOutcome): Promise<TransferEnd>;
  fail(error: string, retry?: boolean): Promise<TransferEnd>;
}

/** Where a copy goes, as the pre-transfer hooks decided. */
export interface Target {
  location: StorageLocation;
  /** The destination, relative to the storage location's base. */
  relative: string;
  /** The note of a redirect by a pre-transfer hook, or ''. */
  redirected: string;
}

const ERRNO_WORDS: Record<string, string> = {
  ENOSPC: 'disk full (no space left on the storage location)',
  EDQUOT: 'disk quota exceeded on the storage location',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EROFS: 'the storage location is read-only',
  ENOENT: 'not found',
  ENOTDIR: 'not a folder (a file has its name)',
  ELOOP: 'a loop of symbolic links',
  ENAMETOOLONG: 'the name or the path is too long for the file system',
  EIO: 'input/output error (disk or share failing)',
  ENOTCONN: 'the share is not connected',
  ESTALE: 'the share is gone (stale handle)',
  EHOSTDOWN: 'the share is not reachable',
  EHOSTUNREACH: 'the share is not reachable',
  ETIMEDOUT: 'the share did not answer',
};

export function describeError(error: unknown): string {
  const code = errorCode(error);
  const message = (error as Error).message ?? String(error);
  const word = code === null ? undefined : ERRNO_WORDS[code];
  return word ? `${word}: ${message}` : message;
}

/** A failed attempt as recorded: nothing verified; tried again with backoff unless `retry` is false. */
export function failedOutcome(
  deps: Pick<TransferDeps, 'now' | 'retryAt'>,
  file: FileRow,
  error: string,
  destination: string | null,
  retry = true,
): AttemptOutcome {
  return {
    status: 'failed',
    destinationPath: destination,
    bytes: 0,
    destChecksum: null,
    checksumVerified: false,
    completedAt: deps.now(),
    error,
    // Counted from the last Retry asked for: that one failing again waits the first step.
    retryAt: retry ? deps.retryAt(Math.max(file.attempts - file.retried_at_attempts, 0) + 1) : null,
  };
}

/**
 * Whether `path` is a file holding exactly the content hashed `hash`: the destination already
 * has what a transfer would write there.
 */
export async function holdsSame(
  deps: TransferDeps,
  path: string,
  size: number,
  hash: string,
): Promise<boolean> {
  // Not followed: a link at the name (to a file outside the storage location, say) holds no
  // copy here, whatever the content it leads to.
  const there = await lstat(path).catch(() => null);
  return !!there?.isFile() && there.size === size && (await deps.pool.hash(path)).hash === hash;
}

/**
 * The outcome of a file whose destination already holds the same content: skipped, with what
 * the post-transfer hooks add (they describe the file at its destination as for a copy).
 */
export async function sameContentOutcome(
  deps: TransferDeps,
  skip: {
    file: FileRow;
    post: Hook[];
    instrument: Instrument;
    destination: string;
    hash: string;
    redirected: string;
  },
): Promise<AttemptOutcome> {
  // The transfer ends here; the hooks after it only add to the file's metadata.
  const completedAt = deps.now();
  const metadata = await runPostTransferHooks(skip.post, {
    db: deps.db,
    file: skip.file,
    sourcePath: skip.file.source_path,
    destinationPath: skip.destination,
    instrument: skip.instrument.name,
  });
  return {
    status: 'skipped',
    destinationPath: skip.destination,
    bytes: 0,
    destChecksum: skip.hash,
    checksumVerified: true,
    completedAt,
    sourceHash: skip.hash,
    metadata,
    note: ['the destination already holds the same content', skip.redirected]
      .filter(Boolean)
      .join('; '),
  };
}

/** How a redirect's note starts, for one hook ("hook ...") or several ("hooks ..."). */
const REDIRECTED_BY = 'redirected by the pre-transfer hook';

/**
 * The note of a copy pre-transfer hooks redirected, naming each that did (a later one may
 * change only the template, an earlier one the location): '' when none did.
 */
export function redirectNote(hooks: readonly string[]): string {
  if (hooks.length === 0) return '';
  return `${REDIRECTED_BY}${hooks.length > 1 ? 's' : ''} ${hooks.map((h) => JSON.stringify(h)).join(', ')}`;
}

/** The redirect's part of a completed copy's note (completedNote puts it last), or ''. */
export function redirectOf(note: string): string {
  const at = note.indexOf(REDIRECTED_BY);
  return at < 0 ? '' : note.slice(at);
}

/** The note of a completed copy: written under another name, redirected by a hook. */
export function completedNote(final: string, destination: string, redirected: string): string {
  const renamed =
    final === destination
      ? ''
      : `the destination held other content; this copy was written as ${basename(final)}`;
  return [renamed, redirected].filter(Boolean).join('; ');
}

/**
 * After an attempt's copy was dropped (failed, its source changed, a mismatch, the same content
 * found): its partial is removed and its recorded name cleared once the partial is surely
 * gone. `removed` says what the copy worker did with it: null, not removed, or not found where
 * it was (removed here; not found counts as gone only where the storage folder can be seen,
 * removePartial); true, removed (or never made); false, could not be removed. A partial not
 * surely gone keeps its name recorded, and the file's next attempt removes it first
 * (TransferQueue.runTransfer), so its outcome must be a failure (a failure keeps the markers):
 * true when the partial is surely gone.
 */
export async function dropPartial(
  db: Db,
  fileId: number,
  place: { base: string; partial: string | null; mounts?: MountMemory },
  removed: boolean | null = null,
): Promise<boolean> {
  if (place.partial === null) return true;
  try {
    unmarkVerified(db, fileId);
    if (removed === null) await removePartial(place.partial, place.base, place.mounts);
    // Crash test: the partial, never placed, is removed (where it could be), its name still
    // recorded.
    failpoint('harvest.unplaced-removed');
    if (removed === false) return false;
    clearAttempt(db, fileId);
    return true;
  } catch {
    // Could not delete it, or cannot tell (the share is gone): as removed = false.
    return false;
  }
}

/**
 * After a copy failed before it had its final name: the destination folder's check is
 * forgotten and the partial dropped (dropPartial). True when the failure was the destination
 * folder going away after it was checked (prepareFolder): the file is then re-queued (the
 * folder is made again), not failed.
 */
export async function abandonAttempt(
  db: Db,
  fileId: number,
  place: { base: string; destination: string; partial: string | null; mounts?: MountMemory },
  error: unknown,
  removed: boolean | null = null,
): Promise<boolean> {
  const folder = dirname(place.destination);
  forgetFolder(place.base, folder);
  await dropPartial(db, fileId, place, removed);
  return (
    (error as { code?: unknown }).code === 'ENOENT' && !(await exists(folder).catch(() => true))
  );
}
