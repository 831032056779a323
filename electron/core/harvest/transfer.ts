/**
 * One transfer attempt of one file record, from the pre-transfer hooks to the stored outcome
 * (a local verified copy here; into a `server` storage location, an upload: upload.ts):
 * completed (a verified copy at its final name), skipped (the same content is already there,
 * or a hook said so) or failed (with the reason; retried later). A source that changed since
 * it was found stable goes back to the stability check instead.
 */
import { lstat, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { arkBlade, MAX_PROTECTED_LENGTH } from '../../../shared/ark.js';
import {
  FALLBACK_WORD,
  checkDestination,
  renderTemplate,
} from '../../../shared/harvest/template.js';
import type { Db } from '../db/open.js';
import { cachedStatement } from '../db/statements.js';
import { errorCode } from '../util/errors.js';
import type { Logger } from '../util/log.js';
import {
  hooksFor,
  storageLocationByName,
  type Hook,
  type Instrument,
  type StorageLocation,
} from './config.js';
import type { CopyPool } from './copyPool.js';
import { storedUsageContext } from './usageContext.js';
import { inFolders, storageFolderIn } from './storageGuard.js';
import { BATCH_DURABILITY_BELOW, fsyncPath } from './durable.js';
import { decidePreTransfer, preTransferHooks, runPostTransferHooks } from './hooks.js';
import { letGoFolder, NONE_MADE, prepareHeldFolder } from './folderHolds.js';
import {
  exists,
  freeOrSameName,
  inFolder,
  type MountMemory,
  partialPathFor,
  placeWithoutClobber,
  forgetFolder,
  removePartial,
  removeQuietly,
  syncFolder,
} from './place.js';
import { beginAttempt, clearAttempt, markVerified } from './attemptMarkers.js';
import {
  arkConfig,
  finishTransfer,
  markGone,
  type FileRow,
  type TransferOutcome,
} from './records.js';

export interface TransferDeps {
  db: Db;
  pool: CopyPool;
  log: Logger;
  now(): string;
  /** When a file that has now failed `attempts` times is tried again; null = not by itself. */
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
}

/**
 * Why a copy may not go to `rendered` (relative to the storage location's base): it would lie
 * in a watched folder, or null.
 */
export function intoWatchedFolder(
  deps: Pick<TransferDeps, 'watchedIn'>,
  base: string,
  rendered: string,
): string | null {
  const watched = deps.watchedIn?.(base).find((folder) => inFolders([folder], rendered));
  if (watched === undefined) return null;
  return (
    `the destination ${join(base, ...rendered.split('/'))} lies in the watched folder ` +
    `${join(base, ...watched.split('/'))}: the harvest would take its copy again; change the ` +
    'destination template or the storage location'
  );
}

/** finished: an outcome is stored. requeue: check stability again. gone: the source vanished. */
export type TransferEnd = 'finished' | 'requeue' | 'gone';

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

/**
 * The template's usage fields of a file: from the usage it was made during, held here or (a
 * file of an instrument's history made on another station) as the server described it.
 */
function usageFields(
  db: Db,
  file: Pick<FileRow, 'usage_event_id' | 'usage_elsewhere'>,
): Record<'user' | 'project' | 'usage_event', string> {
  const row =
    file.usage_event_id !== null
      ? (cachedStatement(
          db,
          `SELECT u.username, p.name AS project, e.uuid FROM usage_events e
             JOIN users u ON u.id = e.user_id JOIN projects p ON p.id = e.project_id
             WHERE e.id = ?`,
        ).get(file.usage_event_id) as
          { username: string; project: string; uuid: string } | undefined)
      : elsewhereFields(file.usage_elsewhere);
  return row
    ? { user: row.username, project: row.project, usage_event: row.uuid }
    : { user: FALLBACK_WORD, project: FALLBACK_WORD, usage_event: FALLBACK_WORD };
}

function elsewhereFields(
  json: string | null,
): { username: string; project: string; uuid: string } | undefined {
  const context = storedUsageContext(json);
  return context === null
    ? undefined
    : { username: context.user.username, project: context.project.name, uuid: context.usage_event };
}

/** A failed attempt as recorded: nothing verified; tried again with backoff unless `retry` is false. */
export function failedOutcome(
  deps: Pick<TransferDeps, 'now' | 'retryAt'>,
  file: FileRow,
  error: string,
  destination: string | null,
  retry = true,
): Omit<TransferOutcome, 'startedAt' | 'storageLocationId'> {
  return {
    status: 'failed',
    destinationPath: destination,
    bytes: 0,
    destChecksum: null,
    checksumVerified: false,
    completedAt: deps.now(),
    error,
    retryAt: retry ? deps.retryAt(file.attempts + 1) : null,
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
): Promise<Omit<TransferOutcome, 'startedAt' | 'storageLocationId'>> {
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
 * (engine.runTransfer).
 */
export async function dropPartial(
  db: Db,
  fileId: number,
  place: { base: string; partial: string | null; mounts?: MountMemory },
  removed: boolean | null = null,
): Promise<void> {
  if (place.partial === null) return;
  try {
    if (removed === null) await removePartial(place.partial, place.base, place.mounts);
    if (removed !== false) clearAttempt(db, fileId);
  } catch {
    // Could not delete it, or cannot tell (the share is gone): as removed = false.
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

/** The destination, relative to the storage location, or why there is none. */
export function renderDestination(
  db: Db,
  template: string,
  instrument: Instrument,
  file: FileRow,
): { ok: true; path: string } | { ok: false; reason: string } {
  // Dates are the station's local calendar day of the first sighting.
  const seen = new Date(file.first_discovered_at);
  const pad = (n: number): string => String(n).padStart(2, '0');
  let blade = '';
  if (template.includes('{ark_blade}')) {
    // The station's shoulder is read only for the ARKs whose blade needs it (arkBlade).
    const found =
      arkBlade(file.persistent_id) ?? arkBlade(file.persistent_id, arkConfig(db).shoulder);
    if (found === null) {
      return {
        ok: false,
        reason:
          `{ark_blade}: the blade of ${file.persistent_id} cannot be told from its shoulder ` +
          `(NAAN/shoulder+blade is ${MAX_PROTECTED_LENGTH} characters long and does not start ` +
          `with the station's shoulder)`,
      };
    }
    blade = found;
  }
  const rendered = renderTemplate(template, {
    instrument: instrument.name,
    yyyy: String(seen.getFullYear()),
    mm: pad(seen.getMonth() + 1),
    dd: pad(seen.getDate()),
    relative_path: file.relative_path,
    filename: file.filename,
    ark_blade: blade,
    ...usageFields(db, file),
  });
  const checked = checkDestination(rendered);
  return checked.ok
    ? checked
    : { ok: false, reason: `destination ${JSON.stringify(rendered)} ${checked.reason}` };
}

export async function transferFile(
  deps: TransferDeps,
  file: FileRow,
  instrument: Instrument,
): Promise<TransferEnd> {
  const { db } = deps;
  const startedAt = deps.now();
  let location: StorageLocation | null = null;
  let destination: string | null = null;
  const store = async (
    outcome: Omit<TransferOutcome, 'startedAt' | 'storageLocationId'>,
  ): Promise<TransferEnd> => {
    await deps.record(file.id, {
      startedAt,
      storageLocationId: location?.id ?? null,
      ...outcome,
    });
    return 'finished';
  };
  const fail = (error: string, retry = true): Promise<TransferEnd> =>
    store(failedOutcome(deps, file, error, destination, retry));

  // The source: still there, still what was found stable?
  try {
    const now = await stat(file.source_path);
    if (now.size !== file.size || now.mtimeMs !== file.mtime_ms) return 'requeue';
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
      return await fail(`cannot read the source: ${describeError(error)}`);
    }
    if (await exists(file.watch_path).catch(() => false)) {
      markGone(db, file.id);
      return 'gone';
    }
    return await fail(`the watched folder ${file.watch_path} is not reachable (share gone?)`);
  }

  let decision;
  try {
    decision = decidePreTransfer(await preTransferHooks(db, instrument.id), file);
  } catch (error) {
    return await fail(`a pre-transfer hook failed: ${describeError(error)}`);
  }
  if (decision.skip) {
    return await store({
      status: 'skipped',
      destinationPath: null,
      bytes: 0,
      destChecksum: null,
      checksumVerified: false,
      completedAt: deps.now(),
      note: `skipped by the pre-transfer hook ${JSON.stringify(decision.skip.hook)}`,
    });
  }
  location = decision.storageLocation
    ? storageLocationByName(db, decision.storageLocation)
    : instrument.storage_location;
  if (!location) return await fail(`instrument ${instrument.name} has no storage location`, false);
  if (!location.enabled) return await fail(`storage location ${location.name} is disabled`, false);
  const rendered = renderDestination(
    db,
    decision.destinationTemplate ?? instrument.destination_template,
    instrument,
    file,
  );
  if (!rendered.ok) return await fail(rendered.reason, false);
  const redirected = decision.redirectedBy
    ? `redirected by the pre-transfer hook ${JSON.stringify(decision.redirectedBy)}`
    : '';
  if (location.type === 'server') {
    destination = rendered.path;
    return await uploadTransfer(deps, file, instrument, rendered.path, location, {
      store,
      fail,
      redirected,
    });
  }
  const looping = intoWatchedFolder(deps, location.base_path, rendered.path);
  if (looping !== null) return await fail(looping, false);
  destination = join(location.base_path, ...rendered.path.split('/'));
  const folder = dirname(destination);

  const postHooks = hooksFor(db, instrument.id, 'post_transfer');
  let partial: string | null = null;
  let placed = false;
  // The folders the check made, and whether a file is at a name in the folder as this attempt
  // ends: if not, those still empty are taken back (folderHolds.ts).
  let made = NONE_MADE;
  let filled = false;
  try {
    const checked = await prepareHeldFolder(location.base_path, folder, deps.mounts);
    if (checked.ok) made = checked.made;
    if (!checked.ok && checked.kind === 'unmounted') {
      return await fail(
        `storage location ${location.name}: ${location.base_path} held a mounted share or disk, ` +
          'and now holds none: it is not mounted; nothing was copied to the local disk under it',
      );
    }
    if (!checked.ok && checked.kind === 'base') {
      return await fail(
        checked.error === null
          ? `storage location ${location.name}: ${location.base_path} is not a folder`
          : `storage location ${location.name} (${location.base_path}) is not reachable: ${describeError(checked.error)}`,
      );
    }
    if (!checked.ok) {
      return await fail(
        `destination folder ${folder} leads outside the storage location ` +
          `(to ${checked.realFolder}, through a symbolic link)`,
        false,
      );
    }

    // The same content already there (a re-imaged station, a second copy of a share): skipped.
    // A link at the name is no copy (holdsSame).
    const existing = await lstat(destination).catch(() => null);
    if (existing?.isFile() && existing.size === file.size) {
      const [source, dest] = await Promise.all([
        deps.pool.hash(file.source_path),
        deps.pool.hash(destination),
      ]);
      const after = await stat(file.source_path);
      if (after.size !== file.size || after.mtimeMs !== file.mtime_ms) return 'requeue';
      if (source.hash === dest.hash) {
        filled = true;
        const skip = {
          file,
          post: postHooks,
          instrument,
          destination,
          hash: dest.hash,
          redirected,
        };
        return await store(await sameContentOutcome(deps, skip));
      }
    }

    partial = partialPathFor(destination);
    beginAttempt(db, file.id, partial);
    const attempt = partial;
    const batched = deps.settle !== undefined && file.size < BATCH_DURABILITY_BELOW;
    const result = await deps.pool.copy(
      {
        source: file.source_path,
        partial,
        size: file.size,
        mtimeMs: file.mtime_ms,
        durable: !batched,
      },
      (bytes) => deps.progress(file.id, bytes),
    );
    const dropped = { base: location.base_path, partial: attempt, mounts: deps.mounts };
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
      return await fail(
        `checksum mismatch: the source hashed ${result.sourceHash}, the copy ${result.destHash}; ` +
          'the copy was deleted',
      );
    }

    // Verified. Record that before the rename, so a crash in between can be finished. Names in
    // one folder are chosen one transfer at a time: where the storage has no hard links, the
    // check for a free name and the rename are two steps.
    const placement = await inFolder(folder, async () => {
      // The name itself first: the link refuses it if it is taken (no separate check).
      let name = destination;
      for (;;) {
        markVerified(db, file.id, result.destHash, name);
        if (await placeWithoutClobber(attempt, name)) return { name, same: false };
        // Taken (since the check before the copy, by another source of this run, say): the
        // same content there or at a numbered name is a skip, as it would have been then.
        const next = await freeOrSameName(destination, (path) =>
          holdsSame(deps, path, result.bytes, result.destHash),
        );
        if (next.same) return next;
        name = next.name;
      }
    });
    filled = true;
    if (placement.same) {
      await dropPartial(db, file.id, dropped);
      partial = null;
      const hash = result.destHash;
      return await store(
        await sameContentOutcome(deps, {
          file,
          post: postHooks,
          instrument,
          destination: placement.name,
          hash,
          redirected,
        }),
      );
    }
    const final = placement.name;
    // From here on the copy is at its name: whatever fails now is finished by recovery, which
    // the markers left in place lead to, never recorded as a failed copy.
    partial = null;
    placed = true;
    if (batched) await deps.settle!(final);
    else await syncFolder(dirname(final));
    const completedAt = deps.now();
    const metadata = await runPostTransferHooks(postHooks, {
      db,
      file,
      sourcePath: file.source_path,
      destinationPath: final,
      instrument: instrument.name,
    });
    return await store({
      status: 'completed',
      destinationPath: final,
      bytes: result.bytes,
      destChecksum: result.destHash,
      checksumVerified: true,
      completedAt,
      sourceHash: result.sourceHash,
      metadata,
      note: completedNote(final, destination, redirected),
    });
  } catch (error) {
    if (placed) throw error;
    const place = { base: location.base_path, destination, partial, mounts: deps.mounts };
    if (await abandonAttempt(db, file.id, place, error)) return 'requeue';
    return await fail(describeError(error));
  } finally {
    const takingBack = letGoFolder(folder, made, filled);
    if (takingBack) await takingBack;
  }
}

type Store = (
  outcome: Omit<TransferOutcome, 'startedAt' | 'storageLocationId'>,
) => Promise<TransferEnd>;

/**
 * A `server` storage location: the upload (upload.ts) instead of the local copy, recorded the
 * same way. Nothing is marked on this side while it runs: the server keeps the partial upload,
 * and a later attempt resumes it (or gets the finished answer again).
 */
async function uploadTransfer(
  deps: TransferDeps,
  file: FileRow,
  instrument: Instrument,
  relative: string,
  location: StorageLocation,
  end: {
    store: Store;
    fail: (error: string, retry?: boolean) => Promise<TransferEnd>;
    redirected: string;
  },
): Promise<TransferEnd> {
  // Loaded on the first upload: its protocol's schemas are most of what a harvest that only
  // copies locally would load otherwise.
  const { uploadVerified } = await import('./upload.js');
  const sent = await uploadVerified(
    {
      db: deps.db,
      log: deps.log,
      hash: (path) => deps.pool.hash(path),
      progress: (bytes) => deps.progress(file.id, bytes),
    },
    { file, location, destination: relative },
  );
  if (sent.outcome === 'source_changed') {
    deps.log.info(
      { file: file.source_path, detail: sent.detail },
      'harvest: source changed, re-queued',
    );
    return 'requeue';
  }
  if (sent.outcome === 'failed') return end.fail(sent.reason, sent.retry);
  const { state } = sent;
  // The hooks read the source: the server's copy is out of reach, and holds the same bytes.
  const completedAt = deps.now();
  const metadata = await runPostTransferHooks(hooksFor(deps.db, instrument.id, 'post_transfer'), {
    db: deps.db,
    file,
    sourcePath: file.source_path,
    destinationPath: file.source_path,
    instrument: instrument.name,
  });
  return end.store({
    status: state.status === 'skipped' ? 'skipped' : 'completed',
    destinationPath: state.server_path,
    bytes: state.status === 'skipped' ? 0 : file.size,
    destChecksum: state.dest_checksum,
    checksumVerified: true,
    completedAt,
    sourceHash: sent.sourceHash,
    metadata,
    note: [state.note, end.redirected].filter(Boolean).join('; '),
  });
}

/**
 * After a crash or kill: a copy that was under way is thrown away (its file is tried again);
 * a verified copy that had reached its final name is recorded as completed, once.
 */
/**
 * Whether what is at pending_destination is the link this station made: the partial is gone
 * (linked, then removed) or is the same file. A name someone else took between the check and
 * the link is never ours, and never deleted.
 */
async function placedByUs(file: FileRow): Promise<boolean> {
  if (!file.pending_destination) return false;
  const final = await stat(file.pending_destination).catch(() => null);
  if (!final) return false;
  if (!file.partial_path) return true;
  let partial;
  try {
    partial = await stat(file.partial_path);
  } catch (error) {
    // Only a partial that is surely gone counts as linked and removed.
    return (error as NodeJS.ErrnoException).code === 'ENOENT';
  }
  return partial.ino === final.ino && partial.dev === final.dev;
}

export async function recoverInterrupted(
  deps: TransferDeps,
  file: FileRow,
  instrument: Instrument | undefined,
): Promise<void> {
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
      await fsyncPath(file.pending_destination);
      await syncFolder(dirname(file.pending_destination));
      await removeQuietly(file.partial_path);
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
      finishTransfer(db, file.id, {
        status: 'completed',
        storageLocationId: instrument?.storage_location?.id ?? null,
        destinationPath: file.pending_destination,
        bytes: found.bytes,
        destChecksum: found.hash,
        checksumVerified: true,
        startedAt: finishedAt,
        completedAt: finishedAt,
        sourceHash: file.verified_hash,
        metadata,
        note: 'finished after a restart: the verified copy had reached its name',
      });
      return;
    }
  }
  const base = file.partial_path === null ? null : storageFolderOf(db, file.partial_path);
  if (base === null) await removeQuietly(file.partial_path);
  else await removePartial(file.partial_path, base, deps.mounts);
  clearAttempt(db, file.id);
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
