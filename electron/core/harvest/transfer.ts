/**
 * One transfer attempt of one file record, from the pre-transfer hooks to the stored outcome
 * (a local verified copy: localCopy.ts; into a `server` storage location, an upload: upload.ts):
 * completed (a verified copy at its final name), skipped (the same content is already there,
 * or a hook said so) or failed (with the reason; retried later). A source that changed since
 * it was found stable goes back to the stability check instead.
 */
import { stat } from 'node:fs/promises';
import {
  describeError,
  failedOutcome,
  redirectNote,
  type Ending,
  type Target,
  type TransferDeps,
  type TransferEnd,
} from './attempt.js';
import { hooksFor, storageLocationByName, type Instrument } from './config.js';
import { renderDestination } from './destination.js';
import { decidePreTransfer, preTransferHooks, runPostTransferHooks } from './hooks.js';
import { copyLocally } from './localCopy.js';
import { exists } from './place.js';
import { markGone, sameBytes, type FileRow } from './records.js';

export async function transferFile(
  deps: TransferDeps,
  file: FileRow,
  instrument: Instrument,
): Promise<TransferEnd> {
  const end = attemptEnding(deps, file);
  const changed = await checkSource(deps, file, end);
  if (changed !== null) return changed;
  const target = await decideDestination(deps, file, instrument, end);
  if (typeof target === 'string') return target;
  if (target.location.type === 'server') {
    return await uploadTransfer(deps, file, instrument, target, end);
  }
  return await copyLocally(deps, file, instrument, target, end);
}

/** The Ending of an attempt that starts now. */
function attemptEnding(deps: TransferDeps, file: FileRow): Ending {
  const startedAt = deps.now();
  const end: Ending = {
    location: null,
    destination: null,
    store: async (outcome) => {
      await deps.record(file.id, {
        startedAt,
        storageLocationId: end.location?.id ?? null,
        ...outcome,
      });
      return 'finished';
    },
    fail: (error, retry = true) =>
      end.store(failedOutcome(deps, file, error, end.destination, retry)),
  };
  return end;
}

/**
 * The source: still there, still what was found stable? Null if so; otherwise how the attempt
 * ends (re-queued, gone, or failed when it cannot be told).
 */
async function checkSource(
  deps: TransferDeps,
  file: FileRow,
  end: Ending,
): Promise<TransferEnd | null> {
  try {
    const now = await stat(file.source_path);
    if (!sameBytes(file, now)) return 'requeue';
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
      return await end.fail(`cannot read the source: ${describeError(error)}`);
    }
    if (await exists(file.watch_path).catch(() => false)) {
      markGone(deps.db, file.id);
      return 'gone';
    }
    return await end.fail(`the watched folder ${file.watch_path} is not reachable (share gone?)`);
  }
  return null;
}

/**
 * Where the copy goes: the pre-transfer hooks' decision over the instrument's storage location
 * and destination template. Or how the attempt ends: skipped by a hook, or failed (a hook
 * failed, no usable storage location, no destination).
 */
async function decideDestination(
  deps: TransferDeps,
  file: FileRow,
  instrument: Instrument,
  end: Ending,
): Promise<Target | TransferEnd> {
  const { db } = deps;
  let decision;
  try {
    decision = decidePreTransfer(await preTransferHooks(db, instrument.id), file);
  } catch (error) {
    return await end.fail(`a pre-transfer hook failed: ${describeError(error)}`);
  }
  if (decision.skip) {
    return await end.store({
      status: 'skipped',
      destinationPath: null,
      bytes: 0,
      destChecksum: null,
      checksumVerified: false,
      completedAt: deps.now(),
      note: `skipped by the pre-transfer hook ${JSON.stringify(decision.skip.hook)}`,
    });
  }
  const location = decision.storageLocation
    ? storageLocationByName(db, decision.storageLocation)
    : instrument.storage_location;
  end.location = location;
  if (!location && decision.storageLocation) {
    // Renamed or removed since the hook was written: the hook is what to fix.
    return await end.fail(
      `the pre-transfer hook ${JSON.stringify(decision.storageLocationBy)} sends this file to the ` +
        `storage location ${JSON.stringify(decision.storageLocation)}, which does not exist`,
      false,
    );
  }
  if (!location) {
    return await end.fail(`instrument ${instrument.name} has no storage location`, false);
  }
  if (!location.enabled) {
    return await end.fail(`storage location ${location.name} is disabled`, false);
  }
  const rendered = renderDestination(
    db,
    decision.destinationTemplate ?? instrument.destination_template,
    instrument,
    file,
  );
  if (!rendered.ok) return await end.fail(rendered.reason, false);
  return { location, relative: rendered.path, redirected: redirectNote(decision.redirectedBy) };
}

/**
 * A `server` storage location: the upload (upload.ts) instead of the local copy, recorded the
 * same way. Nothing is marked on this side while it runs: the server keeps the partial upload,
 * and a later attempt resumes it (or gets the finished answer again).
 */
async function uploadTransfer(
  deps: TransferDeps,
  file: FileRow,
  instrument: Instrument,
  target: Target,
  end: Ending,
): Promise<TransferEnd> {
  end.destination = target.relative;
  // Loaded on the first upload: its protocol's schemas are most of what a harvest that only
  // copies locally would load otherwise.
  const { uploadVerified } = await import('./upload.js');
  const sent = await uploadVerified(
    {
      db: deps.db,
      log: deps.log,
      hash: (path, started) => deps.pool.hash(path, started),
      progress: (bytes) => deps.progress(file.id, bytes),
      ...(deps.stopSignal ? { signal: deps.stopSignal } : {}),
    },
    { file, location: target.location, destination: target.relative },
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
    note: [state.note, target.redirected].filter(Boolean).join('; '),
  });
}
