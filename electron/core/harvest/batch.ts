/**
 * Small files transferred in batches: the same steps and records as transfer.ts transferFile,
 * with the per-file costs of the thread that runs the engine shared by the batch. Measured on
 * 3,000 files of 100 KiB (BENCHMARKS.md), that thread, not the disk, was the limit: about 2 ms
 * per file over a dozen steps, while the copy workers waited.
 *
 * One batch (up to BATCH_MAX_FILES files below BATCH_DURABILITY_BELOW, BATCH_MAX_BYTES in all):
 * 1. decide and render every destination (the instrument's hooks looked up once), check each
 *    destination folder once;
 * 2. record every partial's name in one commit (records.beginAttempts), then hand the batch to
 *    a copy worker in one message: each file is copied while hashed, re-read and hashed again
 *    (copyBatch.ts);
 * 3. record every verified copy's hash and final name in one commit (records.markVerifiedMany),
 *    then place them, one worker message per destination folder;
 * 4. make them durable together (durable.ts), run the post-transfer hooks, and store each
 *    outcome (the engine's group commit).
 * A batch takes one copy slot (harvest.concurrency) as one big file does.
 *
 * Crash safety is localCopy.ts's, batch by batch: a partial's name is committed before the
 * worker may create it, and a copy's verified marker before the worker may link it to its
 * final name; recovery (recovery.ts recoverInterrupted) finishes or removes what a crash left.
 * A file the batch cannot take as usual (a skip hook, a server location, a destination that
 * does not render, a folder that fails its check, a missing source, a file of the same size
 * at the destination) goes through transferFile on its own.
 */
import { dirname, join } from 'node:path';
import { failpoint, injected } from '../util/failpoint.js';
import { hooksFor, storageLocationByName, type Hook, type Instrument } from './config.js';
import { READ_AHEAD, type PlaceResult, type SmallCopyResult } from './copyBatch.js';
import { BATCH_DURABILITY_BELOW, fsyncPath, onLocalDisk } from './durable.js';
import { decidePreTransfer, preTransferHooks, runPostTransferHooks } from './hooks.js';
import { BatchFolders } from './folderHolds.js';
import {
  freeOrSameName,
  inFolder,
  partialPathFor,
  placeWithoutClobber,
  removeQuietly,
  syncPlacedFolder,
} from './place.js';
import {
  beginAttempts,
  clearAttempt,
  markVerified,
  markVerifiedMany,
  unmarkVerified,
} from './attemptMarkers.js';
import { type FileRow, type TransferOutcome } from './records.js';
import {
  abandonAttempt,
  dropPartial,
  completedNote,
  describeError,
  failedOutcome,
  holdsSame,
  redirectNote,
  sameContentOutcome,
  type TransferDeps,
  type TransferEnd,
} from './attempt.js';
import { intoWatchedFolder, renderDestination } from './destination.js';
import { recoverInterrupted } from './recovery.js';
import { transferFile } from './transfer.js';

/**
 * At most this many files, and this many bytes, per batch (one worker message). Each batch
 * costs the engine's thread a few commits, worker messages and a flush of its own: on 10,000
 * files of 100 KiB (four runs each, caches dropped), batches of up to 32 files took 6.7 s,
 * of up to 80 files 5.8 s and of up to 200 files 5.5 s. The engine splits a short queue
 * between the copy workers (transferQueue.ts pump), so a large bound does not leave one idle.
 */
export const BATCH_MAX_FILES = 128;
export const BATCH_MAX_BYTES = 16 * 1024 * 1024;
/** A short queue is split between the copy workers, but not into batches smaller than this. */
export const BATCH_MIN_SPLIT = 16;

/**
 * How many files the next batches take from a queue of `queued` files: a queue shorter than a
 * full batch per copy worker is split between them, so that a few hundred files do not go to
 * one worker while the other waits.
 */
export function filesPerBatch(queued: number, workers: number): number {
  const share = Math.ceil(queued / Math.max(1, workers));
  return Math.min(BATCH_MAX_FILES, Math.max(BATCH_MIN_SPLIT, share));
}

/**
 * A file that may go in a batch: small, bound for a local storage location (an upload goes on
 * its own), with no earlier attempt's markers to settle first.
 */
export function batchable(file: FileRow, instrument: Instrument): boolean {
  return (
    file.size < BATCH_DURABILITY_BELOW &&
    file.partial_path === null &&
    instrument.storage_location?.type === 'local'
  );
}

export interface BatchItem {
  file: FileRow;
  instrument: Instrument;
}

/** What became of each file of a batch; status when the batch stored the outcome itself. */
export type BatchEnd =
  | { end: TransferEnd; status?: TransferOutcome['status'] }
  /** Threw where transferFile would have thrown (the engine logs it). */
  | { end: 'crashed'; error: unknown };

interface Planned {
  index: number;
  file: FileRow;
  instrument: Instrument;
  locationId: number;
  base: string;
  destination: string;
  partial: string;
  redirected: string;
  post: Hook[];
}

interface Verified extends Planned {
  sourceHash: string;
  destHash: string;
  bytes: number;
}

function copyError(message: string, code: string | null): Error {
  return Object.assign(new Error(message), { code });
}

export async function transferBatch(deps: TransferDeps, items: BatchItem[]): Promise<BatchEnd[]> {
  // Each destination folder is held from its check to the end of the batch, however it ends;
  // then what its check made is taken back, once empty, unless a copy of the batch is there.
  const folders = new BatchFolders();
  try {
    return await transferHeld(deps, items, folders);
  } finally {
    await folders.letGo();
  }
}

async function transferHeld(
  deps: TransferDeps,
  items: BatchItem[],
  folders: BatchFolders,
): Promise<BatchEnd[]> {
  const { db } = deps;
  const startedAt = deps.now();
  const ends: BatchEnd[] = [];
  const work: Promise<void>[] = [];
  /** Runs one file's remaining steps; a throw becomes its 'crashed' end. */
  const step = (index: number, run: () => Promise<BatchEnd>): void => {
    work.push(
      run().then(
        (end) => void (ends[index] = end),
        (error: unknown) => void (ends[index] = { end: 'crashed', error }),
      ),
    );
  };
  // Files on their own go one after the other: the batch holds one transfer slot.
  let aloneChain: Promise<void> = Promise.resolve();
  const alone = (index: number): void => {
    aloneChain = aloneChain.then(() =>
      transferFile(deps, items[index].file, items[index].instrument).then(
        (end) => void (ends[index] = { end }),
        (error: unknown) => void (ends[index] = { end: 'crashed', error }),
      ),
    );
  };
  const store = async (
    p: Planned,
    outcome: Omit<TransferOutcome, 'startedAt' | 'storageLocationId'>,
  ): Promise<BatchEnd> => {
    await deps.record(p.file.id, { startedAt, storageLocationId: p.locationId, ...outcome });
    return { end: 'finished', status: outcome.status };
  };
  /** Where a copy's partial is, for dropPartial. */
  const place = (p: Planned) => ({ ...p, mounts: deps.mounts });
  const fail = (p: Planned, error: string, destination: string | null): Promise<BatchEnd> =>
    store(p, failedOutcome(deps, p.file, error, destination));
  /** As transferFile's catch: the copy is dropped, and the failure recorded (or re-queued). */
  const dropped = async (
    p: Planned,
    error: unknown,
    removed: boolean | null,
  ): Promise<BatchEnd> => {
    if (await abandonAttempt(db, p.file.id, place(p), error, removed)) return { end: 'requeue' };
    return fail(p, describeError(error), p.destination);
  };

  // 1. Destinations, with each instrument's hooks and each storage location looked up once.
  const hooks = new Map<number, { pre: Hook[]; post: Hook[] } | null>();
  const locations = new Map<string, ReturnType<typeof storageLocationByName>>();
  const planned: Omit<Planned, 'partial'>[] = [];
  for (const { instrument } of items) {
    if (hooks.has(instrument.id)) continue;
    try {
      hooks.set(instrument.id, {
        pre: await preTransferHooks(db, instrument.id),
        post: hooksFor(db, instrument.id, 'post_transfer'),
      });
    } catch {
      // Each of its files goes on its own (alone), and transferFile records why.
      hooks.set(instrument.id, null);
    }
  }
  items.forEach(({ file, instrument }, index) => {
    const found = hooks.get(instrument.id);
    if (!found) return alone(index);
    let decision;
    try {
      decision = decidePreTransfer(found.pre, file);
    } catch {
      return alone(index);
    }
    if (decision.skip) return alone(index);
    let location = instrument.storage_location;
    const name = decision.storageLocation;
    if (name !== null) {
      if (!locations.has(name)) locations.set(name, storageLocationByName(db, name));
      location = locations.get(name) ?? null;
    }
    if (!location?.enabled || location.type !== 'local') return alone(index);
    const rendered = renderDestination(
      db,
      decision.destinationTemplate ?? instrument.destination_template,
      instrument,
      file,
    );
    // transferFile records why such a file fails.
    if (!rendered.ok || intoWatchedFolder(deps, location.base_path, rendered.path) !== null) {
      return alone(index);
    }
    planned.push({
      index,
      file,
      instrument,
      locationId: location.id,
      base: location.base_path,
      destination: join(location.base_path, ...rendered.path.split('/')),
      redirected: redirectNote(decision.redirectedBy),
      post: found.post,
    });
  });

  // All checks under way at once; each file then waits for its folder's.
  for (const p of planned) void folders.check(p.base, dirname(p.destination), deps.mounts);
  const copying: Planned[] = [];
  for (const p of planned) {
    // A folder that fails its check: transferFile checks it again and records why.
    if (!(await folders.check(p.base, dirname(p.destination), deps.mounts))) alone(p.index);
    else copying.push({ ...p, partial: partialPathFor(p.destination) });
  }

  // 2. The partials' names, then the copies.
  let copied: SmallCopyResult[] | null = null;
  if (copying.length) {
    beginAttempts(
      db,
      copying.map((p) => ({
        id: p.file.id,
        partialPath: p.partial,
        made: folders.madeFor(p.base, dirname(p.destination)),
      })),
    );
    try {
      // Tests: the attempts' markers stand a while before their copies start (a share slow to
      // answer), so a test can act while a batch holds them.
      if (injected('harvest.slow-batch')) await new Promise((resolve) => setTimeout(resolve, 3000));
      // Sources are read ahead only from local disks: the reads wait in libuv's pool, which
      // the whole process shares, and a share that hangs would hold its threads.
      const watched = [...new Set(copying.map((p) => p.file.watch_path))];
      const local = (await Promise.all(watched.map((w) => onLocalDisk(w)))).every(Boolean);
      copied = await deps.pool.copySmall(
        copying.map((p) => ({
          source: p.file.source_path,
          partial: p.partial,
          destination: p.destination,
          size: p.file.size,
          mtimeMs: p.file.mtime_ms,
        })),
        local ? READ_AHEAD : 0,
      );
    } catch (error) {
      // The worker died or the pool closed: none of the batch was placed.
      for (const p of copying) step(p.index, () => dropped(p, error, null));
    }
  }

  const verified: Verified[] = [];
  copying.forEach((p, i) => {
    const result = copied?.[i];
    if (!result) return;
    if (result.outcome === 'copied') {
      deps.progress(p.file.id, result.bytes);
      verified.push({ ...p, ...result });
    } else if (result.outcome === 'missing' || result.outcome === 'exists') {
      // Nothing was created: gone, or maybe the same content already there. transferFile
      // tells which, as for a file on its own.
      clearAttempt(db, p.file.id);
      alone(p.index);
    } else if (result.outcome === 'source_changed') {
      deps.log.info(
        { file: p.file.source_path, detail: result.detail },
        'harvest: source changed, re-queued',
      );
      step(p.index, async () => {
        await dropPartial(db, p.file.id, place(p), result.removed);
        return { end: 'requeue' };
      });
    } else if (result.outcome === 'mismatch') {
      step(p.index, async () => {
        await dropPartial(db, p.file.id, place(p), result.removed);
        return fail(
          p,
          `checksum mismatch: the source hashed ${result.sourceHash}, the copy ${result.destHash}; ` +
            'the copy was deleted',
          p.destination,
        );
      });
    } else {
      const error = copyError(result.message, result.code);
      step(p.index, () => dropped(p, error, result.removed));
    }
  });

  // 3. Verified: recorded so, then placed, folder by folder.
  markVerifiedMany(
    db,
    verified.map((v) => ({
      id: v.file.id,
      hash: v.destHash,
      destination: v.destination,
      locationId: v.locationId,
      // At the name it was given: the note of a completed copy is the redirect's alone.
      note: v.redirected,
    })),
  );
  const byFolder = new Map<string, Verified[]>();
  for (const v of verified) {
    const folder = dirname(v.destination);
    byFolder.set(folder, [...(byFolder.get(folder) ?? []), v]);
  }
  const placed: { v: Verified; final: string }[] = [];
  await Promise.all(
    [...byFolder].map(([folder, group]) =>
      inFolder(folder, async () => {
        let results: PlaceResult[];
        try {
          results = await deps.pool.place(
            group.map((v) => ({ partial: v.partial, destination: v.destination })),
          );
        } catch (error) {
          // The worker died while placing: which copies reached their names is unknown;
          // recovery finds out from the markers, as after a crash. Some may be there.
          folders.fill(folder);
          for (const v of group) step(v.index, () => recovered(deps, v, error));
          return;
        }
        for (const [i, result] of results.entries()) {
          const v = group[i];
          if (result.outcome === 'placed') {
            if (result.partialLeft) {
              deps.log.warn({ partial: v.partial }, 'harvest: a placed copy left its partial name');
            }
            placed.push({ v, final: v.destination });
            folders.fill(folder);
            continue;
          }
          if (result.outcome === 'error') {
            const error = copyError(result.message, result.code);
            step(v.index, () => dropped(v, error, null));
            continue;
          }
          // The name is taken: the same content there or at a numbered name is a skip;
          // otherwise the next free name, chosen and marked one at a time, as transferFile does.
          try {
            for (;;) {
              const next = await freeOrSameName(v.destination, (path) =>
                holdsSame(deps, path, v.bytes, v.destHash),
              );
              if (next.same) {
                folders.fill(folder);
                unmarkVerified(db, v.file.id);
                await removeQuietly(v.partial);
                failpoint('harvest.unplaced-removed');
                clearAttempt(db, v.file.id);
                step(v.index, async () => {
                  const skip = { ...v, destination: next.name, hash: v.destHash };
                  return store(v, await sameContentOutcome(deps, skip));
                });
                break;
              }
              markVerified(db, v.file.id, v.destHash, next.name, {
                locationId: v.locationId,
                note: completedNote(next.name, v.destination, v.redirected),
                waitForDisk: true,
              });
              if (await placeWithoutClobber(v.partial, next.name, deps.log)) {
                placed.push({ v, final: next.name });
                folders.fill(folder);
                break;
              }
            }
          } catch (error) {
            step(v.index, () => dropped(v, error, null));
          }
        }
      }),
    ),
  );
  failpoint('harvest.batch.placed');

  // 4. From here on each copy is at its name: whatever fails now is finished by recovery,
  // which the markers left in place lead to, never recorded as a failed copy.
  const settle =
    deps.settleAll ??
    ((paths: string[]) =>
      Promise.allSettled(
        paths.map(async (path) => {
          await fsyncPath(path);
          await syncPlacedFolder(dirname(path));
        }),
      ));
  const durable = placed.length ? await settle(placed.map((p) => p.final)) : [];
  placed.forEach(({ v, final }, i) => {
    const flushed = durable[i];
    if (flushed.status === 'rejected') {
      ends[v.index] = { end: 'crashed', error: flushed.reason };
      return;
    }
    step(v.index, async () => {
      // The transfer ends here; the hooks after it only add to the file's metadata.
      const completedAt = deps.now();
      const metadata = await runPostTransferHooks(v.post, {
        db,
        file: v.file,
        sourcePath: v.file.source_path,
        destinationPath: final,
        instrument: v.instrument.name,
      });
      return store(v, {
        status: 'completed',
        destinationPath: final,
        bytes: v.bytes,
        destChecksum: v.destHash,
        checksumVerified: true,
        completedAt,
        sourceHash: v.sourceHash,
        metadata,
        note: completedNote(final, v.destination, v.redirected),
      });
    });
  });
  await Promise.all(work);
  await aloneChain;
  return ends;
}

/** After a worker died mid-placement: what the markers say, as recovery after a restart. */
async function recovered(deps: TransferDeps, v: Verified, error: unknown): Promise<BatchEnd> {
  deps.log.warn({ err: error, file: v.file.source_path }, 'harvest: placement interrupted');
  const ended = await recoverInterrupted(
    deps,
    {
      ...v.file,
      partial_path: v.partial,
      verified_hash: v.destHash,
      pending_destination: v.destination,
      pending_location_id: v.locationId,
      pending_note: v.redirected,
      // The batch takes back what its checks made itself, as it ends (BatchFolders).
      made_folders: null,
    },
    v.instrument,
  );
  // Finished by recovery (completed, or skipped), or cleaned up: then transferred again.
  return ended ? { end: 'finished', status: ended } : { end: 'requeue' };
}
