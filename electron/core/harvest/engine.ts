/**
 * The station's harvest engine: discover (watcher + periodic full walk) -> stable (size and
 * mtime unchanged for the instrument's window, and the file opens: stability.ts) -> record (ARK
 * minted) -> transfer (transferQueue.ts: a bounded number at once, in copy workers) -> outbox.
 *
 * The Harvester owns the parts and says when each works: the walks (walks.ts) and the watches
 * (watches.ts, whose reports sightings.ts looks at) find files of the instruments harvested
 * (harvested.ts); the intake (intake.ts) makes them candidates and records those the stability
 * check finds stable; the transfer queue copies them; the run queue (runQueue.ts) runs the
 * harvests asked for. Here: start and stop (with the lock, lockHolder.ts, the recovery of what
 * a crash interrupted, recovery.ts, and the timers of a running station, timers.ts), a one-shot
 * run, a reload of the configuration, Retry (retries.ts), and the status.
 */
import { setMaxListeners } from 'node:events';
import type { TransferStatus } from '../../../shared/harvest/management.js';
import type { CoreEvent, HarvestStatus } from '../../../shared/api.js';
import type { Db } from '../db/open.js';
import { cachedStatement } from '../db/statements.js';
import { getSetting } from '../station/settings.js';
import { injected } from '../util/failpoint.js';
import { monotonicMs } from '../util/clock.js';
import { nowIso } from '../util/ids.js';
import type { Logger } from '../util/log.js';
import type { Instrument } from './config.js';
import { requeueInterruptedRuns } from './runs.js';
import { CopyPool } from './copyPool.js';
import { acceptHooks, endRunningHooks, HarvestStopped } from './commandHook.js';
import { Intake, type IntakeHost } from './intake.js';
import { LateSidecars } from './lateSidecars.js';
import { HarvestedInstruments } from './harvested.js';
import { RunQueue, type RunQueueHost } from './runQueue.js';
import { ScheduleCrons } from './scheduleCrons.js';
import { Sightings, type SightingsHost } from './sightings.js';
import { HarvestLockHolder } from './lockHolder.js';
import type { StatAll } from './discover.js';
import { dueFileIds, countRetriable } from './due.js';
import { idleHarvestStatus, instrumentsStatus } from './status.js';
import { recoverAllInterrupted } from './recovery.js';
import { Retries } from './retries.js';
import { candidateKey, StabilityChecks, tickMs } from './stability.js';
import { HarvestTimers } from './timers.js';
import { TransferQueue } from './transferQueue.js';
import { Walks, type WalksHost } from './walks.js';
import { FolderWatches, type WatchesHost } from './watches.js';
import type { UploadAgainResult } from './uploadAgain.js';

export interface HarvesterOptions {
  db: Db;
  log: Logger;
  /** The station's tool: its enabled instruments are harvested. */
  tool: () => string | null;
  emit?: (event: CoreEvent) => void;
  /** The wall clock: the times recorded. */
  clock?: () => number;
  /**
   * The clock that measures waits (stability windows, a run's wait for its files, how long a
   * folder's listing is kept): it should only go forward, so that the PC's time set back or on
   * does not hold files or take them early. By default util/clock.ts monotonicMs, or `clock`
   * when a test gives only that.
   */
  elapsed?: () => number;
  /** Watch folders between rescans (watchers.ts; off for one-shot runs). */
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
  /** Files, each counted by its last end in the run (one that failed, then completed: completed). */
  completed: number;
  skipped: number;
  failed: number;
  /** Each file's last end so far, which the counts are made from when the run ends. */
  ends: Map<number, TransferStatus>;
  /**
   * Files whose attempt crashed in the run (a flush that failed after the copy got its name):
   * not taken again in it, so the count does not hang on whether a tick or a walk queued them
   * before the run ended. Their markers are settled first by their next attempt (recovery.ts).
   */
  crashed: Set<number>;
  /** Folders that could not be walked, with the reason. */
  unreachable: string[];
  /**
   * Files that kept changing, or could not be opened for reading (`openError`, an errno code),
   * for the whole run: left for the next.
   */
  unstable: { path: string; openError: string | null }[];
}

/**
 * The controller of a harvest's stop signal: every upload request and pause under way listens
 * to it (up to harvest.concurrency times four at once), past the 10 listeners after which Node
 * warns of a leak.
 */
function stopController(): AbortController {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  return controller;
}

/** The test fault harvest.accept-fails-once fails the first recording of stable files. */
let acceptFailedOnce = false;

export class Harvester {
  private readonly db: Db;
  private readonly log: Logger;
  private readonly clock: () => number;
  private readonly elapsed: () => number;
  private pool: CopyPool | null = null;
  /** The instruments harvested, and what their harvest leaves out (harvested.ts). */
  private readonly harvested: HarvestedInstruments;
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
  /** Retry and Retry all (retries.ts). */
  private readonly retries: Retries;
  /** Sidecars harvested after their file's transfer, merged into its record (lateSidecars.ts). */
  private readonly lateSidecars: LateSidecars;
  /** The rescanNow under way, if any (they run one after the other). */
  private rescanning: Promise<void> = Promise.resolve();
  /** The schedules' timers, while harvesting with schedules. */
  private readonly schedules: ScheduleCrons;
  /** The ticks, walks and renewals of a station's harvest while it runs (timers.ts). */
  private readonly timers: HarvestTimers;
  /** A one-shot run has walked every folder: candidates no longer wait without end. */
  private walked = false;
  /** Files whose source went away during their copy (TransferHost.movedAway), since the start. */
  private movedAway = 0;
  /** The harvest lock, taken at the start, or waited for (lockHolder.ts). */
  private readonly lock: HarvestLockHolder;
  private stopped = true;
  /** Aborted by stop (TransferDeps.stopSignal); a new one at each start. */
  private stopping = stopController();
  private idleWaiters: (() => void)[] = [];
  private run: RunSummary | null = null;
  private changeTimer: NodeJS.Timeout | undefined;
  private starting: Promise<void> | null = null;
  /** Transfers whose file is being uploaded again, or waits to be (uploadAgain). */
  private readonly uploadingAgain = new Set<string>();
  /** The last upload again queued: they go one at a time. */
  private uploadAgainTurn: Promise<void> = Promise.resolve();

  constructor(private readonly options: HarvesterOptions) {
    this.db = options.db;
    this.log = options.log;
    this.clock = options.clock ?? Date.now;
    this.elapsed = options.elapsed ?? options.clock ?? monotonicMs;
    this.harvested = new HarvestedInstruments(this.db, this.log);
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
        leftForNextRun: (key) => this.intake.leftForNextRun.add(key),
        movedAway: () => (this.movedAway += 1),
        queueDue: () => this.queueDue(),
        checkIdle: () => this.checkIdle(),
        changed: () => this.changed(),
      },
      this.log,
      this.elapsed,
      this.clock,
    );
    this.transfers = new TransferQueue(this.db, this.log, this.clock, {
      stopped: () => this.stopped,
      stopSignal: () => this.stopping.signal,
      pool: () => this.pool,
      instrument: (id) => this.harvested.byId(id),
      watchedIn: (base) => this.harvested.leftOut.watchedIn(base),
      runEnds: () => this.run?.ends ?? null,
      runCrashed: () => this.run?.crashed ?? null,
      movedAway: () => (this.movedAway += 1),
      consider: (instrument, folder, path, size, mtimeMs, known) =>
        this.intake.consider(instrument, folder, path, size, mtimeMs, undefined, known.recordedAt),
      heldBack: (instrument, file) => {
        const key = candidateKey(instrument, file.source_path);
        return (
          this.intake.leftForNextRun.has(key) ||
          this.stability.settlesAnew(key, file.size, file.mtime_ms)
        );
      },
      changed: () => this.changed(),
      checkIdle: () => this.checkIdle(),
    });
    // What the parts below ask of the engine, in one object: each names its part in its Host.
    const host: IntakeHost & SightingsHost & WalksHost & WatchesHost & RunQueueHost = {
      stopped: () => this.stopped,
      harvests: (instrument) => this.harvests(instrument),
      instruments: () => this.harvested.list,
      instrument: (id) => this.harvested.byId(id),
      awaitingHistory: () => this.harvested.awaitingHistory,
      pool: () => this.pool,
      statAll: () => this.statAll(),
      filterOf: (folder) => this.harvested.leftOut.filterOf(folder),
      linkedTo: (folder) => this.harvested.linkedTo(folder),
      renewWatch: (instrument, folder) => this.watches.renew(instrument, folder),
      rescan: (instrument) => this.walks.rescan(instrument),
      run: () => this.run,
      queueDue: (includeWaiting) => this.queueDue(includeWaiting),
      starting: () => this.starting,
      rescanning: () => this.rescanning,
      waitsForLock: () => this.lock.problem !== null,
      changed: () => this.changed(),
      checkIdle: () => this.checkIdle(),
      sidecarsNoted: () => this.lateSidecars.recount(),
    };
    this.timers = new HarvestTimers(this.db, this.log, {
      stopped: () => this.stopped,
      check: () => this.stability.check(),
      rescan: () => this.harvested.guardStorage().then(() => this.rescanAll()),
      reload: () => this.rescanNow(),
      renewWatches: () => this.watches.renewAll(this.harvested.list),
    });
    this.lateSidecars = new LateSidecars(this.db, this.log, {
      stopped: () => this.stopped,
      transferring: (id) => this.transfers.handles(id),
      instrumentName: (id) => this.harvested.byId(id)?.name ?? null,
      changed: () => this.changed(),
      checkIdle: () => this.checkIdle(),
    });
    const { db, log, clock, elapsed, stability, transfers } = this;
    this.intake = new Intake(db, log, clock, stability, transfers, host);
    this.sightings = new Sightings(log, elapsed, stability, transfers, this.intake, host);
    this.walks = new Walks(db, log, clock, stability, this.intake, host);
    this.watches = new FolderWatches(log, this.sightings, host);
    this.runs = new RunQueue(
      db,
      log,
      clock,
      elapsed,
      this.walks,
      this.intake,
      stability,
      transfers,
      host,
    );
    this.retries = new Retries(db, this.harvested, transfers, {
      notStarted: () => this.stopped && this.intake.startedAt === 0,
      tool: () => this.options.tool(),
      waitsForLock: () => this.lock.problem !== null,
      changed: () => this.changed(),
    });
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
    if (this.stopping.signal.aborted) this.stopping = stopController();
    acceptHooks();
    this.intake.startedAt = this.clock();
    this.intake.walkedSinceStart.clear();
    this.timers.importSeen();
    this.harvested.load(this.options.tool());
    if (!this.lock.take()) return;
    await this.recover();
    await this.harvested.guardStorage();
    if (this.stopped) return;
    if (this.options.watch !== false) this.watches.start(this.harvested.list);
    if (this.options.schedules !== false) {
      this.schedules.start(this.harvested.ids());
    }
    this.timers.start(this.harvested.list);
    requeueInterruptedRuns(this.db);
    await this.rescanAll();
    this.runQueued();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    // A command hook under way would hold the stop for up to its timeout, and no new one
    // starts: the file's copy is recorded, its hooks run again, at the next start.
    endRunningHooks('the harvest was stopped');
    // An upload under way ends too: against a server that sends nothing, its retries would
    // hold the process for minutes after the stop (the file is sent at the next start).
    this.stopping.abort(new HarvestStopped('the harvest was stopped'));
    this.lock.stopWaiting();
    await this.starting?.catch(() => undefined);
    this.starting = null;
    this.timers.stop();
    this.stability.stop();
    this.schedules.stop();
    await this.watches.close();
    this.sightings.forget();
    // A merge under way reads a sidecar (4 MiB at most) and commits; the rest wait for a start.
    await this.lateSidecars.ended();
    // Transfers under way end with the pool; their partials are cleaned up at the next start.
    await this.transfers.flushPlaced();
    await this.pool?.close();
    this.pool = null;
    this.transfers.poolClosed();
    this.lock.release();
  }

  /** Finishes or cleans up what a crash interrupted; nothing is transferred before it is done. */
  private async recover(): Promise<void> {
    this.pool ??= new CopyPool(this.concurrency());
    // A station with nothing to harvest keeps no idle threads; one configured later starts
    // its workers on demand.
    if (this.harvested.list.length) this.pool.warm();
    const recovered = await recoverAllInterrupted(
      this.transfers.deps,
      (id) => this.harvested.byId(id),
      () => this.stopped,
      () => this.run?.ends ?? null,
    );
    if (recovered) this.transfers.start();
    // Sidecars noted before a stop or a crash, not merged yet.
    this.lateSidecars.recount();
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
    return !this.stopped && this.harvested.list.includes(instrument);
  }

  /** The service worker's lstat of many files (copyPool.ts stat); in this thread without one. */
  private statAll(): StatAll | undefined {
    const pool = this.pool;
    return pool ? (paths) => pool.stat(paths) : undefined;
  }

  private queueDue(includeWaiting = false): void {
    if (this.stopped) return;
    const ids = this.harvested.ids();
    const setBack = this.transfers.latestRetryAt();
    for (const id of dueFileIds(this.db, this.now(), ids, includeWaiting, setBack)) {
      this.transfers.enqueue(id);
    }
    this.transfers.pump();
  }

  /**
   * Tells the UIs, at most a few times a second. Also what a transfer's end may let go on: a
   * sidecar that came late merges into its record once that record's transfer is over.
   */
  private changed(): void {
    this.lateSidecars.wake();
    if (this.changeTimer || !this.options.emit) return;
    this.changeTimer = setTimeout(() => {
      this.changeTimer = undefined;
      this.options.emit?.({ type: 'harvest.changed' });
    }, 200);
    this.changeTimer.unref();
  }

  private checkIdle(): void {
    if (this.stability.size || this.transfers.busy) return;
    if (this.intake.comparing || this.lateSidecars.busy) return;
    if (this.stability.checking || this.walks.busy) return;
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  /**
   * `labstation harvest --once`: walk every folder, transfer everything that is or becomes
   * stable (failed files are tried once more now), and report what this run did.
   */
  async runOnce(): Promise<RunSummary> {
    this.run = {
      completed: 0,
      skipped: 0,
      failed: 0,
      ends: new Map(),
      crashed: new Set(),
      unreachable: [],
      unstable: [],
    };
    this.stopped = false;
    this.intake.startedAt = this.clock();
    this.intake.walkedSinceStart.clear();
    this.lock.takeNow();
    let tick: NodeJS.Timeout | undefined;
    // Everything after the lock is inside the try: an error (a full disk, a busy database)
    // must still end the copy workers and release the lock, or the command would never exit.
    try {
      this.harvested.load(this.options.tool());
      await this.recover();
      await this.harvested.guardStorage();
      cachedStatement(
        this.db,
        `UPDATE harvest_files SET next_attempt_at = ? WHERE state = 'failed'`,
      ).run(this.now());
      tick = setInterval(() => void this.stability.check(), tickMs(this.harvested.list));
      // A file renamed during its copy (an instrument that writes a name, then renames it) is
      // a new file under its new name, which the walk may have passed: walked again until no
      // more go away (a few times at most), so that this run takes it.
      // Files given up on as still changing are not waited for again, and what a walk could
      // not reach is said once.
      this.intake.leftForNextRun.clear();
      for (let walks = 0; walks < 4; walks += 1) {
        const movedBefore = this.movedAway;
        const idle = new Promise<void>((resolve) => this.idleWaiters.push(resolve));
        this.walked = false;
        this.run.unreachable.length = 0;
        // A file found by a later walk was written before the run as much as in the first.
        this.intake.walkedSinceStart.clear();
        await this.rescanAll();
        this.walked = true;
        this.checkIdle();
        await idle;
        if (this.movedAway === movedBefore) break;
      }
      for (const status of this.run.ends.values()) this.run[status] += 1;
      return this.run;
    } finally {
      // However the run ends: what it gave up is the next run's to decide on.
      this.intake.leftForNextRun.clear();
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
    this.harvested.load(this.options.tool());
    await this.harvested.guardStorage();
    if (this.stopped) return;
    if (this.options.watch !== false) this.watches.start(this.harvested.list);
    if (this.options.schedules !== false) {
      this.schedules.start(this.harvested.ids());
    }
    await this.rescanAll();
  }

  /** Retry: a failed file made due now and queued at once (retries.ts). */
  retry(fileId: number): { held: boolean } {
    return this.retries.retry(fileId);
  }

  /**
   * Uploads again a file the server lost the upload of, for the transfer record that says it
   * is there (uploadAgain.ts); one upload at a time, a transfer asked for again meanwhile
   * answered `busy`.
   */
  async uploadAgain(transferUuid: string): Promise<UploadAgainResult> {
    if (this.uploadingAgain.has(transferUuid)) {
      return { ok: false, reason: 'it is being sent again already', busy: true };
    }
    this.uploadingAgain.add(transferUuid);
    // One at a time: a restored server refuses every lost transfer within seconds, and their
    // files would all stream to it at once, past harvest.concurrency.
    const turn = this.uploadAgainTurn.then(() => this.uploadAgainNow(transferUuid));
    this.uploadAgainTurn = turn.then(
      () => undefined,
      () => undefined,
    );
    try {
      return await turn;
    } finally {
      this.uploadingAgain.delete(transferUuid);
    }
  }

  private async uploadAgainNow(transferUuid: string): Promise<UploadAgainResult> {
    const pool = this.pool;
    if (this.stopped || !pool) return { ok: false, reason: 'the harvest is not running' };
    // Loaded when needed, as transfer.ts loads the upload.
    const { uploadAgain } = await import('./uploadAgain.js');
    return await uploadAgain(
      this.db,
      {
        db: this.db,
        log: this.log,
        hash: (path, started) => pool.hash(path, started),
        progress: () => undefined,
        signal: this.stopping.signal,
      },
      transferUuid,
    );
  }

  /** Retry all: every failed file made due now; how many were failed (retries.ts). */
  retryAll(): number {
    return this.retries.retryAll();
  }

  status(): HarvestStatus {
    return {
      ...idleHarvestStatus(this.db, this.clock()),
      running: !this.stopped && this.lock.problem === null && this.harvested.list.length > 0,
      started: !this.stopped,
      problem: this.lock.problem,
      instruments: instrumentsStatus(this.harvested.list, this.harvested.awaitingHistory, (id) =>
        this.walks.problemOf(id),
      ),
      // Handed to the copy pool but waiting for a copy slot: queued, not under way.
      active: this.transfers.copying(),
      settling: this.stability.size,
      settling_files: this.stability.settlingFiles(),
      queued: this.transfers.waiting(),
      retriable: countRetriable(this.db, this.harvested.ids(), this.transfers.ids()),
      last_scan_at: this.walks.lastAt,
    };
  }
}
