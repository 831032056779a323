/**
 * The transfer queue: recorded files waiting for their copy, handed to the copy pool a bounded
 * number at once (pump), small ones in batches (batch.ts), big ones alone (transfer.ts); their
 * outcomes stored in group commits; what each transfer's end means for the run that counts it
 * and for a file whose source changed while it was copied.
 */
import { HarvestStopped } from './commandHook.js';
import { stat } from 'node:fs/promises';
import type { HarvestStatus } from '../../../shared/api.js';
import type { TransferStatus } from '../../../shared/harvest/management.js';
import type { Db } from '../db/open.js';
import { cachedStatement } from '../db/statements.js';
import { getSetting, setSetting } from '../station/settings.js';
import { nowIso } from '../util/ids.js';
import type { Logger } from '../util/log.js';
import type { Instrument, WatchFolder } from './config.js';
import type { CopyPool } from './copyPool.js';
import { DurabilityBatch, SyncFsRunner } from './durable.js';
import type { MountMemory } from './place.js';
import { OutcomeCommits } from './outcomes.js';
import { fileById, markGone, sameBytes, type FileRow } from './records.js';
import { sourceKey } from './storageGuard.js';
import { describeError, failedOutcome, type TransferDeps } from './attempt.js';
import { recoverInterrupted } from './recovery.js';
import { transferFile } from './transfer.js';
import {
  BATCH_MAX_BYTES,
  batchable,
  filesPerBatch,
  transferBatch,
  type BatchEnd,
  type BatchItem,
} from './batch.js';

/** Transfers (a file, or a batch of small files) in flight per copy slot (see pump). */
export const IN_FLIGHT_PER_COPY = 4;

/** What the transfer queue asks of the engine. */
export interface TransferHost {
  /** Whether the harvest stopped: nothing more starts, and no outcome is stored. */
  stopped(): boolean;
  /** Aborted when the harvest stops (TransferDeps.stopSignal). */
  stopSignal(): AbortSignal;
  /** The copy workers, once the harvest started them; null before. */
  pool(): CopyPool | null;
  /** A harvested instrument by id: a file of another one is not transferred. */
  instrument(id: number): Instrument | undefined;
  /** The watched folders inside a storage location's base (TransferDeps.watchedIn). */
  watchedIn(base: string): readonly string[];
  /**
   * The run under way (--once): each file's last end, which each transfer's end sets (a file
   * retried in the run counts once, as it ended); null when no run is under way.
   */
  runEnds(): Map<number, TransferStatus> | null;
  /** The files whose attempt crashed in the run under way (RunSummary.crashed); null outside one. */
  runCrashed(): Set<number> | null;
  /**
   * A file's source went away before or during its copy (its record is gone now): a run under
   * way walks again before it ends, for the file under a new name.
   */
  movedAway(): void;
  /** A file given back by its copy (its source changed meanwhile): found again, as it is now. */
  consider(
    instrument: Instrument,
    folder: WatchFolder,
    path: string,
    size: number,
    mtimeMs: number,
    /** When the file's record was first seen (its usage may be that of when it was written). */
    known: { recordedAt: string },
  ): void;
  /**
   * Whether a file's copy is not to start now: its file is settling with other bytes than its
   * record's (written anew), or the one-shot run under way gave it up (still changing).
   */
  heldBack(instrument: Instrument, file: FileRow): boolean;
  /** Tells the UIs. */
  changed(): void;
  /** Whether the harvest is idle now. */
  checkIdle(): void;
}

interface Active {
  file: FileRow;
  bytes: number;
  /** When its copy started (its first progress); null while it waits for a copy slot. */
  copyingSince: number | null;
}

/**
 * A source of one instrument: two instruments watching one folder each harvest its files. Its
 * path as a file's identity compares it (records.ts sourceKey).
 */
const readKey = (instrumentId: number, path: string): string =>
  `${instrumentId}\0${sourceKey(path)}`;

/**
 * The transfers under way by file id, with the source paths they read: a walk asks for every
 * file it finds whether it is being copied, with a thousand small files under way at once.
 */
class ActiveTransfers {
  private readonly byId = new Map<number, Active>();
  private readonly sources = new Map<string, number>();

  get size(): number {
    return this.byId.size;
  }

  get(id: number): Active | undefined {
    return this.byId.get(id);
  }

  has(id: number): boolean {
    return this.byId.has(id);
  }

  values(): IterableIterator<Active> {
    return this.byId.values();
  }

  set(id: number, active: Active): void {
    this.delete(id);
    this.byId.set(id, active);
    const key = readKey(active.file.instrument_id, active.file.source_path);
    this.sources.set(key, (this.sources.get(key) ?? 0) + 1);
  }

  delete(id: number): void {
    const active = this.byId.get(id);
    if (!active) return;
    this.byId.delete(id);
    const key = readKey(active.file.instrument_id, active.file.source_path);
    const left = (this.sources.get(key) ?? 1) - 1;
    if (left > 0) this.sources.set(key, left);
    else this.sources.delete(key);
  }

  /** Whether a transfer of this instrument under way reads this source. */
  reads(instrument: Instrument, path: string): boolean {
    return this.sources.has(readKey(instrument.id, path));
  }
}

export class TransferQueue {
  private readonly queue: number[] = [];
  private readonly queued = new Set<number>();
  private readonly active = new ActiveTransfers();
  /** Whether what a crash interrupted is settled: nothing is transferred before (start). */
  private recovered = false;
  private readonly syncFs = new SyncFsRunner();
  private readonly durability = new DurabilityBatch({
    runSync: (folders) => this.syncFs.run(folders),
  });
  /** Transfers under way: one per big file, one per batch of small files (batch.ts). */
  private units = 0;
  /** Of those, the ones whose copies are placed and wait for the flush (durable.ts). */
  private settling = 0;
  /** The transfers' outcomes, stored in group commits. */
  private readonly outcomes: OutcomeCommits;
  /** Storage folders seen as mount points, kept in the settings (place.ts mountProblem). */
  private readonly mounts: MountMemory = {
    wasMounted: (base) => getSetting(this.db, 'harvest.mountedBases').includes(base),
    mounted: (base) => {
      const known = getSetting(this.db, 'harvest.mountedBases');
      if (!known.includes(base)) setSetting(this.db, 'harvest.mountedBases', [...known, base]);
    },
  };

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    private readonly clock: () => number,
    private readonly host: TransferHost,
  ) {
    this.outcomes = new OutcomeCommits(db, () => host.stopped());
  }

  private now(): string {
    return nowIso(this.clock);
  }

  /**
   * The latest retry time a failure can be given now (retryAt below: the longest backoff), and
   * a minute: one later than this was set before the PC's clock went back (due.ts dueFileIds).
   */
  latestRetryAt(): string {
    const max = getSetting(this.db, 'harvest.retryMaxSeconds');
    return nowIso(() => this.clock() + (max + 60) * 1000);
  }

  /** What a transfer needs (transfer.ts), also for the recovery of interrupted ones. */
  get deps(): TransferDeps {
    return {
      db: this.db,
      pool: this.host.pool() as CopyPool,
      log: this.log,
      now: () => this.now(),
      retryAt: (attempts) => {
        const base = getSetting(this.db, 'harvest.retryBaseSeconds');
        const max = getSetting(this.db, 'harvest.retryMaxSeconds');
        const seconds = Math.min(base * 2 ** Math.max(attempts - 1, 0), max);
        return nowIso(() => this.clock() + seconds * 1000);
      },
      progress: (fileId, bytes) => {
        const active = this.active.get(fileId);
        if (active) {
          active.bytes = bytes;
          active.copyingSince ??= this.clock();
        }
      },
      record: (fileId, outcome) => this.outcomes.record(fileId, outcome),
      watchedIn: (base) => this.host.watchedIn(base),
      stopSignal: this.host.stopSignal(),
      mounts: this.mounts,
      // A copy waiting for its batch's flush holds no copy slot: more small copies start, so
      // the batch fills up. Its files join the batch before pump, which flushes at once when
      // every transfer under way waits for the flush: a lone file does not wait for the
      // batch's timer (200 ms), nor does the last batch of a harvest.
      settle: async (path) => {
        const settled = this.durability.settle(path);
        this.settling += 1;
        this.pump();
        try {
          await settled;
        } finally {
          this.settling -= 1;
        }
      },
      settleAll: async (paths) => {
        const settled = Promise.allSettled(paths.map((path) => this.durability.settle(path)));
        this.settling += 1;
        this.pump();
        try {
          return await settled;
        } finally {
          this.settling -= 1;
        }
      },
    };
  }

  /** What a crash interrupted is settled: the queued files may be transferred (pump). */
  start(): void {
    this.recovered = true;
  }

  /**
   * The harvest stops: the copies placed are made durable, and the durability thread ends.
   * Then the engine closes the copy pool, and calls poolClosed.
   */
  async flushPlaced(): Promise<void> {
    await this.durability.flush();
    await this.syncFs.close();
  }

  /** The copy pool is closed: the outcomes waiting are stored; nothing starts until start. */
  poolClosed(): void {
    this.outcomes.flush();
    this.recovered = false;
  }

  /** Whether files are queued or transfers under way. */
  get busy(): boolean {
    // units: a transfer that has ended may still be finishing (runTransfer's last look).
    return this.queue.length > 0 || this.active.size > 0 || this.units > 0;
  }

  /**
   * Whether files of this instrument are queued or under way: a harvest run of one instrument
   * waits for its own transfers, not for another instrument's stream of files. Asked a few
   * times a second while a run settles, never on the per-file path.
   */
  busyFor(instrumentId: number): boolean {
    for (const a of this.active.values()) if (a.file.instrument_id === instrumentId) return true;
    if (!this.queue.length) return false;
    return (
      cachedStatement(
        this.db,
        `SELECT 1 FROM json_each(?) q JOIN harvest_files f ON f.id = q.value
          WHERE f.instrument_id = ? LIMIT 1`,
      ).get(JSON.stringify(this.queue), instrumentId) !== undefined
    );
  }

  /** Files queued, not yet handed to the copy pool. */
  get queuedFiles(): number {
    return this.queue.length;
  }

  /** Transfers under way: a big file, or a batch of small files, each. */
  get underWay(): number {
    return this.units;
  }

  /** Whether a transfer of this instrument under way reads this source. */
  reads(instrument: Instrument, path: string): boolean {
    return this.active.reads(instrument, path);
  }

  /** Whether the file's transfer is queued or under way. */
  handles(id: number): boolean {
    return this.queued.has(id) || this.active.has(id);
  }

  /** Whether the file's attempt crashed in the run under way: enqueue queues it no more. */
  crashedInRun(id: number): boolean {
    return this.host.runCrashed()?.has(id) ?? false;
  }

  /** Whether the run under way has counted the file failed (a crash counts so too). */
  failedInRun(id: number): boolean {
    return this.host.runEnds()?.get(id) === 'failed';
  }

  /**
   * Queues a recorded file's transfer, unless it is queued or under way already, or its attempt
   * crashed in the run under way.
   */
  enqueue(id: number): void {
    if (this.queued.has(id) || this.active.has(id)) return;
    if (this.crashedInRun(id)) return;
    this.queued.add(id);
    this.queue.push(id);
  }

  /** The copies under way (HarvestStatus.active): not those waiting for a copy slot. */
  copying(): HarvestStatus['active'] {
    return [...this.active.values()].flatMap((a) => {
      if (a.copyingSince === null) return [];
      const seconds = (this.clock() - a.copyingSince) / 1000;
      const rate = seconds > 0 ? a.bytes / seconds : 0;
      return {
        file_id: a.file.id,
        filename: a.file.filename,
        relative_path: a.file.relative_path,
        persistent_id: a.file.persistent_id,
        bytes_done: a.bytes,
        bytes_total: a.file.size,
        rate,
        seconds_left: rate > 0 ? Math.max(a.file.size - a.bytes, 0) / rate : null,
        started_at: new Date(a.copyingSince).toISOString(),
      };
    });
  }

  /** Files queued, and those handed to the copy pool but waiting for a copy slot. */
  waiting(): number {
    return (
      this.queue.length + [...this.active.values()].filter((a) => a.copyingSince === null).length
    );
  }

  /** The files queued or under way, by id. */
  ids(): number[] {
    return [...this.queue, ...[...this.active.values()].map((a) => a.file.id)];
  }

  pump(): void {
    // The pool bounds the copies at once (harvest.concurrency): a copy is one big file or one
    // batch of small files (batch.ts). More transfers than that may be in flight: while two
    // are copied, others are being checked, placed and recorded, which is waiting on the disk
    // and the database more than work.
    const pool = this.host.pool();
    let batch: BatchItem[] = [];
    let batchBytes = 0;
    const perBatch = filesPerBatch(this.queue.length, pool?.size ?? 1);
    while (
      !this.host.stopped() &&
      this.recovered &&
      pool &&
      this.units - this.settling < pool.size * IN_FLIGHT_PER_COPY &&
      this.queue.length
    ) {
      const id = this.queue.shift() as number;
      this.queued.delete(id);
      const file = fileById(this.db, id);
      const instrument = file ? this.host.instrument(file.instrument_id) : undefined;
      if (!file || !instrument || (file.state !== 'waiting' && file.state !== 'failed')) continue;
      // Its file was written anew and is settling: not copied now. The copy would only find
      // the change, a failed file's at every tick while the file settles; and its attempt's
      // markers (partial_path) could stand when the intake takes the new bytes, which would
      // then be filed under this record even when another usage wrote them. Once they are
      // stable, the intake queues it again or gives them a record of their own; a file gone
      // meanwhile comes back as due (failed) or at the next walk (waiting). A file a one-shot
      // run gave up is the next run's: a failed one stays due, and would be copied again at
      // every tick while it changes (and one such copy may land between two writes). What an
      // earlier attempt left (its markers) is settled all the same, under the bytes the record
      // names, before the intake takes the new ones (Intake.accept); the copy waits (runTransfer).
      if (file.partial_path === null && this.host.heldBack(instrument, file)) continue;
      this.active.set(id, { file, bytes: 0, copyingSince: null });
      if (!batchable(file, instrument)) {
        this.units += 1;
        void this.runTransfer(file, instrument);
        continue;
      }
      batch.push({ file, instrument });
      batchBytes += file.size;
      if (batch.length >= perBatch || batchBytes >= BATCH_MAX_BYTES) {
        this.units += 1;
        void this.runBatch(batch);
        batch = [];
        batchBytes = 0;
      }
    }
    if (batch.length) {
      this.units += 1;
      void this.runBatch(batch);
    }
    // Every transfer under way waits for the flush: nothing would join the batch.
    if (this.settling > 0 && this.units === this.settling) void this.durability.flush();
    this.host.checkIdle();
  }

  private async runBatch(items: BatchItem[]): Promise<void> {
    let ends: BatchEnd[];
    try {
      ends = await transferBatch(this.deps, items);
    } catch (error) {
      // Whatever was under way keeps its markers: the next attempt settles them first.
      ends = items.map(() => ({ end: 'crashed', error }));
    }
    try {
      await Promise.all(items.map((item, i) => this.ended(item.file, item.instrument, ends[i])));
    } finally {
      this.units -= 1;
      this.host.changed();
      this.pump();
    }
  }

  /** Counts a transfer's end in the run, and takes back a re-queued file for a new look. */
  private async ended(file: FileRow, instrument: Instrument, end: BatchEnd): Promise<void> {
    try {
      if (end.end === 'crashed') {
        // Ended by a stop (an upload cut short) that a quick start has followed already: the
        // file is this run's to take, not a crash of it.
        if (!this.host.stopped() && !(end.error instanceof HarvestStopped)) {
          this.host.runEnds()?.set(file.id, 'failed');
          this.host.runCrashed()?.add(file.id);
          this.log.error({ err: end.error, file: file.source_path }, 'harvest: transfer crashed');
        }
      } else if (end.end === 'requeue') {
        // Given back for a new look: what an earlier attempt in the run ended as no longer stands.
        this.host.runEnds()?.delete(file.id);
        // Where the record says it is now: its watched folder may have been given a new path
        // while it was copied (folderMoves.ts), and the file is looked at there.
        const current = fileById(this.db, file.id) ?? file;
        const s = await stat(current.source_path).catch((error: NodeJS.ErrnoException) => error);
        this.active.delete(file.id);
        if (!(s instanceof Error)) {
          this.considerAgain(current, s);
        } else if (s.code === 'ENOENT' && (await stat(current.watch_path).catch(() => null))) {
          // Deleted or moved away while it was copied; under a new name it is a new file. A
          // partial that could not be removed keeps the file for its next start to settle.
          if (fileById(this.db, file.id)?.partial_path === null) markGone(this.db, file.id);
          this.host.movedAway();
        }
      } else if (end.end === 'gone') {
        // Went away while it waited for its copy (checkSource marked it gone).
        this.host.movedAway();
      } else if (end.end === 'finished') {
        const ends = this.host.runEnds();
        if (ends) {
          const status =
            'status' in end && end.status
              ? end.status
              : (cachedStatement(
                  this.db,
                  'SELECT status FROM harvest_transfers WHERE file_id = ? ORDER BY id DESC LIMIT 1',
                )
                  .pluck()
                  .get(file.id) as TransferStatus);
          ends.set(file.id, status);
        }
      }
    } finally {
      this.active.delete(file.id);
    }
  }

  /**
   * Settles what an earlier attempt left (recoverInterrupted). When that fails too, the
   * partial still cannot be removed (the share is still away): the file's failure is recorded
   * with the reason and tried again after the usual backoff, its markers kept; without that it
   * would be due again at every tick.
   */
  private async settleEarlierAttempt(
    file: FileRow,
    instrument: Instrument,
  ): Promise<BatchEnd | null> {
    try {
      const settled = await recoverInterrupted(this.deps, file, instrument);
      return settled === null ? null : { end: 'finished', status: settled };
    } catch (error) {
      const reason = `cannot clean up an earlier attempt (${file.partial_path}): ${describeError(error)}`;
      await this.outcomes.record(file.id, {
        ...failedOutcome(this.deps, file, reason, file.pending_destination),
        startedAt: this.now(),
        storageLocationId: instrument.storage_location?.id ?? null,
      });
      return { end: 'finished', status: 'failed' };
    }
  }

  /**
   * Whether pump leaves the file's copy for now (TransferHost.heldBack): its source is being
   * written anew and settles, or a one-shot run gave it up. For Retry to say so, right after
   * its pump: as things stand then (a file that starts to change later is held unsaid).
   */
  holds(id: number): boolean {
    const file = fileById(this.db, id);
    const instrument = file ? this.host.instrument(file.instrument_id) : undefined;
    return (
      file !== undefined &&
      instrument !== undefined &&
      // What an earlier attempt left is settled all the same (pump).
      file.partial_path === null &&
      this.host.heldBack(instrument, file)
    );
  }

  /** Gives the intake the file's source, as found now, for a new look (TransferHost.consider). */
  private considerAgain(file: FileRow, s: { size: number; mtimeMs: number }): void {
    // Not for a harvest that stopped, nor for an instrument no longer harvested here (moved,
    // removed, turned off). One reloaded since (a bundle imported, the server's changes) is
    // given the file as it is now: its reload's walk passed the file over, as this copy was
    // reading it, and it would have waited for the next full walk.
    if (this.host.stopped()) return;
    const current = this.host.instrument(file.instrument_id);
    if (!current) return;
    // Its folder as recorded, which may since be configured in other case (sourceKey).
    const folder = current.watch.find((w) => sourceKey(w.path) === sourceKey(file.watch_path));
    if (!folder) return;
    this.host.consider(current, folder, file.source_path, s.size, s.mtimeMs, {
      recordedAt: file.first_discovered_at,
    });
  }

  private async runTransfer(file: FileRow, instrument: Instrument): Promise<void> {
    const id = file.id;
    // What an earlier attempt left is settled first, under the bytes the record names.
    const settles = file.partial_path !== null;
    // null: settled by recovery alone, nothing to count.
    let end: BatchEnd | null = null;
    try {
      let current: FileRow | undefined = file;
      if (file.partial_path !== null) {
        // An earlier attempt left its markers (its cleanup failed): settle that first.
        current = undefined;
        end = await this.settleEarlierAttempt(file, instrument);
        // Not recorded by the settle (end null): the partial went, and the file is copied now.
        const settled = end === null ? fileById(this.db, id) : undefined;
        if (settled?.partial_path === null) current = settled;
        if (current && this.host.heldBack(instrument, current)) current = undefined;
      }
      if (current) {
        file = current;
        end = { end: await transferFile(this.deps, current, instrument) };
      }
    } catch (error) {
      end = { end: 'crashed', error };
    }
    // Its source may have been written anew meanwhile, and a walk passes over a file while its
    // transfer runs (Sightings): read now, while this counts as under way (ended lets it go),
    // and looked at again once it has ended, so that a one-shot run does not end in between.
    const source =
      settles && !this.host.stopped() ? await stat(file.source_path).catch(() => null) : null;
    try {
      if (end) await this.ended(file, instrument, end);
    } finally {
      this.active.delete(id);
      if (source && !sameBytes(file, source)) {
        this.considerAgain(file, source);
      }
      this.units -= 1;
      this.host.changed();
      this.pump();
    }
  }
}
