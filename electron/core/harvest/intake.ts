/**
 * The intake: files found by a walk or the watcher become candidates (consider), those the
 * stability check finds stable are recorded and queued for their transfer (accept), and a file
 * recorded and done that comes back with its size but a new mtime is compared with its record
 * first (recheck).
 */
import { basename } from 'node:path';
import type { Db } from '../db/open.js';
import { nowIso } from '../util/ids.js';
import type { Logger } from '../util/log.js';
import type { Hook, Instrument, WatchFolder } from './config.js';
import { HASH_ALGORITHM } from './copy.js';
import type { CopyPool } from './copyPool.js';
import { relativeTo, type FolderFilter, type FoundFile } from './discover.js';
import { noteLateSidecar, sidecarHooks } from './lateSidecars.js';
import {
  arkConfig,
  keepRecords,
  knownSources,
  latestBySource,
  markGone,
  recordFile,
  requeueFile,
  sameBytes,
  type FileRow,
} from './records.js';
import { candidateKey, WAKE_GAP_MS, type Candidate, type StabilityChecks } from './stability.js';
import { storageFolderIn } from './storageGuard.js';
import type { TransferQueue } from './transferQueue.js';
import { usageInProgressOn, usageOnToolAt } from './usageContext.js';

/** What the intake asks of the engine. */
export interface IntakeHost {
  /** Whether the harvest stopped. */
  stopped(): boolean;
  /** Whether this instrument (this configuration of it) is harvested here now. */
  harvests(instrument: Instrument): boolean;
  /** The instruments harvested here now. */
  instruments(): readonly Instrument[];
  /** The copy workers, once the harvest started them; null before. */
  pool(): CopyPool | null;
  /** A watched folder's filter, with the storage folders and the data dir inside it left out. */
  filterOf(folder: WatchFolder): FolderFilter;
  /** Tells the UIs. */
  changed(): void;
  /** Whether the harvest is idle now. */
  checkIdle(): void;
  /** Records were noted that a sidecar recorded since may describe (lateSidecars.ts). */
  sidecarsNoted(): void;
}

/** `path` relative to `folder` (`/`-separated) when it lies below it, else null. */
function below(folder: string, path: string): string | null {
  const rel = storageFolderIn(folder, path);
  return rel === '' ? null : rel;
}

/** Recorded with the same size and mtime, and still there: not read again. */
function alreadyRecorded(
  record: { size: number; mtime_ms: number; state: string } | undefined,
  size: number,
  mtimeMs: number,
): boolean {
  return (
    record !== undefined &&
    record.state !== 'gone' &&
    record.size === size &&
    record.mtime_ms === mtimeMs
  );
}

/**
 * A record not harvested yet (waiting, or failed) whose source now holds other bytes, written
 * during another usage than the one it was first seen in.
 */
function replacedUnderAnotherUsage(record: FileRow, c: Candidate): boolean {
  return (
    (record.state === 'waiting' || record.state === 'failed') &&
    record.partial_path === null &&
    !sameBytes(record, c) &&
    c.usageEventId !== null &&
    c.usageEventId !== record.usage_event_id
  );
}

/** A record waiting for its transfer with the size and mtime the candidate has. */
function sameWaiting(record: FileRow, c: { size: number; mtimeMs: number }): boolean {
  return record.state === 'waiting' && sameBytes(record, c);
}

/** Whether the record's next attempt may start now: waiting, or failed and past its backoff. */
function attemptDue(record: FileRow, now: string): boolean {
  return (
    record.state === 'waiting' ||
    (record.state === 'failed' && (record.next_attempt_at ?? '') <= now)
  );
}

/**
 * Why a file could not be read for its comparison with its record (recheck) that passes: it is
 * looked at again, as a file that does not open yet is (a writer holds it, a permission is
 * being set; null: the copy worker ended).
 */
const READ_AGAIN = new Set<string | null>([
  'EBUSY',
  'EACCES',
  'EPERM',
  'EAGAIN',
  'EMFILE',
  'ENFILE',
  null,
]);

export class Intake {
  /**
   * When the harvest started (Harvester.start, runOnce); 0 before: a file written before was not
   * seen when it was made (consider).
   */
  startedAt = 0;
  /**
   * Instruments whose folders a walk has gone through since the start (walkEnded; cleared at
   * each start): a file found after that was seen as it came, whatever its mtime says.
   */
  readonly walkedSinceStart = new Set<number>();
  /**
   * Sources whose content is being compared with their record (recheck), by candidateKey: a
   * file found again with its size but a new mtime.
   */
  private readonly rechecks = new Map<string, { again: boolean }>();
  /** Compiled filters of watched folders (deepestFolderTaking), by folder. */
  private readonly filters = new WeakMap<WatchFolder, FolderFilter>();
  /**
   * Paths a one-shot run gave up on (they kept changing, or would not open), from then on in
   * the run: not candidates again (a later walk, a copy giving its file back), and not copied
   * (TransferHost.heldBack). By candidateKey: another instrument watching the same folder
   * decides for itself. Cleared at each run.
   */
  readonly leftForNextRun = new Set<string>();

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    private readonly clock: () => number,
    private readonly stability: StabilityChecks,
    private readonly transfers: TransferQueue,
    private readonly host: IntakeHost,
  ) {}

  /** Files being compared with their record: the harvest is not idle meanwhile. */
  get comparing(): number {
    return this.rechecks.size;
  }

  /** Whether files of this instrument are being compared with their record. */
  comparingFor(instrumentId: number): boolean {
    const prefix = `${instrumentId}\0`;
    for (const key of this.rechecks.keys()) if (key.startsWith(prefix)) return true;
    return false;
  }

  /** A walk of the instrument's folders ended. */
  walkEnded(instrumentId: number): void {
    this.walkedSinceStart.add(instrumentId);
  }

  /**
   * Considers the found files (a walk's folder, a group the watcher saw), but those recorded
   * already with the same size and mtime: their records are read as they are now, in one query
   * (knownSources), so that those made since a walk began count too.
   */
  take(
    instrument: Instrument,
    folder: WatchFolder,
    found: FoundFile[],
    recorded: { get(path: string): Parameters<typeof alreadyRecorded>[0] } = knownSources(
      this.db,
      instrument.id,
      found.map((f) => f.absolutePath),
    ),
  ): void {
    for (const f of found) {
      if (alreadyRecorded(recorded.get(f.absolutePath), f.size, f.mtimeMs)) continue;
      this.consider(instrument, folder, f.absolutePath, f.size, f.mtimeMs, f.relativePath);
    }
  }

  /**
   * A file found with this size and mtime: a candidate from now, unless it is one already (its
   * window starts again if they changed), is being copied, or is being compared with its record.
   */
  consider(
    instrument: Instrument,
    folder: WatchFolder,
    path: string,
    size: number,
    mtimeMs: number,
    relativePath = relativeTo(folder.path, path),
    /** When the path's record was first seen, for a file given back by its copy. */
    recordedAt?: string,
  ): void {
    const key = candidateKey(instrument, path);
    if (this.leftForNextRun.has(key)) return;
    const inner = this.deepestFolderTaking(instrument, folder, path);
    if (inner) {
      folder = inner;
      relativePath = relativeTo(inner.path, path);
    }
    if (this.stability.update(key, size, mtimeMs)) return;
    if (this.transfers.reads(instrument, path)) return;
    const rechecked = this.rechecks.get(key);
    if (rechecked) {
      rechecked.again = true;
      return;
    }
    const seen = nowIso(this.clock);
    // The usage on the tool when the file was first seen. A file written before this harvester
    // started (the station was off) was not seen when it was made: it belongs to the usage in
    // progress when it was written, not to whoever is logged on now. Only while the first walk
    // since the start goes on: a file found after it came in since, and a file moved or copied
    // in keeps its old mtime (it was credited to whoever used the tool hours before).
    // Also a file given back by its copy that was recorded before the start (`recordedAt`):
    // changed before the start, and tried before the first walk reached it.
    const written = new Date(mtimeMs).toISOString();
    const beforeStart =
      mtimeMs < this.startedAt &&
      (!this.walkedSinceStart.has(instrument.id) ||
        (recordedAt !== undefined && Date.parse(recordedAt) < this.startedAt));
    const usage = beforeStart
      ? usageOnToolAt(this.db, instrument.tool_id, written)
      : usageInProgressOn(this.db, instrument.tool_id);
    this.stability.add(key, instrument, folder, path, relativePath, size, mtimeMs, seen, usage);
  }

  /**
   * The deepest other watched folder of the instrument, inside this one, that takes the file
   * (its walk would find it: in no folder its filter skips, and accepted), or null. A file in
   * overlapping folders is the deepest's, whoever reports it (a walk, a watch, a copy given
   * back for a record filed under the outer one), so that its relative path (and so its
   * destination) does not depend on which came first.
   */
  private deepestFolderTaking(
    instrument: Instrument,
    folder: WatchFolder,
    path: string,
  ): WatchFolder | null {
    if (instrument.watch.length < 2) return null;
    let deepest: WatchFolder | null = null;
    for (const other of instrument.watch) {
      if (other === folder || below(folder.path, other.path) === null) continue;
      if (deepest && below(deepest.path, other.path) === null) continue;
      const rel = below(other.path, path)?.split('/');
      if (!rel) continue;
      const filter = this.filterOf(other);
      let skipped = false;
      for (let i = 1; i < rel.length && !skipped; i += 1) {
        skipped = filter.skipsDirectory(rel.slice(0, i).join('/'));
      }
      if (!skipped && filter.accepts(rel.join('/'))) deepest = other;
    }
    return deepest;
  }

  /** A folder's filter, compiled once per folder (what it leaves out is read at each call). */
  private filterOf(folder: WatchFolder): FolderFilter {
    let filter = this.filters.get(folder);
    if (!filter) this.filters.set(folder, (filter = this.host.filterOf(folder)));
    return filter;
  }

  /**
   * Notes, for files just recorded or taken again, the records of the files they may be the
   * sidecar of (lateSidecars.ts), where their instrument has sidecar hooks: one look at the
   * hooks per instrument, so a harvest without them pays nothing per file.
   */
  private noteSidecars(noted: [Candidate, number][]): number {
    const hooks = new Map<number, Hook[]>();
    let count = 0;
    for (const [c, id] of noted) {
      let own = hooks.get(c.instrument.id);
      if (!own) hooks.set(c.instrument.id, (own = sidecarHooks(this.db, c.instrument.id)));
      count += noteLateSidecar(this.db, c.instrument.id, id, c.absolutePath, own);
    }
    return count;
  }

  /**
   * Records stable files (one transaction) and queues their transfers. A file recorded and
   * done that comes back with its size but a new mtime is compared with its record first
   * (recheck), unless `compared`: that comparison found other content.
   */
  accept(stable: Candidate[], compared = false): void {
    const ark = arkConfig(this.db);
    const toCompare: [Candidate, FileRow][] = [];
    const noted: [Candidate, number][] = [];
    const later: Candidate[] = [];
    let sidecars = 0;
    const ids = this.db
      .transaction(() => {
        const taken = stable.flatMap((c) => {
          const record = latestBySource(this.db, c.instrument.id, c.absolutePath);
          // Waiting already as it is (found twice before its copy): queued, not written again.
          if (record && sameWaiting(record, c)) return [record.id];
          // Its record's copy is under way (TransferQueue.pump starts none for a file settling
          // anew, but a file may be written anew after that copy began): the attempt's markers
          // may stand, and the copy will find the change and give the file back. Decided once
          // the copy has ended; until then it stays a candidate.
          if (record && this.transfers.reads(c.instrument, c.absolutePath)) {
            later.push(c);
            return [];
          }
          // Its record's last attempt left its markers (a kill -9 after the copy reached its
          // name, a flush or a cleanup that failed): they speak for the bytes the record names,
          // and are settled under them first, by the record's attempt (TransferQueue.pump lets
          // it run while these bytes settle). Taken under the record now, the other bytes would
          // be filed with the first bytes' verified copy and checksum, and never copied. These
          // are looked at again after that: a new version once the copy is recorded, else the
          // record's.
          if (record && record.partial_path !== null && !sameBytes(record, c)) {
            if (this.transfers.handles(record.id)) {
              later.push(c);
              return [];
            }
            if (attemptDue(record, nowIso(this.clock)) && !this.transfers.failedInRun(record.id)) {
              later.push(c);
              return [record.id];
            }
            // Its attempt waits out a backoff (a share still away, a partial held open), or
            // failed or crashed in this run: left to the walk after it (the next walk, or the
            // next run), not looked at every window meanwhile, nor waited for by a one-shot
            // run, which has counted the file failed.
            return [];
          }
          // A file gone before its transfer that comes back with other bytes (or another
          // mtime) is a new file at that path: a record of its own, an ARK, the usage on the
          // tool when it was seen. The one it came back as it was keeps its record (goneAgain).
          const back = record?.state === 'gone' && sameBytes(record, c);
          // Likewise a file not harvested yet (its destination away) whose path another usage
          // wrote anew: the bytes first seen are gone from the source, and the new ones are the
          // new usage's, not filed under the old one's name and ARK. A partial the last attempt
          // could not remove keeps the record, for its next attempt to settle.
          if (record && replacedUnderAnotherUsage(record, c)) markGone(this.db, record.id);
          else if (record && record.state !== 'done' && (record.state !== 'gone' || back)) {
            requeueFile(this.db, record.id, c.size, c.mtimeMs);
            noted.push([c, record.id]);
            return [record.id];
          }
          if (record?.state === 'done' && record.size === c.size) {
            if (record.mtime_ms === c.mtimeMs) return [];
            if (!compared && record.xxhash !== null && record.hash_algorithm === HASH_ALGORITHM) {
              toCompare.push([c, record]);
              return [];
            }
          }
          const id = recordFile(
            this.db,
            {
              instrumentId: c.instrument.id,
              watchPath: c.folder.path,
              relativePath: c.relativePath,
              sourcePath: c.absolutePath,
              filename: basename(c.absolutePath),
              size: c.size,
              mtimeMs: c.mtimeMs,
              firstDiscoveredAt: c.firstSeenAt,
              usageEventId: c.usageEventId,
            },
            ark,
          );
          noted.push([c, id]);
          return [id];
        });
        sidecars = this.noteSidecars(noted);
        return taken;
      })
      .immediate();
    for (const c of later) {
      const key = candidateKey(c.instrument, c.absolutePath);
      this.stability.putBack(key, c, c.size, c.mtimeMs, null, WAKE_GAP_MS);
    }
    for (const id of ids) this.transfers.enqueue(id);
    if (sidecars) this.host.sidecarsNoted();
    if (toCompare.length) void this.recheck(toCompare);
    this.host.changed();
    this.transfers.pump();
  }

  /**
   * Files recorded and done, found again with their size and a new mtime: touched, saved
   * again unchanged, copied in with their bytes kept, or on a share that now reports times at
   * another precision (then every file of it, at once). Each is read (in a copy worker, queued
   * with the copies) and compared with its record's checksum; the group's outcomes are stored
   * in one commit. The same bytes keep their record and ARK, which take the new mtime, and
   * are not copied again; other bytes are a new version with an ARK of its own. A file
   * changed while it was read, or that cannot be read for now (held by a writer, no
   * permission), is a candidate again, from its first sighting: a one-shot run gives it the
   * same patience as any file. One that cannot be read for another reason (EIO) is recorded
   * as a new version, whose transfer fails with the reason and is retried, as any file's.
   */
  private async recheck(group: [Candidate, FileRow][]): Promise<void> {
    const pool = this.host.pool();
    if (!pool) return;
    const keys = group.map(([c]) => candidateKey(c.instrument, c.absolutePath));
    for (const key of keys) this.rechecks.set(key, { again: false });
    try {
      const hashes = await Promise.allSettled(group.map(([c]) => pool.hash(c.absolutePath)));
      if (this.host.stopped()) return;
      const probes = await pool.probe(group.map(([c]) => c.absolutePath));
      if (this.host.stopped()) return;
      const same: { id: number; size: number; mtimeMs: number }[] = [];
      const versions: Candidate[] = [];
      group.forEach(([c, record], i) => {
        const probe = probes[i];
        const hashed = hashes[i];
        if (!this.host.harvests(c.instrument) || probe.kind !== 'file') return;
        const code =
          hashed.status === 'rejected'
            ? ((hashed.reason as NodeJS.ErrnoException).code ?? null)
            : null;
        const readAgain = hashed.status === 'rejected' && READ_AGAIN.has(code);
        const changed = probe.size !== c.size || probe.mtimeMs !== c.mtimeMs;
        if (changed || probe.openError !== null || readAgain) {
          this.stability.putBack(
            keys[i],
            c,
            probe.size,
            probe.mtimeMs,
            changed ? null : (probe.openError ?? code ?? 'unreadable'),
            changed ? 0 : WAKE_GAP_MS,
          );
        } else if (hashed.status === 'fulfilled' && hashed.value.hash === record.xxhash) {
          same.push({ id: record.id, size: c.size, mtimeMs: c.mtimeMs });
        } else {
          if (hashed.status === 'rejected') {
            this.log.warn(
              { err: hashed.reason, file: c.absolutePath },
              'harvest: cannot compare a file with its record; recorded as a new version',
            );
          }
          versions.push(c);
        }
      });
      if (same.length) {
        keepRecords(this.db, same);
        this.host.changed();
      }
      if (versions.length) this.accept(versions, true);
    } catch (error) {
      // Not one file's trouble (the database): each is looked at again, none dropped.
      if (!this.host.stopped()) this.log.error({ err: error }, 'harvest: comparing files failed');
      for (const key of keys) {
        const mark = this.rechecks.get(key);
        if (mark) mark.again = true;
      }
    } finally {
      group.forEach(([c], i) => {
        const mark = this.rechecks.get(keys[i]);
        this.rechecks.delete(keys[i]);
        // Seen again meanwhile (a watcher event, a walk; consider left it to this check), or
        // its instrument was set up again: looked at anew, as the instrument now is. The
        // stability check probes it before anything is taken.
        if (this.host.stopped() || this.stability.has(keys[i])) return;
        if (!mark?.again && this.host.harvests(c.instrument)) return;
        const instrument = this.host.instruments().find((one) => one.id === c.instrument.id);
        const folder = instrument?.watch.find((w) => w.path === c.folder.path);
        if (instrument && folder) {
          this.consider(instrument, folder, c.absolutePath, c.size, c.mtimeMs, c.relativePath);
        }
      });
      this.host.checkIdle();
    }
  }
}
