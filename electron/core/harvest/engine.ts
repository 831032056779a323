/**
 * The station's harvest engine: discover (watcher + periodic full walk) -> stable (size and
 * mtime unchanged for the instrument's window, and the file opens: stability.ts) -> record (ARK
 * minted) -> transfer (transferQueue.ts: a bounded number at once, in copy workers) -> outbox.
 */
import { basename, dirname, resolve } from 'node:path';
import type { CoreEvent, HarvestStatus } from '../../../shared/api.js';
import type { Db } from '../db/open.js';
import { cachedStatement } from '../db/statements.js';
import { getSetting } from '../station/settings.js';
import { AppError } from '../util/errors.js';
import { injected } from '../util/failpoint.js';
import { nowIso } from '../util/ids.js';
import type { Logger } from '../util/log.js';
import { HISTORY_PROBLEM, historyPendingIds } from '../sync/history.js';
import { instrumentsOfTool, type Instrument, type WatchFolder } from './config.js';
import {
  finishRun,
  queuedRuns,
  requeueInterruptedRuns,
  runCounts,
  startRun,
  type RunRow,
} from './runs.js';
import { listFiles, statFiles } from './copyBatch.js';
import { HASH_ALGORITHM } from './copy.js';
import { CopyPool } from './copyPool.js';
import { acceptHooks, endRunningHooks } from './hooks.js';
import { LeftOutFolders, type LeftOutPaths } from './leftOut.js';
import { RecentListings } from './listings.js';
import { ScheduleCrons } from './scheduleCrons.js';
import { usageOnToolAt } from './usageContext.js';
import { takeHarvestLock, type HarvestLock } from './lock.js';
import {
  folderIdentity,
  relativeTo,
  scanFolder,
  statFound,
  watchFolder,
  type FolderFilter,
  type FolderWatch,
  type FoundFile,
  type StatAll,
} from './discover.js';
import {
  arkConfig,
  dueFileIds,
  fileById,
  interruptedFiles,
  keepRecords,
  knownSources,
  latestBySource,
  recordFile,
  requeueFile,
  retryAllNow,
  countRetriable,
  retryNow,
  idleHarvestStatus,
  indexPaths,
  type FileRow,
} from './records.js';
import { describeError, recoverInterrupted } from './transfer.js';
import { candidateKey, StabilityChecks, tickMs, WAKE_GAP_MS, type Candidate } from './stability.js';
import { TransferQueue } from './transferQueue.js';

/** Paths the watcher reported in one watched folder, not looked at yet (Harvester.sighted). */
interface Sightings {
  instrument: Instrument;
  filter: FolderFilter;
  paths: Set<string>;
  folders: Set<string>;
}

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

/** How often a station waiting for the harvest lock tries it again. */
const LOCK_RETRY_MS = 5000;

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

/** A record waiting for its transfer with the size and mtime the candidate has. */
function sameWaiting(record: FileRow, c: { size: number; mtimeMs: number }): boolean {
  return record.state === 'waiting' && record.size === c.size && record.mtime_ms === c.mtimeMs;
}

/** Folders listed per request to the service worker (Harvester.lookAtSightings). */
const LIST_GROUP = 4;

/** A folder the watcher reports is read again this long after (Harvester.folderSighted). */
const FOLDER_SETTLE_MS = 1000;
/** How often a harvest run checks whether its instrument's files have settled. */
const RUN_SETTLE_POLL_MS = 250;

/** How often the watched folders are checked for one that appeared or was replaced. */
const WATCH_CHECK_MS = 5_000;

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

/** The test fault harvest.accept-fails-once fails the first recording of stable files. */
let acceptFailedOnce = false;

export class Harvester {
  private readonly db: Db;
  private readonly log: Logger;
  private readonly clock: () => number;
  private pool: CopyPool | null = null;
  private instruments: Instrument[] = [];
  private readonly problems = new Map<number, string>();
  /** The files found, until they are stable (stability.ts). */
  private readonly stability: StabilityChecks;
  /** The recorded files waiting for their transfer, and those under way (transferQueue.ts). */
  private readonly transfers: TransferQueue;
  private readonly sightings = new Map<WatchFolder, Sightings>();
  /** The second listings of new folders (folderSighted), ended with the watches. */
  private readonly relists = new Set<NodeJS.Timeout>();
  /**
   * The latest listing of each folder the watcher reported, for a few seconds: the next listing
   * of the folder skips what it held unchanged (listings.ts).
   */
  private readonly listings: RecentListings;
  private lookingAtSightings = false;
  /** The storage folders and the data dir inside watched folders, left out of their harvest. */
  private readonly leftOut: LeftOutFolders;
  /**
   * Sources whose content is being compared with their record (recheck), by candidateKey: a
   * file found again with its size but a new mtime.
   */
  private readonly rechecks = new Map<string, { again: boolean }>();
  /**
   * The records each walk under way took at its start (knownSources), by instrument, kept up
   * to date as files are recorded: a walk that runs while the watcher's files are recorded (the
   * walk after a burst of events) would otherwise take every file recorded since it began for
   * a new one, and check and record it again.
   */
  private readonly walkKnown = new Map<number, Set<ReturnType<typeof knownSources>>>();
  private readonly watches = new Map<WatchFolder, FolderWatch>();
  private checkingWatches = false;
  /** The rescanNow under way, if any (they run one after the other). */
  private rescanning: Promise<void> = Promise.resolve();
  /** harvest.importedAt as this harvester last applied it (renewWatches). */
  private importedAt: string | null = null;
  /** The schedules' timers, while harvesting with schedules. */
  private readonly schedules: ScheduleCrons;
  /** Enabled instruments not harvested until their history is here (loadInstruments). */
  private awaitingHistory: Instrument[] = [];
  private runChain: Promise<void> = Promise.resolve();
  private timers: NodeJS.Timeout[] = [];
  /** A one-shot run has walked every folder: candidates no longer wait without end. */
  private walked = false;
  private startedAt = 0;
  private lock: HarvestLock | null = null;
  /** Why this harvester waits instead of harvesting: another one holds the lock. */
  private lockProblem: string | null = null;
  private lockRetry: NodeJS.Timeout | undefined;
  /** Walks under way: a one-shot run is not done while a folder is still being walked. */
  private scanning = 0;
  private stopped = true;
  private lastScanAt: string | null = null;
  private idleWaiters: (() => void)[] = [];
  private run: RunSummary | null = null;
  private changeTimer: NodeJS.Timeout | undefined;
  private starting: Promise<void> | null = null;

  constructor(private readonly options: HarvesterOptions) {
    this.db = options.db;
    this.log = options.log;
    this.clock = options.clock ?? Date.now;
    this.leftOut = new LeftOutFolders(this.log);
    this.listings = new RecentListings(this.clock, 3 * FOLDER_SETTLE_MS);
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
          this.accept(stable);
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
        this.consider(instrument, folder, path, size, mtimeMs),
      changed: () => this.changed(),
      checkIdle: () => this.checkIdle(),
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
    acceptHooks();
    this.startedAt = this.clock();
    this.importedAt = getSetting(this.db, 'harvest.importedAt');
    this.loadInstruments();
    if (!this.takeLock()) return;
    await this.recover();
    await this.guardStorage();
    if (this.stopped) return;
    if (this.options.watch !== false) this.startWatches();
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

  /**
   * Takes the harvest lock. False while another harvest holds it and this harvester waits
   * (waitForLock): it tries again every LOCK_RETRY_MS, and its status says why it waits.
   */
  private takeLock(): boolean {
    if (!this.options.lockFile) return true;
    try {
      this.lock = takeHarvestLock(this.options.lockFile);
    } catch (error) {
      if (!this.options.waitForLock) throw error;
      if (!(error instanceof AppError) || error.code !== 'conflict') {
        // Not another harvest: nothing to wait for (a data dir that cannot be written).
        this.setLockProblem(`the harvest cannot start: ${(error as Error).message}`);
        throw error;
      }
      if (this.lockProblem === null) this.log.warn({ err: error }, 'harvest: waiting for the lock');
      this.setLockProblem(
        `${error.message.split(';')[0]} (a \`labstation harvest --once\`?); ` +
          'this station starts harvesting as soon as it ends',
      );
      this.lockRetry = setTimeout(() => {
        this.lockRetry = undefined;
        if (this.stopped) return;
        this.start().catch((e: unknown) => this.log.error({ err: e }, 'harvest did not start'));
      }, LOCK_RETRY_MS);
      return false;
    }
    if (this.lockProblem !== null) this.log.info('harvest: took the lock, harvesting');
    this.setLockProblem(null);
    return true;
  }

  private setLockProblem(problem: string | null): void {
    if (problem === this.lockProblem) return;
    this.lockProblem = problem;
    this.changed();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    // A command hook under way would hold the stop for up to its timeout, and no new one
    // starts: the file's copy is recorded, its hooks run again, at the next start.
    endRunningHooks('the harvest was stopped');
    clearTimeout(this.lockRetry);
    this.lockRetry = undefined;
    this.lockProblem = null;
    await this.starting?.catch(() => undefined);
    this.starting = null;
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    this.stability.stop();
    this.schedules.stop();
    await this.closeWatches();
    this.forgetSightings();
    // Transfers under way end with the pool; their partials are cleaned up at the next start.
    await this.transfers.flushPlaced();
    await this.pool?.close();
    this.pool = null;
    this.transfers.poolClosed();
    this.lock?.release();
    this.lock = null;
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

  /** A watched folder's filter, with the storage folders and the data dir inside it left out. */
  private filterOf(folder: WatchFolder): FolderFilter {
    return this.leftOut.filterOf(folder);
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
    for (const file of interruptedFiles(this.db)) {
      if (this.stopped) return;
      try {
        await recoverInterrupted(this.transfers.deps, file, this.instrument(file.instrument_id));
        // A verified copy that had reached its name is recorded now: this run's, for --once.
        if (this.run && fileById(this.db, file.id)?.state === 'done') this.run.completed += 1;
      } catch (error) {
        // Left marked: tried again before this file's next transfer (transferQueue.ts).
        this.log.error({ err: error, file: file.source_path }, 'harvest: recovery failed');
      }
    }
    this.transfers.start();
  }

  private startWatches(): void {
    for (const instrument of this.instruments) {
      for (const folder of instrument.watch) this.watchOne(instrument, folder);
    }
  }

  private watchOne(instrument: Instrument, folder: WatchFolder): void {
    const filter = this.filterOf(folder);
    try {
      this.watches.set(
        folder,
        watchFolder(folder, filter, {
          onPath: (path) => this.sighted(instrument, folder, filter, { paths: [path] }),
          onFolder: (path) => this.folderSighted(instrument, folder, filter, path),
          onError: (error) =>
            this.log.warn({ err: error, folder: folder.path }, 'harvest: watcher error'),
          onBurst: () => void this.rescan(instrument),
          onReady: () => void this.rescan(instrument),
        }),
      );
    } catch (error) {
      this.log.warn({ err: error, folder: folder.path }, 'harvest: cannot watch folder');
    }
  }

  /**
   * renewWatch for every watched folder, every WATCH_CHECK_MS: a folder that appears (a share
   * mounted late at boot) is watched within seconds, not at the next walk. One check at a time:
   * a share that hangs holds one of libuv's threads, not all of them.
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
      for (const instrument of this.instruments) {
        for (const folder of instrument.watch) await this.renewWatch(instrument, folder);
      }
    } finally {
      this.checkingWatches = false;
    }
  }

  private async closeWatches(): Promise<void> {
    const watches = [...this.watches.values()];
    this.watches.clear();
    await Promise.all(watches.map((w) => w.close()));
  }

  /**
   * After a walk of `folder`: when what is there now is not what its watch was set up on (the
   * folder was missing at start, was replaced, or a share was mounted on it since), watch it
   * again. Until then only the walks every few minutes would find its new files. The new
   * watch walks the folder once it is up.
   */
  private async renewWatch(instrument: Instrument, folder: WatchFolder): Promise<void> {
    const watch = this.watches.get(folder);
    const watched = watch?.watched();
    if (!watch || watched === undefined || this.stopped) return;
    const now = await folderIdentity(folder.path);
    if (now === watched || this.stopped || this.watches.get(folder) !== watch) return;
    this.log.info({ folder: folder.path }, 'harvest: the watched folder appeared or was replaced');
    this.watchOne(instrument, folder);
    await watch.close();
  }

  /** Runs the queued harvest runs one after the other (a trigger from the server, a schedule). */
  runQueued(): void {
    this.runChain = this.runChain
      .then(async () => {
        await this.starting;
        // A configuration from the server that came with the run (an instrument made or turned
        // on just before its trigger) is applied first: the run would not find it otherwise.
        await this.rescanning;
        // Waiting for the lock: the runs stay queued, for when it is taken (begin).
        if (this.lockProblem !== null) return;
        for (const run of queuedRuns(this.db)) {
          if (this.stopped) return;
          await this.execute(run);
        }
      })
      .catch((error: unknown) => this.log.error({ err: error }, 'harvest: run failed'));
  }

  private async execute(run: RunRow): Promise<void> {
    // An instrument waiting for its history is not harvested yet: its run stays queued, and
    // runs once the history is here (the sync client then asks for the queued runs again).
    if (this.awaitingHistory.some((i) => i.id === run.instrument_id)) return;
    const startedAt = this.now();
    startRun(this.db, run.id, startedAt);
    this.changed();
    const instrument = this.instrument(run.instrument_id);
    if (!instrument) {
      finishRun(this.db, run.id, {
        state: 'failed',
        counts: { files_completed: 0, files_skipped: 0, files_failed: 0 },
        error: "the instrument is disabled, or not on this station's tool",
        now: this.now(),
      });
      return;
    }
    await this.harvestInstrument(instrument.id);
    // What this run's walk could not read (a folder not there, a share gone, a subfolder
    // without permission, a name that is not UTF-8): the run fails naming it, as `harvest
    // --once` exits 1, instead of reporting a clean run; its counts say what it did.
    const unread = this.problems.get(instrument.id) ?? null;
    const walkedAt = this.clock();
    const limitMs = getSetting(this.db, 'harvest.runTimeoutMinutes') * 60_000;
    // Done when the transfers have ended and what is left of this instrument's files are those
    // still changing long after the walk (a log written all day): they are left for the next
    // run, as `harvest --once` leaves them. Waiting for them would hold this run, and every
    // run queued behind it, until the run timeout.
    let settled = this.settledFor(instrument.id, walkedAt);
    while (settled === null && !this.stopped && this.clock() - walkedAt < limitMs) {
      await new Promise((resolve) => setTimeout(resolve, RUN_SETTLE_POLL_MS));
      settled = this.settledFor(instrument.id, walkedAt);
    }
    if (this.stopped) return; // left running: the next start runs it again
    const changing = settled?.length ?? 0;
    finishRun(this.db, run.id, {
      state: unread === null ? 'completed' : 'failed',
      counts: runCounts(this.db, instrument.id, startedAt),
      error:
        unread !== null
          ? `not everything in the watched folders could be read: ${unread}`
          : settled === null
            ? `files were still settling or being transferred after ${limitMs / 60_000} min; ` +
              'they are recorded by the harvest as it goes on'
            : changing > 0
              ? `${changing} file${changing === 1 ? ' was' : 's were'} still changing, left ` +
                `for the harvest to take when stable: ${settled.slice(0, 5).join(', ')}` +
                (changing > 5 ? ', ...' : '')
              : '',
      now: this.now(),
    });
    this.changed();
  }

  /**
   * Whether a run of `instrumentId` whose walk ended at `walkedAt` is done: null while walks,
   * checks or transfers are under way or a file of the instrument may still settle; else the
   * files of the instrument still changing (seen changing for ONCE_PATIENCE_WINDOWS windows,
   * at least 10 s, since the walk).
   */
  private settledFor(instrumentId: number, walkedAt: number): string[] | null {
    if (this.scanning || this.transfers.busy || this.rechecks.size) return null;
    return this.stability.changingFor(instrumentId, walkedAt);
  }

  /** A full harvest of one instrument: walk its folders and retry its failed files now. */
  async harvestInstrument(instrumentId: number): Promise<void> {
    const instrument = this.instrument(instrumentId);
    if (!instrument) return;
    cachedStatement(
      this.db,
      `UPDATE harvest_files SET next_attempt_at = ? WHERE instrument_id = ? AND state = 'failed'
           AND next_attempt_at IS NOT NULL`,
    ).run(this.now(), instrumentId);
    // Counted as a walk: a run waiting for the harvest to settle must not see it idle while
    // the folders are still being walked.
    this.scanning += 1;
    try {
      await this.rescan(instrument);
    } finally {
      this.scanning -= 1;
    }
    this.queueDue(true);
  }

  async rescanAll(): Promise<void> {
    this.scanning += 1;
    try {
      // The records made since the last walk join the path index in bulk, off the per-file
      // path; a search reads those made since as they are (records.ts indexPaths).
      try {
        indexPaths(this.db);
      } catch (error) {
        this.log.warn({ err: error }, 'harvest: the path index was not brought up to date');
      }
      for (const i of this.awaitingHistory)
        this.run?.unreachable.push(`${i.name}: ${HISTORY_PROBLEM}`);
      for (const instrument of this.instruments) await this.rescan(instrument);
      this.lastScanAt = this.now();
      this.changed();
    } finally {
      this.scanning -= 1;
    }
    this.queueDue(true);
  }

  private async rescan(instrument: Instrument): Promise<void> {
    if (this.stopped) return;
    const known = knownSources(this.db, instrument.id);
    let walks = this.walkKnown.get(instrument.id);
    if (!walks) this.walkKnown.set(instrument.id, (walks = new Set()));
    walks.add(known);
    try {
      await this.walk(instrument, known);
    } finally {
      walks.delete(known);
      if (!walks.size) this.walkKnown.delete(instrument.id);
    }
  }

  private async walk(
    instrument: Instrument,
    known: ReturnType<typeof knownSources>,
  ): Promise<void> {
    // Tests: a walk still under way while the watcher's files are recorded.
    if (injected('harvest.slow-walk')) {
      this.log.warn({ instrument: instrument.name }, 'harvest: walk held for 3 s (injected)');
      await new Promise((resolve) => setTimeout(resolve, 3000));
    }
    const problems: string[] = [];
    for (const folder of instrument.watch) {
      // Each folder's files are considered as the walk reaches them, so the ticks (every
      // tickMs) check and copy them while the rest of the tree is walked.
      const take = (found: FoundFile[]): void => {
        if (!this.stopped) this.take(instrument, folder, found, (path) => known.get(path));
      };
      try {
        await this.renewWatch(instrument, folder);
        const unread = await scanFolder(
          folder,
          this.filterOf(folder),
          take,
          this.statAll(),
          () => this.stopped,
        );
        for (const u of unread) {
          problems.push(
            u.name
              ? `${u.path}: not harvested: ${describeError(u.error)}`
              : `${u.path}: cannot be read, its files are not harvested: ${describeError(u.error)}`,
          );
        }
      } catch (error) {
        problems.push(`${folder.path}: cannot be read: ${describeError(error)}`);
        continue;
      }
      if (this.stopped) return;
    }
    if (problems.length) {
      this.problems.set(instrument.id, problems.join('; '));
      this.run?.unreachable.push(...problems);
      this.log.warn({ instrument: instrument.name, problems }, 'harvest: folders not reachable');
    } else {
      this.problems.delete(instrument.id);
    }
    void this.stability.check();
  }

  /** The service worker's lstat of many files (copyPool.ts stat); in this thread without one. */
  private statAll(): StatAll | undefined {
    const pool = this.pool;
    return pool ? (paths) => pool.stat(paths) : undefined;
  }

  /** Considers the found files, but those recorded already with the same size and mtime. */
  private take(
    instrument: Instrument,
    folder: WatchFolder,
    found: FoundFile[],
    recorded: (path: string) => Parameters<typeof alreadyRecorded>[0],
  ): void {
    for (const f of found) {
      if (alreadyRecorded(recorded(f.absolutePath), f.size, f.mtimeMs)) continue;
      this.consider(instrument, folder, f.absolutePath, f.size, f.mtimeMs, f.relativePath);
    }
  }

  /**
   * The watcher saw something happen to files (`paths`) or in folders (`folders`: the folder
   * appeared, or changed without naming what). Sightings are looked at in groups: a folder
   * copied or moved in is thousands of files at once, and a group's file-system calls go to the
   * service worker in one message, as the walk's do. The first sighting is looked at on the next
   * turn of the event loop; those that come meanwhile wait for the next group, so a lone file is
   * not held back.
   */
  private sighted(
    instrument: Instrument,
    folder: WatchFolder,
    filter: FolderFilter,
    seen: { paths?: string[]; folders?: string[] },
  ): void {
    if (this.stopped) return;
    let waiting = this.sightings.get(folder);
    if (!waiting) {
      waiting = { instrument, filter, paths: new Set(), folders: new Set() };
      this.sightings.set(folder, waiting);
    }
    for (const path of seen.paths ?? []) waiting.paths.add(path);
    for (const dir of seen.folders ?? []) waiting.folders.add(dir);
    if (this.lookingAtSightings) return;
    this.lookingAtSightings = true;
    setImmediate(() => void this.lookAtSightings());
  }

  /**
   * A folder appeared in the watched tree (made, or moved in with its files), or changed
   * without naming what: its files are read now, and once more after FOLDER_SETTLE_MS. chokidar
   * reports a new folder before it watches it; a file made in it between the first read and
   * that watch shows up in the second read (or when the watcher reports the folder again at its
   * first event, discover.ts), not at the next walk minutes later. Its subfolders are reported
   * one by one.
   */
  private folderSighted(
    instrument: Instrument,
    folder: WatchFolder,
    filter: FolderFilter,
    dir: string,
  ): void {
    this.sighted(instrument, folder, filter, { folders: [dir] });
    const again = setTimeout(() => {
      this.relists.delete(again);
      this.sighted(instrument, folder, filter, { folders: [dir] });
    }, FOLDER_SETTLE_MS);
    again.unref();
    this.relists.add(again);
  }

  /**
   * Drops what the watches saw and has not been looked at, when they stop or are set up again:
   * the walk that follows a new setup finds it, with the new configuration.
   */
  private forgetSightings(): void {
    this.sightings.clear();
    for (const timer of this.relists) clearTimeout(timer);
    this.relists.clear();
    this.listings.clear();
  }

  private async lookAtSightings(): Promise<void> {
    try {
      while (this.sightings.size && !this.stopped) {
        const [folder, waiting] = this.sightings.entries().next().value as [WatchFolder, Sightings];
        this.sightings.delete(folder);
        try {
          await this.lookAt(folder, waiting);
        } catch (error) {
          // The service worker or the database failed: the next walk finds what this group
          // would have. The others are still looked at.
          if (!this.stopped) {
            this.log.warn(
              { err: error, folder: folder.path },
              'harvest: files the watcher saw are left to the next walk',
            );
          }
        }
      }
    } finally {
      this.lookingAtSightings = false;
    }
  }

  private async lookAt(folder: WatchFolder, waiting: Sightings): Promise<void> {
    const { instrument, filter } = waiting;
    // Sightings of an instrument no longer harvested here (the configuration changed while they
    // waited) are dropped: the walk after the change finds what the new one wants.
    const current = (): boolean => this.harvests(instrument);
    // A file being copied is left to its copy, which sees a change. The folder's filter holds
    // for every path.
    const accepted = (path: string): string | null => {
      if (this.transfers.reads(instrument, path)) return null;
      const rel = relativeTo(folder.path, path);
      return filter.accepts(rel) ? rel : null;
    };
    const take = (found: FoundFile[]): void =>
      this.take(instrument, folder, found, (path) => latestBySource(this.db, instrument.id, path));
    // A few folders per request, each group taken as it is listed: the first files of a tree
    // moved in are copied while the rest is listed. A listed candidate is considered again with
    // its size and mtime, which restart its window only if they changed.
    const dirs = [...waiting.folders];
    for (let at = 0; at < dirs.length && current(); at += LIST_GROUP) {
      const group = dirs.slice(at, at + LIST_GROUP);
      const listed = this.pool ? await this.pool.list(group) : listFiles(group);
      if (!current()) return;
      // Files being copied are left to their copy, and not remembered: the next listing looks.
      const left = new Set<string>();
      take(
        group.flatMap((dir, i) =>
          this.listings.newSince(folder, dir, listed[i]).flatMap((file) => {
            if (this.transfers.reads(instrument, file.path)) {
              left.add(file.path);
              return [];
            }
            const rel = accepted(file.path);
            return rel === null ? [] : [{ ...file, absolutePath: file.path, relativePath: rel }];
          }),
        ),
      );
      group.forEach((dir, i) => this.listings.remember(folder, dir, listed[i], left));
    }
    // An event for a candidate is a change: its window starts again now, with no stat
    // (stability.ts written). Links are not followed (statFiles uses lstat, as the walk does).
    const growing: Candidate[] = [];
    const files = [...waiting.paths].flatMap((path) => {
      if (this.stability.written(candidateKey(instrument, path), growing)) return [];
      const rel = accepted(path);
      return rel === null ? [] : [{ path, rel }];
    });
    if (growing.length && current()) {
      await this.stability.readSizes(instrument, growing, this.statAll() ?? statFiles);
    }
    if (!files.length || !current()) return;
    const found = await statFound(files, this.statAll());
    if (current()) take(found);
  }

  /**
   * Whether this instrument (this configuration of it) is harvested here now: work begun for
   * it before a stop or a reload of the configuration is dropped, or looked at anew.
   */
  private harvests(instrument: Instrument): boolean {
    return !this.stopped && this.instruments.includes(instrument);
  }

  private consider(
    instrument: Instrument,
    folder: WatchFolder,
    path: string,
    size: number,
    mtimeMs: number,
    relativePath = relativeTo(folder.path, path),
  ): void {
    const key = candidateKey(instrument, path);
    if (this.stability.update(key, size, mtimeMs)) return;
    if (this.transfers.reads(instrument, path)) return;
    const rechecked = this.rechecks.get(key);
    if (rechecked) {
      rechecked.again = true;
      return;
    }
    const seen = this.now();
    // The usage on the tool when the file was first seen. A file written before this harvester
    // started (the station was off) was not seen when it was made: it belongs to the usage in
    // progress when it was written, not to whoever is logged on now.
    const written = new Date(mtimeMs).toISOString();
    const usage =
      mtimeMs < this.startedAt
        ? usageOnToolAt(this.db, instrument.tool_id, written)
        : usageOnToolAt(this.db, instrument.tool_id, seen);
    this.stability.add(key, instrument, folder, path, relativePath, size, mtimeMs, seen, usage);
  }

  /**
   * Records stable files (one transaction) and queues their transfers. A file recorded and
   * done that comes back with its size but a new mtime is compared with its record first
   * (recheck), unless `compared`: that comparison found other content.
   */
  private accept(stable: Candidate[], compared = false): void {
    const ark = arkConfig(this.db);
    const toCompare: [Candidate, FileRow][] = [];
    const noted: [Candidate, number][] = [];
    const ids = this.db
      .transaction(() =>
        stable.flatMap((c) => {
          const record = latestBySource(this.db, c.instrument.id, c.absolutePath);
          // Waiting already as it is (found twice before its copy): queued, not written again.
          if (record && sameWaiting(record, c)) return [record.id];
          if (record && record.state !== 'done') {
            requeueFile(this.db, record.id, c.size, c.mtimeMs);
            noted.push([c, record.id]);
            return [record.id];
          }
          if (record && record.size === c.size) {
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
        }),
      )
      .immediate();
    for (const [c, id] of noted) {
      const entry = { id, size: c.size, mtime_ms: c.mtimeMs, state: 'waiting' as const };
      for (const known of this.walkKnown.get(c.instrument.id) ?? [])
        known.set(c.absolutePath, entry);
    }
    for (const id of ids) this.transfers.enqueue(id);
    if (toCompare.length) void this.recheck(toCompare);
    this.changed();
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
    const pool = this.pool;
    if (!pool) return;
    const keys = group.map(([c]) => candidateKey(c.instrument, c.absolutePath));
    for (const key of keys) this.rechecks.set(key, { again: false });
    try {
      const hashes = await Promise.allSettled(group.map(([c]) => pool.hash(c.absolutePath)));
      if (this.stopped) return;
      const probes = await pool.probe(group.map(([c]) => c.absolutePath));
      if (this.stopped) return;
      const same: { id: number; size: number; mtimeMs: number }[] = [];
      const versions: Candidate[] = [];
      group.forEach(([c, record], i) => {
        const probe = probes[i];
        const hashed = hashes[i];
        if (!this.harvests(c.instrument) || probe.kind !== 'file') return;
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
        this.changed();
      }
      if (versions.length) this.accept(versions, true);
    } catch (error) {
      // Not one file's trouble (the database): each is looked at again, none dropped.
      if (!this.stopped) this.log.error({ err: error }, 'harvest: comparing files failed');
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
        if (this.stopped || this.stability.has(keys[i])) return;
        if (!mark?.again && this.harvests(c.instrument)) return;
        const instrument = this.instruments.find((one) => one.id === c.instrument.id);
        const folder = instrument?.watch.find((w) => w.path === c.folder.path);
        if (instrument && folder) {
          this.consider(instrument, folder, c.absolutePath, c.size, c.mtimeMs, c.relativePath);
        }
      });
      this.checkIdle();
    }
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
    if (this.rechecks.size) return;
    if (this.stability.checking || this.scanning) return;
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  /**
   * `labstation harvest --once`: walk every folder, transfer everything that is or becomes
   * stable (failed files are tried once more now), and report what this run did.
   */
  async runOnce(): Promise<RunSummary> {
    this.run = { completed: 0, skipped: 0, failed: 0, unreachable: [], unstable: [] };
    this.stopped = false;
    this.startedAt = this.clock();
    this.lock = this.options.lockFile ? takeHarvestLock(this.options.lockFile) : null;
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
    if (this.stopped || this.lockProblem !== null) return;
    await this.closeWatches();
    if (this.stopped) return; // stopped meanwhile: start nothing again
    this.forgetSightings();
    this.schedules.stop();
    this.loadInstruments();
    await this.guardStorage();
    if (this.stopped) return;
    if (this.options.watch !== false) this.startWatches();
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
    if (this.stopped && this.startedAt === 0) this.loadInstruments();
  }

  /** Files made due now by a Retry: queued at once. */
  private takeNow(ids: number[]): void {
    // Waiting for the lock: due now, and taken with the other due files once it is held.
    if (!ids.length || this.lockProblem !== null) return;
    for (const id of ids) this.transfers.enqueue(id);
    this.transfers.pump();
    this.changed();
  }

  status(): HarvestStatus {
    return {
      ...idleHarvestStatus(this.db, this.clock()),
      running: !this.stopped && this.lockProblem === null && this.instruments.length > 0,
      problem: this.lockProblem,
      instruments: [
        ...this.instruments.map((i) => ({ i, waiting: false })),
        ...this.awaitingHistory.map((i) => ({ i, waiting: true })),
      ].map(({ i, waiting }) => ({
        name: i.name,
        watch: i.watch.map((w) => w.path),
        storage: i.storage_location
          ? `${i.storage_location.name} (${i.storage_location.base_path})`
          : null,
        problem: waiting ? HISTORY_PROBLEM : (this.problems.get(i.id) ?? null),
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
      last_scan_at: this.lastScanAt,
    };
  }
}
