/**
 * The station's harvest engine: discover (watcher + periodic full walk) -> stable (size and
 * mtime unchanged for the instrument's window, and the file opens) -> record (ARK minted) ->
 * transfer (transfer.ts, a bounded number at once, in copy workers) -> outbox.
 */
import { stat } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import type { CoreEvent, HarvestStatus, SettlingFile } from '../../../shared/api.js';
import type { Db } from '../db/open.js';
import { cachedStatement } from '../db/statements.js';
import { getSetting, setSetting } from '../station/settings.js';
import { AppError } from '../util/errors.js';
import { injected } from '../util/failpoint.js';
import { nowIso } from '../util/ids.js';
import type { Logger } from '../util/log.js';
import { HISTORY_PROBLEM, historyPendingIds } from '../sync/history.js';
import { instrumentsOfTool, type Instrument, type WatchFolder } from './config.js';
import { DurabilityBatch, SyncFsRunner } from './durable.js';
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
  markGone,
  recordFile,
  requeueFile,
  retryAllNow,
  countRetriable,
  retryNow,
  finishTransfer,
  finishTransfers,
  idleHarvestStatus,
  indexPaths,
  type FileRow,
  type TransferOutcome,
} from './records.js';
import {
  describeError,
  failedOutcome,
  recoverInterrupted,
  transferFile,
  type TransferDeps,
} from './transfer.js';
import type { MountMemory } from './place.js';
import {
  BATCH_MAX_BYTES,
  batchable,
  filesPerBatch,
  transferBatch,
  type BatchEnd,
  type BatchItem,
} from './batch.js';

/** Outcomes stored together: at most this many, waiting at most this long (see record). */
const GROUP_COMMIT_MAX = 256;
const GROUP_COMMIT_MS = 3;

/** Files checked for stability in one message, then recorded and queued together (see tick). */
const ACCEPT_EVERY = 256;

/** Transfers (a file, or a batch of small files) in flight per copy slot (see pump). */
const IN_FLIGHT_PER_COPY = 4;

/** How many settling files the status names (HarvestStatus.settling_files). */
const SETTLING_SHOWN = 5;
/**
 * A candidate written without a pause (a camera streaming a movie) has its size read at most
 * this often from its watcher events, for the Data tab's size so far: the events carry no size,
 * and its check waits for the writes to pause, so it showed the size it had when first seen.
 */
const SIZE_READ_MS = 1000;

interface Candidate {
  instrument: Instrument;
  folder: WatchFolder;
  absolutePath: string;
  relativePath: string;
  size: number;
  mtimeMs: number;
  firstSeenAt: string;
  usageEventId: number | null;
  /** Clock time of the last size or mtime change we saw. */
  changedAt: number;
  /**
   * Whether size and mtime were read since the last change we know of (see settles): false
   * while they come from a watcher's stat or a walk, which may have caught the file between
   * two writes, or from before a watcher event.
   */
  settled: boolean;
  firstSeenMs: number;
  /** Why the file would not open for reading at its last check (an errno code), or null. */
  openError: string | null;
  /**
   * Clock time of the last stat asked for a watcher event (see SIZE_READ_MS): a file written
   * without a pause is not checked until its writes pause, and its size so far comes from these.
   */
  sizeReadAt: number;
}

/** Paths the watcher reported in one watched folder, not looked at yet (Harvester.sighted). */
interface Sightings {
  instrument: Instrument;
  filter: FolderFilter;
  paths: Set<string>;
  folders: Set<string>;
}

interface Active {
  file: FileRow;
  bytes: number;
  startedAt: number;
  /** When its copy started (its first progress); null while it waits for a copy slot. */
  copyingSince: number | null;
}

/** A source of one instrument: two instruments watching one folder each harvest its files. */
const sourceKey = (instrumentId: number, path: string): string => `${instrumentId}\0${path}`;

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
    const key = sourceKey(active.file.instrument_id, active.file.source_path);
    this.sources.set(key, (this.sources.get(key) ?? 0) + 1);
  }

  delete(id: number): void {
    const active = this.byId.get(id);
    if (!active) return;
    this.byId.delete(id);
    const key = sourceKey(active.file.instrument_id, active.file.source_path);
    const left = (this.sources.get(key) ?? 1) - 1;
    if (left > 0) this.sources.set(key, left);
    else this.sources.delete(key);
  }

  /** Whether a transfer of this instrument under way reads this source. */
  reads(instrument: Instrument, path: string): boolean {
    return this.sources.has(sourceKey(instrument.id, path));
  }
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

const candidateKey = (instrument: Instrument, path: string): string =>
  sourceKey(instrument.id, path);

/** A stability check woken by another (wakeAt) comes at least this long after it. */
const WAKE_GAP_MS = 50;

/**
 * How long after a change a file's size and mtime are read again, once, before its window
 * ends (see settles). chokidar reports one change per file in 50 ms and drops the others, and
 * its stat of a new file may come between two writes; the window's end then found a size
 * other than the one it was counted from, and the file waited a second window (a 1 s window:
 * a file written in two quick writes completed 2.07 s after its last write, against 1.01 s).
 * Read again once the writes have paused this long, the size is the final one and the window
 * runs on from the change: no wait at all when it was right, this much when it was not.
 */
const SETTLE_MS = 100;

/** Whether a candidate is read again SETTLE_MS after its last change: not for short windows. */
function settles(c: Candidate): boolean {
  return !c.settled && c.instrument.stability_seconds * 1000 >= 4 * SETTLE_MS;
}

/** How soon stable files whose records could not be written (a full disk) are tried again. */
const ACCEPT_RETRY_MS = 5_000;
/** The test fault harvest.accept-fails-once fails the first recording of stable files. */
let acceptFailedOnce = false;

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

/** A one-shot run gives a file still changing this many windows (at least 10 s) after its walk. */
const ONCE_PATIENCE_WINDOWS = 6;

export class Harvester {
  private readonly db: Db;
  private readonly log: Logger;
  private readonly clock: () => number;
  private pool: CopyPool | null = null;
  private instruments: Instrument[] = [];
  private readonly problems = new Map<number, string>();
  private readonly candidates = new Map<string, Candidate>();
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
  /** Storage folders seen as mount points, kept in the settings (place.ts mountProblem). */
  private readonly mounts: MountMemory = {
    wasMounted: (base) => getSetting(this.db, 'harvest.mountedBases').includes(base),
    mounted: (base) => {
      const known = getSetting(this.db, 'harvest.mountedBases');
      if (!known.includes(base)) setSetting(this.db, 'harvest.mountedBases', [...known, base]);
    },
  };
  private readonly queue: number[] = [];
  private readonly queued = new Set<number>();
  private readonly active = new ActiveTransfers();
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
  private readonly syncFs = new SyncFsRunner();
  private readonly durability = new DurabilityBatch({
    runSync: (folders) => this.syncFs.run(folders),
  });
  /** Transfers under way: one per big file, one per batch of small files (batch.ts). */
  private units = 0;
  /** Of those, the ones whose copies are placed and wait for the flush (durable.ts). */
  private settling = 0;
  private timers: NodeJS.Timeout[] = [];
  private ticking = false;
  /** The stability check woken when the first candidate's window ends (wakeAt). */
  private wakeTimer: NodeJS.Timeout | undefined;
  private wakeAtMs = Infinity;
  /**
   * The stability check woken SETTLE_MS after the last watcher event for a candidate, to read
   * files again once their writes pause (settles); put off by every event, so files written
   * to all the time add no checks: the ticks find those whose own writes paused.
   */
  private settleTimer: NodeJS.Timeout | undefined;
  /** A wake came while the check ran: it runs again once it ends. */
  private tickAgain = false;
  private recovered = false;
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
  private pendingRecords: {
    fileId: number;
    outcome: TransferOutcome;
    resolve(): void;
    reject(error: unknown): void;
  }[] = [];
  private recordTimer: NodeJS.Timeout | undefined;

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
  }

  private concurrency(): number {
    return Math.max(1, Math.min(16, Math.floor(getSetting(this.db, 'harvest.concurrency'))));
  }

  private now(): string {
    return nowIso(this.clock);
  }

  private get deps(): TransferDeps {
    return {
      db: this.db,
      pool: this.pool as CopyPool,
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
      record: (fileId, outcome) => this.record(fileId, outcome),
      watchedIn: (base) => this.leftOut.watchedIn(base),
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
    const tick = setInterval(() => void this.tick(), this.tickMs());
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
    clearTimeout(this.wakeTimer);
    this.wakeTimer = undefined;
    this.wakeAtMs = Infinity;
    clearTimeout(this.settleTimer);
    this.settleTimer = undefined;
    this.schedules.stop();
    await this.closeWatches();
    this.forgetSightings();
    // Transfers under way end with the pool; their partials are cleaned up at the next start.
    await this.durability.flush();
    await this.syncFs.close();
    await this.pool?.close();
    this.pool = null;
    this.flushRecords();
    this.recovered = false;
    this.lock?.release();
    this.lock = null;
  }

  private tickMs(): number {
    const windows = this.instruments.map((i) => i.stability_seconds * 1000);
    const smallest = windows.length ? Math.min(...windows) : 1000;
    return Math.max(50, Math.min(1000, smallest / 4));
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
        await recoverInterrupted(this.deps, file, this.instrument(file.instrument_id));
        // A verified copy that had reached its name is recorded now: this run's, for --once.
        if (this.run && fileById(this.db, file.id)?.state === 'done') this.run.completed += 1;
      } catch (error) {
        // Left marked: tried again before this file's next transfer (see pump).
        this.log.error({ err: error, file: file.source_path }, 'harvest: recovery failed');
      }
    }
    this.recovered = true;
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

  /**
   * Starts the cron of every enabled schedule of a harvested instrument, and reports to the
   * server what became of those it deployed here (deployed with the next run, failed, removed).
   */
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
    if (this.scanning || this.ticking || this.queue.length || this.active.size) return null;
    if (this.rechecks.size) return null;
    const changing: string[] = [];
    for (const c of this.candidates.values()) {
      if (c.instrument.id !== instrumentId) continue;
      const windowMs = c.instrument.stability_seconds * 1000;
      const patience = Math.max(windowMs * ONCE_PATIENCE_WINDOWS, 10_000);
      if (this.clock() - Math.max(c.firstSeenMs, walkedAt) <= patience) return null;
      changing.push(c.absolutePath);
    }
    return changing;
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
    void this.tick();
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
      if (this.active.reads(instrument, path)) return null;
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
            if (this.active.reads(instrument, file.path)) {
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
    // An event for a candidate is a change (a write, a rename, new attributes; fs.watch reports
    // no reads): its window starts again now, with no stat, as often as a file is written to.
    // Links are not followed (statFiles uses lstat, as the walk does).
    const growing: Candidate[] = [];
    const files = [...waiting.paths].flatMap((path) => {
      const candidate = this.candidates.get(candidateKey(instrument, path));
      if (candidate) {
        candidate.changedAt = this.clock();
        candidate.settled = false;
        // Read again soon after the writes pause (settles), not only at the window's end.
        if (settles(candidate)) this.settleSoon();
        if (this.clock() - candidate.sizeReadAt >= SIZE_READ_MS) {
          candidate.sizeReadAt = this.clock();
          growing.push(candidate);
        }
        return [];
      }
      const rel = accepted(path);
      return rel === null ? [] : [{ path, rel }];
    });
    if (growing.length && current()) await this.readSizesSoFar(instrument, growing);
    if (!files.length || !current()) return;
    const found = await statFound(files, this.statAll());
    if (current()) take(found);
  }

  /**
   * The size so far of candidates still being written (SIZE_READ_MS). A size or mtime read
   * here is a change, as a watcher's stat is: it restarts the window and is read again before
   * the file is taken, so a stat that comes back after a later check only delays that file.
   */
  private async readSizesSoFar(instrument: Instrument, growing: Candidate[]): Promise<void> {
    const stats = await (this.statAll() ?? statFiles)(growing.map((c) => c.absolutePath));
    growing.forEach((c, i) => {
      const s = stats[i];
      if (!s || this.candidates.get(candidateKey(instrument, c.absolutePath)) !== c) return;
      if (s.size === c.size && s.mtimeMs === c.mtimeMs) return;
      c.size = s.size;
      c.mtimeMs = s.mtimeMs;
      c.changedAt = this.clock();
      c.settled = false;
    });
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
    const existing = this.candidates.get(key);
    if (existing) {
      if (existing.size !== size || existing.mtimeMs !== mtimeMs) {
        existing.size = size;
        existing.mtimeMs = mtimeMs;
        existing.changedAt = this.clock();
        existing.settled = false;
        this.wakeFor(existing);
      }
      return;
    }
    if (this.active.reads(instrument, path)) return;
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
    const candidate: Candidate = {
      instrument,
      folder,
      absolutePath: path,
      relativePath,
      size,
      mtimeMs,
      firstSeenAt: seen,
      usageEventId: usage,
      changedAt: this.clock(),
      settled: false,
      firstSeenMs: this.clock(),
      openError: null,
      sizeReadAt: this.clock(),
    };
    this.candidates.set(key, candidate);
    // The first file settling: the UIs learn of it now (and then follow it while they see
    // files settling), not at their next idle look, for a big file being written.
    if (this.candidates.size === 1) this.changed();
    this.wakeFor(candidate);
  }

  /**
   * Wakes the stability check when this candidate's window ends (see wakeAt), and not sooner
   * than `soonestMs` from now: a file that keeps changing with a window of 0 is not probed back
   * to back.
   */
  private wakeFor(c: Candidate, soonestMs = 0): void {
    const after = settles(c) ? SETTLE_MS : c.instrument.stability_seconds * 1000;
    this.wakeAt(Math.max(c.changedAt + after, this.clock() + soonestMs));
  }

  /** Wakes the stability check SETTLE_MS from now, unless another watcher event comes first. */
  private settleSoon(): void {
    if (this.stopped) return;
    clearTimeout(this.settleTimer);
    this.settleTimer = setTimeout(() => {
      this.settleTimer = undefined;
      void this.tick(true);
    }, SETTLE_MS + 1);
    this.settleTimer.unref();
  }

  /**
   * Runs the stability check at `clockMs` (or sooner, if another candidate is due sooner): a
   * file is taken when its window ends, not at the next tick, which came up to tickMs (a
   * quarter of the window) later. Each check wakes the next for the candidates it left (at
   * least WAKE_GAP_MS later); the ticks stay, for what this does not wake.
   */
  private wakeAt(clockMs: number): void {
    if (this.stopped || clockMs >= this.wakeAtMs) return;
    clearTimeout(this.wakeTimer);
    this.wakeAtMs = clockMs;
    this.wakeTimer = setTimeout(
      () => {
        this.wakeTimer = undefined;
        this.wakeAtMs = Infinity;
        void this.tick(true);
      },
      // A timer may fire a millisecond early; then nothing would be due yet.
      Math.max(0, clockMs - this.clock()) + 1,
    );
    this.wakeTimer.unref();
  }

  /**
   * Checks the candidates whose window has passed; records the stable ones. `woken`: by
   * wakeAt, which must not be lost when a check is already running (the ticks may be).
   */
  private async tick(woken = false): Promise<void> {
    if (this.stopped) return;
    if (this.ticking) {
      if (woken) this.tickAgain = true;
      return;
    }
    this.ticking = true;
    try {
      const due: [string, Candidate][] = [];
      let nextDue = Infinity;
      for (const [key, c] of [...this.candidates]) {
        const windowMs = c.instrument.stability_seconds * 1000;
        if (this.clock() - c.changedAt < windowMs) {
          // Read again before the window ends, where a watcher's stat may have come too soon.
          // Not woken for: settleSoon and wakeFor wake the check for that, and files still
          // being written would otherwise wake it at every write.
          if (settles(c) && this.clock() - c.changedAt >= SETTLE_MS) due.push([key, c]);
          else nextDue = Math.min(nextDue, c.changedAt + windowMs);
          continue;
        }
        if (this.walked && this.run) {
          const patience = Math.max(windowMs * ONCE_PATIENCE_WINDOWS, 10_000);
          if (this.clock() - c.firstSeenMs > patience) {
            this.candidates.delete(key);
            this.run.unstable.push({ path: c.absolutePath, openError: c.openError });
            continue;
          }
        }
        due.push([key, c]);
      }
      // In groups, each checked by a copy worker in one message (copyBatch.ts probeFiles):
      // three file-system calls per file, off this thread. Each group is recorded and queued
      // as soon as it is checked: the transfers of a big walk start while the rest waits.
      for (let at = 0; at < due.length && !this.stopped && this.pool; at += ACCEPT_EVERY) {
        const group = due.slice(at, at + ACCEPT_EVERY);
        // What the window was checked against; a watcher event or a walk during the check
        // changes the candidate, and then this check does not count.
        const seen = group.map(([, c]) => c.changedAt);
        // The files are read after this: a window counts as ended only if it had before they
        // were (a reply that comes late does not make a read made too soon count).
        const probedAt = this.clock();
        const probes = await this.pool.probe(group.map(([, c]) => c.absolutePath));
        const stable: Candidate[] = [];
        const stableKeys: string[] = [];
        group.forEach(([key, c], i) => {
          const probe = probes[i];
          const windowEnded = probedAt - seen[i] >= c.instrument.stability_seconds * 1000;
          if (probe.kind !== 'file') {
            this.candidates.delete(key);
          } else if (
            probe.size !== c.size ||
            probe.mtimeMs !== c.mtimeMs ||
            c.changedAt !== seen[i]
          ) {
            c.size = probe.size;
            c.mtimeMs = probe.mtimeMs;
            c.openError = null;
            // Read after the last change we know of, unless a watcher event came meanwhile.
            c.settled = c.changedAt === seen[i];
            c.changedAt = this.clock();
            this.wakeFor(c, WAKE_GAP_MS);
          } else if (!windowEnded) {
            // Read again before its window ends, and unchanged: the window runs on.
            c.settled = true;
            this.wakeFor(c);
          } else if (probe.openError !== null) {
            c.openError = probe.openError;
            c.changedAt = this.clock();
            this.wakeFor(c, WAKE_GAP_MS);
          } else if (this.candidates.get(key) === c) {
            this.candidates.delete(key);
            stable.push(c);
            stableKeys.push(key);
          }
        });
        if (stable.length && !this.stopped) {
          try {
            if (injected('harvest.accept-fails-once') && !acceptFailedOnce) {
              acceptFailedOnce = true;
              throw new Error('database or disk is full (injected)');
            }
            this.accept(stable);
          } catch (error) {
            // Not recorded (a full disk, a busy database): the files stay candidates and are
            // checked again soon, rather than left for the next walk minutes later.
            stable.forEach((c, i) => {
              const key = stableKeys[i];
              if (!this.candidates.has(key)) this.candidates.set(key, c);
            });
            this.wakeAt(this.clock() + ACCEPT_RETRY_MS);
            throw error;
          }
        }
      }
      if (this.stopped) return;
      if (nextDue < Infinity) this.wakeAt(Math.max(nextDue, this.clock() + WAKE_GAP_MS));
      this.queueDue();
    } catch (error) {
      this.log.error({ err: error }, 'harvest: stability check failed');
    } finally {
      this.ticking = false;
      if (this.tickAgain && !this.stopped) {
        this.tickAgain = false;
        setImmediate(() => void this.tick(true));
      }
      this.checkIdle();
    }
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
    for (const id of ids) this.enqueue(id);
    if (toCompare.length) void this.recheck(toCompare);
    this.changed();
    this.pump();
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
          c.size = probe.size;
          c.mtimeMs = probe.mtimeMs;
          c.openError = changed ? null : (probe.openError ?? code ?? 'unreadable');
          c.changedAt = this.clock();
          c.settled = true;
          this.candidates.set(keys[i], c);
          this.wakeFor(c, changed ? 0 : WAKE_GAP_MS);
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
        if (this.stopped || this.candidates.has(keys[i])) return;
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

  private enqueue(id: number): void {
    if (this.queued.has(id) || this.active.has(id)) return;
    this.queued.add(id);
    this.queue.push(id);
  }

  private queueDue(includeWaiting = false): void {
    if (this.stopped) return;
    const ids = this.instruments.map((i) => i.id);
    for (const id of dueFileIds(this.db, this.now(), ids, includeWaiting)) this.enqueue(id);
    this.pump();
  }

  private pump(): void {
    // The pool bounds the copies at once (harvest.concurrency): a copy is one big file or one
    // batch of small files (batch.ts). More transfers than that may be in flight: while two
    // are copied, others are being checked, placed and recorded, which is waiting on the disk
    // and the database more than work.
    const pool = this.pool;
    let batch: BatchItem[] = [];
    let batchBytes = 0;
    const perBatch = filesPerBatch(this.queue.length, pool?.size ?? 1);
    while (
      !this.stopped &&
      this.recovered &&
      pool &&
      this.units - this.settling < pool.size * IN_FLIGHT_PER_COPY &&
      this.queue.length
    ) {
      const id = this.queue.shift() as number;
      this.queued.delete(id);
      const file = fileById(this.db, id);
      const instrument = file ? this.instrument(file.instrument_id) : undefined;
      if (!file || !instrument || (file.state !== 'waiting' && file.state !== 'failed')) continue;
      this.active.set(id, { file, bytes: 0, startedAt: this.clock(), copyingSince: null });
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
    this.checkIdle();
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
      this.changed();
      this.pump();
    }
  }

  /** Counts a transfer's end in the run, and takes back a re-queued file for a new look. */
  private async ended(file: FileRow, instrument: Instrument, end: BatchEnd): Promise<void> {
    try {
      if (end.end === 'crashed') {
        if (!this.stopped) {
          if (this.run) this.run.failed += 1;
          this.log.error({ err: end.error, file: file.source_path }, 'harvest: transfer crashed');
        }
      } else if (end.end === 'requeue') {
        const s = await stat(file.source_path).catch((error: NodeJS.ErrnoException) => error);
        const folder = instrument.watch.find((w) => w.path === file.watch_path);
        this.active.delete(file.id);
        if (!(s instanceof Error)) {
          if (folder) this.consider(instrument, folder, file.source_path, s.size, s.mtimeMs);
        } else if (s.code === 'ENOENT' && (await stat(file.watch_path).catch(() => null))) {
          // Deleted or moved away while it was copied; under a new name it is a new file. A
          // partial that could not be removed keeps the file for its next start to settle.
          if (fileById(this.db, file.id)?.partial_path === null) markGone(this.db, file.id);
        }
      } else if (end.end === 'finished' && this.run) {
        const status =
          'status' in end && end.status
            ? end.status
            : (cachedStatement(
                this.db,
                'SELECT status FROM harvest_transfers WHERE file_id = ? ORDER BY id DESC LIMIT 1',
              )
                .pluck()
                .get(file.id) as 'completed' | 'skipped' | 'failed');
        this.run[status] += 1;
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
      await recoverInterrupted(this.deps, file, instrument);
      return null;
    } catch (error) {
      const reason = `cannot clean up an earlier attempt (${file.partial_path}): ${describeError(error)}`;
      await this.record(file.id, {
        ...failedOutcome(this.deps, file, reason, file.pending_destination),
        startedAt: this.now(),
        storageLocationId: instrument.storage_location?.id ?? null,
      });
      return { end: 'finished', status: 'failed' };
    }
  }

  private async runTransfer(file: FileRow, instrument: Instrument): Promise<void> {
    const id = file.id;
    // null: settled by recovery alone, nothing to count.
    let end: BatchEnd | null = null;
    try {
      let current: FileRow | undefined = file;
      if (file.partial_path !== null) {
        // An earlier attempt left its markers (its cleanup failed): settle that first.
        current = undefined;
        end = await this.settleEarlierAttempt(file, instrument);
        const settled = fileById(this.db, id);
        if (end === null && settled?.state === 'done')
          end = { end: 'finished', status: 'completed' };
        else if (end === null && settled?.partial_path === null) current = settled;
      }
      if (current) {
        file = current;
        end = { end: await transferFile(this.deps, current, instrument) };
      }
    } catch (error) {
      end = { end: 'crashed', error };
    }
    try {
      if (end) await this.ended(file, instrument, end);
    } finally {
      this.active.delete(id);
      this.units -= 1;
      this.changed();
      this.pump();
    }
  }

  /**
   * Group commit: outcomes that arrive within a few milliseconds are stored in one transaction,
   * so many small files share one wait for the disk instead of one each.
   */
  private record(fileId: number, outcome: TransferOutcome): Promise<void> {
    // Stopping: what is under way is not recorded (the next start cleans up or finishes it).
    if (this.stopped) return Promise.reject(new Error('the harvest is stopping'));
    return new Promise((resolve, reject) => {
      this.pendingRecords.push({ fileId, outcome, resolve, reject });
      if (this.pendingRecords.length >= GROUP_COMMIT_MAX) this.flushRecords();
      else this.recordTimer ??= setTimeout(() => this.flushRecords(), GROUP_COMMIT_MS);
    });
  }

  /**
   * Stores the waiting outcomes as one group. If the group is refused, nothing of it is
   * stored, and each outcome is stored again in its own savepoint, so one refused outcome does
   * not take the others with it. A savepoint per outcome every time cost two more statements
   * per file.
   */
  private flushRecords(): void {
    if (this.recordTimer) clearTimeout(this.recordTimer);
    this.recordTimer = undefined;
    const batch = this.pendingRecords.splice(0);
    if (!batch.length) return;
    try {
      finishTransfers(this.db, batch);
      for (const item of batch) item.resolve();
      return;
    } catch (error) {
      if (batch.length === 1) {
        batch[0].reject(error);
        return;
      }
    }
    const errors = new Map<number, unknown>();
    try {
      this.db
        .transaction(() => {
          batch.forEach((item, i) => {
            try {
              finishTransfer(this.db, item.fileId, item.outcome);
            } catch (error) {
              errors.set(i, error);
            }
          });
        })
        .immediate();
    } catch (error) {
      for (const item of batch) item.reject(error);
      return;
    }
    batch.forEach((item, i) => (errors.has(i) ? item.reject(errors.get(i)) : item.resolve()));
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
    if (this.candidates.size || this.queue.length || this.active.size) return;
    if (this.rechecks.size) return;
    if (this.ticking || this.scanning) return;
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
      tick = setInterval(() => void this.tick(), this.tickMs());
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
    for (const id of ids) this.enqueue(id);
    this.pump();
    this.changed();
  }

  /**
   * The settling files that changed last (SETTLING_SHOWN of them, newest change first): a
   * burst may hold thousands, so the newest are picked in one pass, not by sorting them all.
   */
  private settlingFiles(): SettlingFile[] {
    const newest: Candidate[] = [];
    for (const c of this.candidates.values()) {
      if (newest.length === SETTLING_SHOWN && c.changedAt <= newest[newest.length - 1].changedAt) {
        continue;
      }
      const at = newest.findIndex((n) => c.changedAt > n.changedAt);
      newest.splice(at < 0 ? newest.length : at, 0, c);
      if (newest.length > SETTLING_SHOWN) newest.pop();
    }
    return newest.map((c) => ({
      instrument: c.instrument.name,
      relative_path: c.relativePath,
      size: c.size,
      changed_at: new Date(c.changedAt).toISOString(),
      open_error: c.openError,
    }));
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
      active: [...this.active.values()].flatMap((a) => {
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
      }),
      settling: this.candidates.size,
      settling_files: this.settlingFiles(),
      queued:
        this.queue.length + [...this.active.values()].filter((a) => a.copyingSince === null).length,
      retriable: countRetriable(
        this.db,
        this.instruments.map((i) => i.id),
        [...this.queue, ...[...this.active.values()].map((a) => a.file.id)],
      ),
      last_scan_at: this.lastScanAt,
    };
  }
}
