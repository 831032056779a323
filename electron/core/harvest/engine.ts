/**
 * The station's harvest engine: discover (watcher + periodic full walk) -> stable (size and
 * mtime unchanged for the instrument's window, and the file opens: stability.ts) -> record (ARK
 * minted) -> transfer (transferQueue.ts: a bounded number at once, in copy workers) -> outbox.
 *
 * The Harvester owns the parts and says when each works: the walks (walks.ts) and the watches
 * (watches.ts, whose reports sightings.ts looks at) find files; the intake (intake.ts) makes
 * them candidates and records those the stability check finds stable; the transfer queue
 * copies them; the run queue (runQueue.ts) runs the harvests asked for. Here: start and stop
 * (with the lock, lockHolder.ts), the instruments harvested, a one-shot run, a reload of the
 * configuration, Retry, and the status.
 */
import { dirname, resolve } from 'node:path';
import type { CoreEvent, HarvestStatus } from '../../../shared/api.js';
import type { Db } from '../db/open.js';
import { cachedStatement } from '../db/statements.js';
import { getSetting } from '../station/settings.js';
import { AppError } from '../util/errors.js';
import { injected } from '../util/failpoint.js';
import { nowIso } from '../util/ids.js';
import type { Logger } from '../util/log.js';
import { HISTORY_PROBLEM, historyPendingIds } from '../sync/history.js';
import { instrumentsOfTool, type Instrument } from './config.js';
import { requeueInterruptedRuns } from './runs.js';
import { CopyPool } from './copyPool.js';
import { acceptHooks, endRunningHooks } from './commandHook.js';
import { Intake, type IntakeHost } from './intake.js';
import { LeftOutFolders, type LeftOutPaths } from './leftOut.js';
import { RunQueue, type RunQueueHost } from './runQueue.js';
import { ScheduleCrons } from './scheduleCrons.js';
import { Sightings, type SightingsHost } from './sightings.js';
import { HarvestLockHolder } from './lockHolder.js';
import type { StatAll } from './discover.js';
import {
  dueFileIds,
  fileById,
  interruptedFiles,
  retryAllNow,
  countRetriable,
  retryNow,
} from './records.js';
import { idleHarvestStatus } from './status.js';
import { recoverInterrupted } from './recovery.js';
import { takeBackMade } from './folderHolds.js';
import { StabilityChecks, tickMs } from './stability.js';
import { TransferQueue } from './transferQueue.js';
import { Walks, type WalksHost } from './walks.js';
import { FolderWatches, type WatchesHost } from './watches.js';

export interface HarvesterOptions {
  db: Db;
  log: Logger;
  /** The station's tool: its enabled instruments are harvested. */
  tool: () => string | null;
  emit?: (event: CoreEvent) => void;
  clock?: () => number;
  /** Watch folders with chokidar between rescans (off for one-shot runs). */
  watch?: boolean;
  /** Run scheduled harvests (off for one-shot runs). */
  schedules?: boolean;
  /** One harvester per data dir: held while running (`<data>/harvest.lock`). */
  lockFile?: string;
  /**
   * A station's harvester: while another harvest holds the lock (a `labstation harvest --once`
   * from cron), start() says so in status() and takes the lock once it is free, instead of
   * failing. Without it, start() fails at once, as a command run by hand should.
   */
  waitForLock?: boolean;
}

export interface RunSummary {
  completed: number;
  skipped: number;
  failed: number;
  /** Folders that could not be walked, with the reason. */
  unreachable: string[];
  /**
   * Files that kept changing, or could not be opened for reading (`openError`, an errno code),
   * for the whole run: left for the next.
   */
  unstable: { path: string; openError: string | null }[];
}

/** How often the watched folders are checked for one that appeared or was replaced. */
const WATCH_CHECK_MS = 5_000;

/** The test fault harvest.accept-fails-once fails the first recording of stable files. */
let acceptFailedOnce = false;

export class Harvester {
  private readonly db: Db;
  private readonly log: Logger;
  private readonly clock: () => number;
  private pool: CopyPool | null = null;
  private instruments: Instrument[] = [];
  /** The files found, until they are stable (stability.ts). */
  private readonly stability: StabilityChecks;
  /** The recorded files waiting for their transfer, and those under way (transferQueue.ts). */
  private readonly transfers: TransferQueue;
  /** Found files made candidates, stable ones recorded and queued (intake.ts). */
  private readonly intake: Intake;
  /** What the watches report between walks, looked at in groups (sightings.ts). */
  private readonly sightings: Sightings;
  /** The full walks of the watched folders (walks.ts). */
  private readonly walks: Walks;
  /** The watches of the watched folders (watches.ts). */
  private readonly watches: FolderWatches;
  /** The harvest runs asked for, one after the other (runQueue.ts). */
  private readonly runs: RunQueue;
  /** The storage folders and the data dir inside watched folders, left out of their harvest. */
  private readonly leftOut: LeftOutFolders;
  private checkingWatches = false;
  /** The rescanNow under way, if any (they run one after the other). */
  private rescanning: Promise<void> = Promise.resolve();
  /** harvest.importedAt as this harvester last applied it (renewWatches). */
  private importedAt: string | null = null;
  /** The schedules' timers, while harvesting with schedules. */
  private readonly schedules: ScheduleCrons;
  /** Enabled instruments not harvested until their history is here (loadInstruments). */
  private awaitingHistory: Instrument[] = [];
  private timers: NodeJS.Timeout[] = [];
  /** A one-shot run has walked every folder: candidates no longer wait without end. */
  private walked = false;
  /** The harvest lock, taken at the start, or waited for (lockHolder.ts). */
  private readonly lock: HarvestLockHolder;
  private stopped = true;
  private idleWaiters: (() => void)[] = [];
  private run: RunSummary | null = null;
  private changeTimer: NodeJS.Timeout | undefined;
  private starting: Promise<void> | null = null;

  constructor(private readonly options: HarvesterOptions) {
    this.db = options.db;
    this.log = options.log;
    this.clock = options.clock ?? Date.now;
    this.leftOut = new LeftOutFolders(this.log);
    this.lock = new HarvestLockHolder(options.lockFile, options.waitForLock ?? false, this.log, {
      stopped: () => this.stopped,
      start: () => this.start(),
      changed: () => this.changed(),
    });
    this.schedules = new ScheduleCrons(
      this.db,
      this.log,
      () => this.now(),
      () => this.runQueued(),
    );
    this.stability = new StabilityChecks(
      {
        stopped: () => this.stopped,
        prober: () => this.pool,
        accept: (stable) => {
          if (injected('harvest.accept-fails-once') && !acceptFailedOnce) {
            acceptFailedOnce = true;
            throw new Error('database or disk is full (injected)');
          }
          this.intake.accept(stable);
        },
        onceRun: () => (this.walked ? this.run : null),
        queueDue: () => this.queueDue(),
        checkIdle: () => this.checkIdle(),
        changed: () => this.changed(),
      },
      this.log,
      this.clock,
    );
    this.transfers = new TransferQueue(this.db, this.log, this.clock, {
      stopped: () => this.stopped,
      pool: () => this.pool,
      instrument: (id) => this.instrument(id),
      watchedIn: (base) => this.leftOut.watchedIn(base),
      runCounts: () => this.run,
      consider: (instrument, folder, path, size, mtimeMs) =>
        this.intake.consider(instrument, folder, path, size, mtimeMs),
      changed: () => this.changed(),
      checkIdle: () => this.checkIdle(),
    });
    // What the parts below ask of the engine, in one object: each names its part in its Host.
    const host: IntakeHost & SightingsHost & WalksHost & WatchesHost & RunQueueHost = {
      stopped: () => this.stopped,
      harvests: (instrument) => this.harvests(instrument),
      instruments: () => this.instruments,
      instrument: (id) => this.instrument(id),
      awaitingHistory: () => this.awaitingHistory,
      pool: () => this.pool,
      statAll: () => this.statAll(),
      filterOf: (folder) => this.leftOut.filterOf(folder),
      renewWatch: (instrument, folder) => this.watches.renew(instrument, folder),
      rescan: (instrument) => this.walks.rescan(instrument),
      run: () => this.run,
      queueDue: (includeWaiting) => this.queueDue(includeWaiting),
      starting: () => this.starting,
      rescanning: () => this.rescanning,
      waitsForLock: () => this.lock.problem !== null,
      changed: () => this.changed(),
      checkIdle: () => this.checkIdle(),
    };
    const { db, log, clock, stability, transfers } = this;
    this.intake = new Intake(db, log, clock, stability, transfers, host);
    this.sightings = new Sightings(db, log, clock, stability, transfers, this.intake, host);
    this.walks = new Walks(db, log, clock, stability, this.intake, host);
    this.watches = new FolderWatches(log, this.sightings, host);
    this.runs = new RunQueue(db, log, clock, this.walks, this.intake, stability, transfers, host);
  }

  private concurrency(): number {
    return Math.max(1, Math.min(16, Math.floor(getSetting(this.db, 'harvest.concurrency'))));
  }

  private now(): string {
    return nowIso(this.clock);
  }

  /** Loads the instruments, finishes what a crash interrupted, and starts watching. */
  start(): Promise<void> {
    this.starting = this.begin();
    return this.starting;
  }

  private async begin(): Promise<void> {
    this.stopped = false;
    acceptHooks();
    this.intake.startedAt = this.clock();
    this.importedAt = getSetting(this.db, 'harvest.importedAt');
    this.loadInstruments();
    if (!this.lock.take()) return;
    await this.recover();
    await this.guardStorage();
    if (this.stopped) return;
    if (this.options.watch !== false) this.watches.start(this.instruments);
    if (this.options.schedules !== false) {
      this.schedules.start(this.instruments.map((i) => i.id));
    }
    const tick = setInterval(() => void this.stability.check(), tickMs(this.instruments));
    const rescanMinutes = Math.max(getSetting(this.db, 'harvest.rescanMinutes'), 0.05);
    // Each walk looks again where the storage locations are on disk first: a link or a
    // share's mount may have changed. (A start, a reload and --once look before their walk.)
    const rescan = setInterval(
      () => void this.guardStorage().then(() => this.rescanAll()),
      rescanMinutes * 60_000,
    );
    const renew = setInterval(() => void this.renewWatches(), WATCH_CHECK_MS);
    this.timers = [tick, rescan, renew];
    for (const t of this.timers) t.unref();
    requeueInterruptedRuns(this.db);
    await this.rescanAll();
    this.runQueued();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    // A command hook under way would hold the stop for up to its timeout, and no new one
    // starts: the file's copy is recorded, its hooks run again, at the next start.
    endRunningHooks('the harvest was stopped');
    this.lock.stopWaiting();
    await this.starting?.catch(() => undefined);
    this.starting = null;
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    this.stability.stop();
    this.schedules.stop();
    await this.watches.close();
    this.sightings.forget();
    // Transfers under way end with the pool; their partials are cleaned up at the next start.
    await this.transfers.flushPlaced();
    await this.pool?.close();
    this.pool = null;
    this.transfers.poolClosed();
    this.lock.release();
  }

  private loadInstruments(): void {
    const tool = this.options.tool();
    const enabled = tool === null ? [] : instrumentsOfTool(this.db, tool).filter((i) => i.enabled);
    // Given by the server and still waiting for the records of their files made before: left
    // alone until those are here, or their files would get new ARKs (sync/history.ts).
    const waiting = historyPendingIds(this.db);
    this.instruments = enabled.filter((i) => !waiting.has(i.id));
    this.awaitingHistory = enabled.filter((i) => waiting.has(i.id));
    this.leftOut.find(this.leftOutPaths());
  }

  /** The paths, as written, whose overlaps leftOut looks for. */
  private leftOutPaths(): LeftOutPaths {
    const name = this.db.name;
    return {
      watched: this.instruments.flatMap((i) => i.watch),
      storageBases: cachedStatement(
        this.db,
        `SELECT base_path FROM storage_locations WHERE type = 'local'`,
      )
        .pluck()
        .all() as string[],
      // The folder of this station's database; none for one in memory (tests).
      dataDir: name === '' || name === ':memory:' ? null : resolve(dirname(name)),
    };
  }

  /**
   * The storage folders and the data dir inside watched folders by real path: a link can hide
   * them from the paths as written. Waits at most REAL_PATHS_MS (a share that hangs), keeping
   * the paths as written meanwhile.
   */
  private async guardStorage(): Promise<void> {
    const instruments = this.instruments;
    await this.leftOut.findByRealPath(this.leftOutPaths(), () => this.instruments === instruments);
  }

  private instrument(id: number): Instrument | undefined {
    return this.instruments.find((i) => i.id === id);
  }

  /** Finishes or cleans up what a crash interrupted; nothing is transferred before it is done. */
  private async recover(): Promise<void> {
    this.pool ??= new CopyPool(this.concurrency());
    // A station with nothing to harvest keeps no idle threads; one configured later starts
    // its workers on demand.
    if (this.instruments.length) this.pool.warm();
    // The folders the interrupted attempts made: taken back once every partial is gone.
    const made = new Set<string>();
    try {
      for (const file of interruptedFiles(this.db)) {
        if (this.stopped) return;
        try {
          const instrument = this.instrument(file.instrument_id);
          await recoverInterrupted(this.transfers.deps, file, instrument, made);
          // A verified copy that had reached its name is recorded now: this run's, for --once.
          if (this.run && fileById(this.db, file.id)?.state === 'done') this.run.completed += 1;
        } catch (error) {
          // Left marked: tried again before this file's next transfer (transferQueue.ts).
          this.log.error({ err: error, file: file.source_path }, 'harvest: recovery failed');
        }
      }
    } finally {
      await takeBackMade(made);
    }
    this.transfers.start();
  }

  /**
   * The watch of every watched folder renewed (watches.ts renew), every WATCH_CHECK_MS: a
   * folder that appears (a share mounted late at boot) is watched within seconds, not at the
   * next walk. One check at a time: a share that hangs holds one of libuv's threads, not all
   * of them.
   */
  private async renewWatches(): Promise<void> {
    if (this.checkingWatches || this.stopped) return;
    this.checkingWatches = true;
    try {
      // A bundle imported into this data dir while the station runs (`labstation import`):
      // its instruments, watches, hooks and schedules take effect now, not at the next start.
      const imported = getSetting(this.db, 'harvest.importedAt');
      if (imported !== this.importedAt) {
        this.importedAt = imported;
        this.log.info('harvest: configuration imported; applying it');
        await this.rescanNow();
        return;
      }
      await this.watches.renewAll(this.instruments);
    } finally {
      this.checkingWatches = false;
    }
  }

  /** Runs the queued harvest runs one after the other (a trigger from the server, a schedule). */
  runQueued(): void {
    this.runs.runQueued();
  }

  /** A full harvest of one instrument: walk its folders and retry its failed files now. */
  harvestInstrument(instrumentId: number): Promise<void> {
    return this.walks.harvestInstrument(instrumentId);
  }

  /** Walks every folder of every instrument, then queues the transfers due. */
  rescanAll(): Promise<void> {
    return this.walks.rescanAll();
  }

  /**
   * Whether this instrument (this configuration of it) is harvested here now: work begun for
   * it before a stop or a reload of the configuration is dropped, or looked at anew.
   */
  private harvests(instrument: Instrument): boolean {
    return !this.stopped && this.instruments.includes(instrument);
  }

  /** The service worker's lstat of many files (copyPool.ts stat); in this thread without one. */
  private statAll(): StatAll | undefined {
    const pool = this.pool;
    return pool ? (paths) => pool.stat(paths) : undefined;
  }

  private queueDue(includeWaiting = false): void {
    if (this.stopped) return;
    const ids = this.instruments.map((i) => i.id);
    for (const id of dueFileIds(this.db, this.now(), ids, includeWaiting)) {
      this.transfers.enqueue(id);
    }
    this.transfers.pump();
  }

  /** Tells the UIs, at most a few times a second. */
  private changed(): void {
    if (this.changeTimer || !this.options.emit) return;
    this.changeTimer = setTimeout(() => {
      this.changeTimer = undefined;
      this.options.emit?.({ type: 'harvest.changed' });
    }, 200);
    this.changeTimer.unref();
  }

  private checkIdle(): void {
    if (this.stability.size || this.transfers.busy) return;
    if (this.intake.comparing) return;
    if (this.stability.checking || this.walks.busy) return;
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  /**
   * `labstation harvest --once`: walk every folder, transfer everything that is or becomes
   * stable (failed files are tried once more now), and report what this run did.
   */
  async runOnce(): Promise<RunSummary> {
    this.run = { completed: 0, skipped: 0, failed: 0, unreachable: [], unstable: [] };
    this.stopped = false;
    this.intake.startedAt = this.clock();
    this.lock.takeNow();
    let tick: NodeJS.Timeout | undefined;
    // Everything after the lock is inside the try: an error (a full disk, a busy database)
    // must still end the copy workers and release the lock, or the command would never exit.
    try {
      this.loadInstruments();
      await this.recover();
      await this.guardStorage();
      cachedStatement(
        this.db,
        `UPDATE harvest_files SET next_attempt_at = ? WHERE state = 'failed'`,
      ).run(this.now());
      tick = setInterval(() => void this.stability.check(), tickMs(this.instruments));
      const idle = new Promise<void>((resolve) => this.idleWaiters.push(resolve));
      await this.rescanAll();
      this.walked = true;
      this.checkIdle();
      await idle;
      return this.run;
    } finally {
      clearInterval(tick);
      this.run = null;
      this.walked = false;
      await this.stop();
    }
  }

  /**
   * Re-reads the configuration and walks every folder now. One at a time: two at once (the
   * server's configuration, an import, a Rescan) would each start watches, and the first set
   * would never be closed.
   */
  rescanNow(): Promise<void> {
    const next = this.rescanning.then(() => this.reload());
    this.rescanning = next.catch(() => undefined);
    return next;
  }

  private async reload(): Promise<void> {
    await this.starting;
    if (this.stopped || this.lock.problem !== null) return;
    await this.watches.close();
    if (this.stopped) return; // stopped meanwhile: start nothing again
    this.sightings.forget();
    this.schedules.stop();
    this.loadInstruments();
    await this.guardStorage();
    if (this.stopped) return;
    if (this.options.watch !== false) this.watches.start(this.instruments);
    if (this.options.schedules !== false) {
      this.schedules.start(this.instruments.map((i) => i.id));
    }
    await this.rescanAll();
  }

  retry(fileId: number): void {
    this.instrumentsBeforeStart();
    // A file of an instrument waiting for its history keeps the ARK the server may still send:
    // trying it now would copy it under a record that the history then replaces.
    const instrumentId = fileById(this.db, fileId)?.instrument_id;
    const waiting = this.awaitingHistory.find((i) => i.id === instrumentId);
    if (waiting) throw new AppError('conflict', `${waiting.name}: ${HISTORY_PROBLEM}`);
    if (!retryNow(this.db, fileId)) {
      throw new AppError('conflict', `file ${fileId} has no failed transfer to retry`);
    }
    this.takeNow([fileId]);
  }

  /**
   * Retry all: every failed file of the instruments harvested here is due now (those of an
   * instrument waiting for its history wait for it). How many were failed.
   */
  retryAll(): number {
    this.instrumentsBeforeStart();
    const ids = retryAllNow(
      this.db,
      this.instruments.map((i) => i.id),
    );
    this.takeNow(ids);
    return ids.length;
  }

  /**
   * A Retry before the harvest has started (a station waits up to 5 s for the server's first
   * answer): the instruments are read as the start will read them, so the files are made due
   * now and taken when it starts; before, Retry all answered 0 and left them to their backoff.
   */
  private instrumentsBeforeStart(): void {
    if (this.stopped && this.intake.startedAt === 0) this.loadInstruments();
  }

  /** Files made due now by a Retry: queued at once. */
  private takeNow(ids: number[]): void {
    // Waiting for the lock: due now, and taken with the other due files once it is held.
    if (!ids.length || this.lock.problem !== null) return;
    for (const id of ids) this.transfers.enqueue(id);
    this.transfers.pump();
    this.changed();
  }

  status(): HarvestStatus {
    return {
      ...idleHarvestStatus(this.db, this.clock()),
      running: !this.stopped && this.lock.problem === null && this.instruments.length > 0,
      problem: this.lock.problem,
      instruments: [
        ...this.instruments.map((i) => ({ i, waiting: false })),
        ...this.awaitingHistory.map((i) => ({ i, waiting: true })),
      ].map(({ i, waiting }) => ({
        name: i.name,
        watch: i.watch.map((w) => w.path),
        storage: i.storage_location
          ? `${i.storage_location.name} (${i.storage_location.base_path})`
          : null,
        problem: waiting ? HISTORY_PROBLEM : this.walks.problemOf(i.id),
        waiting_for_history: waiting,
      })),
      // Handed to the copy pool but waiting for a copy slot: queued, not under way.
      active: this.transfers.copying(),
      settling: this.stability.size,
      settling_files: this.stability.settlingFiles(),
      queued: this.transfers.waiting(),
      retriable: countRetriable(
        this.db,
        this.instruments.map((i) => i.id),
        this.transfers.ids(),
      ),
      last_scan_at: this.walks.lastAt,
    };
  }
}
