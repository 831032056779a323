/**
 * The stability check: a file found (by a walk or the watcher) is a candidate until its size
 * and mtime have not changed for its instrument's window and it opens for reading; then it is
 * handed to the engine to be recorded and queued (StabilityHost.accept). The check runs on the
 * engine's ticks and is woken when the first candidate's window ends.
 */
import type { SettlingFile } from '../../../shared/api.js';
import type { Logger } from '../util/log.js';
import type { Instrument, WatchFolder } from './config.js';
import type { FileStat, Probe } from './copyBatch.js';
import { sourceKey } from './storageGuard.js';

export interface Candidate {
  instrument: Instrument;
  folder: WatchFolder;
  absolutePath: string;
  relativePath: string;
  size: number;
  mtimeMs: number;
  firstSeenAt: string;
  usageEventId: number | null;
  /** When we last saw its size or mtime change, on the checks' clock (a monotonic one). */
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

/**
 * A candidate's key: two instruments watching one folder each harvest its files. Its path as
 * a file's identity compares it (storageGuard.ts sourceKey).
 */
export const candidateKey = (instrument: Instrument, path: string): string =>
  `${instrument.id}\0${sourceKey(path)}`;

/** What the stability check asks of the engine. */
export interface StabilityHost {
  /** Whether the harvest stopped: no check runs and no timer is set. */
  stopped(): boolean;
  /** The copy workers' probe (copyPool.ts: lstat and open, off this thread); null without. */
  prober(): { probe(paths: string[]): Promise<Probe[]> } | null;
  /**
   * Records stable files and queues their transfers. Throws when they could not be recorded
   * (a full disk): they stay candidates, checked again after ACCEPT_RETRY_MS.
   */
  accept(stable: Candidate[]): void;
  /**
   * A one-shot run that has walked every folder: its candidates no longer wait without end
   * (ONCE_PATIENCE_WINDOWS), and those given up are added to its `unstable`. Null otherwise.
   */
  onceRun(): { unstable: { path: string; openError: string | null }[] } | null;
  /**
   * A one-shot run gave this file up (its candidateKey): it is not taken, nor copied, again
   * in the run.
   */
  leftForNextRun(key: string): void;
  /** A candidate went away before it was recorded (renamed, deleted): see TransferHost.movedAway. */
  movedAway(): void;
  /** After a check: the transfers now due are queued. */
  queueDue(): void;
  /** After a check: whether the harvest is idle now. */
  checkIdle(): void;
  /** Tells the UIs (the first candidate appeared). */
  changed(): void;
}

/** Files checked for stability in one message, then recorded and queued together (see check). */
const ACCEPT_EVERY = 256;

/** How many settling files the status names (HarvestStatus.settling_files). */
const SETTLING_SHOWN = 5;

/**
 * A candidate written without a pause (a camera streaming a movie) has its size read at most
 * this often from its watcher events, for the Data tab's size so far: the events carry no size,
 * and its check waits for the writes to pause, so it showed the size it had when first seen.
 */
const SIZE_READ_MS = 1000;

/** A stability check woken by another (wakeAt) comes at least this long after it. */
export const WAKE_GAP_MS = 50;

/**
 * How long after a change a file's size and mtime are read again, once, before its window
 * ends (see settles). A watch's report of a new file, and the stat that follows it, may come
 * between two writes (chokidar, which watched until 2026-12-07, also reported one change per
 * file in 50 ms and dropped the others); the window's end then found a size
 * other than the one it was counted from, and the file waited a second window (a 1 s window:
 * a file written in two quick writes completed 2.07 s after its last write, against 1.01 s).
 * Read again once the writes have paused this long, the size is the final one and the window
 * runs on from the change: no wait at all when it was right, this much when it was not.
 */
export const SETTLE_MS = 100;

/** Whether a candidate is read again SETTLE_MS after its last change: not for short windows. */
function settles(c: Candidate): boolean {
  return !c.settled && c.instrument.stability_seconds * 1000 >= 4 * SETTLE_MS;
}

/** How soon stable files whose records could not be written (a full disk) are tried again. */
export const ACCEPT_RETRY_MS = 5_000;

/** A one-shot run gives a file still changing this many windows (at least 10 s) after its walk. */
const ONCE_PATIENCE_WINDOWS = 6;

/** How long a run waits for a file still changing before it leaves it for the next run. */
function patienceMs(c: Candidate): number {
  return Math.max(c.instrument.stability_seconds * 1000 * ONCE_PATIENCE_WINDOWS, 10_000);
}

/** How often the engine runs the check: a quarter of the smallest window, 50 ms to 1 s. */
export function tickMs(instruments: readonly Instrument[]): number {
  const windows = instruments.map((i) => i.stability_seconds * 1000);
  const smallest = windows.length ? Math.min(...windows) : 1000;
  return Math.max(50, Math.min(1000, smallest / 4));
}

export class StabilityChecks {
  private readonly candidates = new Map<string, Candidate>();
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

  /**
   * `clock` measures the windows, and should only go forward (util/clock.ts monotonicMs): on the
   * wall clock, a PC's time set back an hour held every file settling then for that hour.
   * `wall` gives the times shown (settlingFiles).
   */
  constructor(
    private readonly host: StabilityHost,
    private readonly log: Logger,
    private readonly clock: () => number,
    private readonly wall: () => number = Date.now,
  ) {}

  /** The files settling. */
  get size(): number {
    return this.candidates.size;
  }

  /** Whether a check is under way. */
  get checking(): boolean {
    return this.ticking;
  }

  has(key: string): boolean {
    return this.candidates.has(key);
  }

  /** Whether this file is settling with other bytes than these (another size or mtime). */
  settlesAnew(key: string, size: number, mtimeMs: number): boolean {
    const c = this.candidates.get(key);
    return c !== undefined && (c.size !== size || c.mtimeMs !== mtimeMs);
  }

  /**
   * A file found again with this size and mtime: whether it is a candidate already (its window
   * starts again if they changed).
   */
  update(key: string, size: number, mtimeMs: number): boolean {
    const existing = this.candidates.get(key);
    if (!existing) return false;
    if (existing.size !== size || existing.mtimeMs !== mtimeMs) {
      existing.size = size;
      existing.mtimeMs = mtimeMs;
      existing.changedAt = this.clock();
      existing.settled = false;
      this.wakeFor(existing);
    }
    return true;
  }

  /** A new candidate (not one already: see update), its window starting now. */
  add(
    key: string,
    instrument: Instrument,
    folder: WatchFolder,
    absolutePath: string,
    relativePath: string,
    size: number,
    mtimeMs: number,
    firstSeenAt: string,
    usageEventId: number | null,
  ): void {
    const candidate: Candidate = {
      instrument,
      folder,
      absolutePath,
      relativePath,
      size,
      mtimeMs,
      firstSeenAt,
      usageEventId,
      changedAt: this.clock(),
      settled: false,
      firstSeenMs: this.clock(),
      openError: null,
      sizeReadAt: this.clock(),
    };
    this.candidates.set(key, candidate);
    // The first file settling: the UIs learn of it now (and then follow it while they see
    // files settling), not at their next idle look, for a big file being written.
    if (this.candidates.size === 1) this.host.changed();
    this.wakeFor(candidate);
  }

  /**
   * A candidate taken out (handed to accept, or to a comparison with its record) and back:
   * read now with this size, mtime and openError, its window starting again, woken no sooner
   * than `soonestMs` from now.
   */
  putBack(
    key: string,
    c: Candidate,
    size: number,
    mtimeMs: number,
    openError: string | null,
    soonestMs: number,
  ): void {
    c.size = size;
    c.mtimeMs = mtimeMs;
    c.openError = openError;
    c.changedAt = this.clock();
    c.settled = true;
    this.candidates.set(key, c);
    this.wakeFor(c, soonestMs);
  }

  /**
   * The watcher reported a change to this path: whether it is a candidate. An event is a change
   * (a write, a rename, new attributes; fs.watch reports no reads): its window starts again now,
   * with no stat, as often as a file is written to. A candidate whose size so far is due to be
   * read (SIZE_READ_MS) is added to `growing`, for readSizes.
   */
  written(key: string, growing: Candidate[]): boolean {
    const candidate = this.candidates.get(key);
    if (!candidate) return false;
    candidate.changedAt = this.clock();
    candidate.settled = false;
    // Read again soon after the writes pause (settles), not only at the window's end.
    if (settles(candidate)) this.settleSoon();
    if (this.clock() - candidate.sizeReadAt >= SIZE_READ_MS) {
      candidate.sizeReadAt = this.clock();
      growing.push(candidate);
    }
    return true;
  }

  /**
   * The size so far of candidates still being written (SIZE_READ_MS). A size or mtime read
   * here is a change, as a watcher's stat is: it restarts the window and is read again before
   * the file is taken, so a stat that comes back after a later check only delays that file.
   */
  async readSizes(
    instrument: Instrument,
    growing: Candidate[],
    stat: (paths: string[]) => Promise<FileStat[]>,
  ): Promise<void> {
    const stats = await stat(growing.map((c) => c.absolutePath));
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
    if (this.host.stopped()) return;
    clearTimeout(this.settleTimer);
    this.settleTimer = setTimeout(() => {
      this.settleTimer = undefined;
      void this.check(true);
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
    if (this.host.stopped() || clockMs >= this.wakeAtMs) return;
    clearTimeout(this.wakeTimer);
    this.wakeAtMs = clockMs;
    this.wakeTimer = setTimeout(
      () => {
        this.wakeTimer = undefined;
        this.wakeAtMs = Infinity;
        void this.check(true);
      },
      // A timer may fire a millisecond early; then nothing would be due yet.
      Math.max(0, clockMs - this.clock()) + 1,
    );
    this.wakeTimer.unref();
  }

  /** Stable files not recorded (accept threw): candidates again, tried after ACCEPT_RETRY_MS. */
  private giveBack(stable: Candidate[], stableKeys: string[]): void {
    stable.forEach((c, i) => {
      const key = stableKeys[i];
      if (!this.candidates.has(key)) this.candidates.set(key, c);
    });
    this.wakeAt(this.clock() + ACCEPT_RETRY_MS);
  }

  /**
   * Checks the candidates whose window has passed; hands the stable ones to accept. `woken`: by
   * wakeAt, which must not be lost when a check is already running (the ticks may be).
   */
  async check(woken = false): Promise<void> {
    if (this.host.stopped()) return;
    if (this.ticking) {
      if (woken) this.tickAgain = true;
      return;
    }
    this.ticking = true;
    try {
      // [key, candidate, last read: a one-shot run's patience with it has run out].
      const due: [string, Candidate, boolean][] = [];
      let nextDue = Infinity;
      const once = this.host.onceRun();
      for (const [key, c] of [...this.candidates]) {
        const windowMs = c.instrument.stability_seconds * 1000;
        if (this.clock() - c.changedAt < windowMs) {
          // Read again before the window ends, where a watcher's stat may have come too soon.
          // Not woken for: settleSoon and wakeFor wake the check for that, and files still
          // being written would otherwise wake it at every write.
          if (settles(c) && this.clock() - c.changedAt >= SETTLE_MS) due.push([key, c, false]);
          else nextDue = Math.min(nextDue, c.changedAt + windowMs);
          continue;
        }
        // Its window has ended: read it, even past a one-shot run's patience, as a file that
        // has not changed for its window is stable however long it took to get there; only a
        // change (or a refused open) found by this last read gives it up.
        due.push([key, c, once !== null && this.clock() - c.firstSeenMs > patienceMs(c)]);
      }
      // In groups, each checked by a copy worker in one message (copyBatch.ts probeFiles):
      // three file-system calls per file, off this thread. Each group is recorded and queued
      // as soon as it is checked: the transfers of a big walk start while the rest waits.
      for (let at = 0; at < due.length; at += ACCEPT_EVERY) {
        const prober = this.host.prober();
        if (this.host.stopped() || !prober) break;
        const group = due.slice(at, at + ACCEPT_EVERY);
        // What the window was checked against; a watcher event or a walk during the check
        // changes the candidate, and then this check does not count.
        const seen = group.map(([, c]) => c.changedAt);
        // The files are read after this: a window counts as ended only if it had before they
        // were (a reply that comes late does not make a read made too soon count).
        const probedAt = this.clock();
        const probes = await prober.probe(group.map(([, c]) => c.absolutePath));
        const stable: Candidate[] = [];
        const stableKeys: string[] = [];
        group.forEach(([key, c, lastRead], i) => {
          const probe = probes[i];
          if (probe.kind !== 'file') {
            this.candidates.delete(key);
            this.host.movedAway();
            return;
          }
          const windowEnded = probedAt - seen[i] >= c.instrument.stability_seconds * 1000;
          const changed =
            probe.size !== c.size || probe.mtimeMs !== c.mtimeMs || c.changedAt !== seen[i];
          if (lastRead && once && (changed || probe.openError !== null)) {
            // Past the run's patience and not stable at its last read: left for the next run.
            if (this.candidates.get(key) !== c) return;
            this.candidates.delete(key);
            once.unstable.push({
              path: c.absolutePath,
              openError: changed ? null : probe.openError,
            });
            this.host.leftForNextRun(key);
          } else if (changed) {
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
        if (stable.length && !this.host.stopped()) {
          try {
            this.host.accept(stable);
          } catch (error) {
            // Not recorded (a full disk, a busy database): the files stay candidates and are
            // checked again soon, rather than left for the next walk minutes later.
            this.giveBack(stable, stableKeys);
            throw error;
          }
        }
      }
      if (this.host.stopped()) return;
      if (nextDue < Infinity) this.wakeAt(Math.max(nextDue, this.clock() + WAKE_GAP_MS));
      this.host.queueDue();
    } catch (error) {
      this.log.error({ err: error }, 'harvest: stability check failed');
    } finally {
      this.ticking = false;
      if (this.tickAgain && !this.host.stopped()) {
        this.tickAgain = false;
        setImmediate(() => void this.check(true));
      }
      this.host.checkIdle();
    }
  }

  /**
   * For a run of `instrumentId` whose walk ended at `walkedAt`, once nothing else is under way:
   * null while a check runs or a file of the instrument may still settle; else the files of
   * the instrument still changing (seen changing for ONCE_PATIENCE_WINDOWS windows, at least
   * 10 s, since the walk).
   */
  changingFor(instrumentId: number, walkedAt: number): string[] | null {
    if (this.ticking) return null;
    const changing: string[] = [];
    for (const c of this.candidates.values()) {
      if (c.instrument.id !== instrumentId) continue;
      if (this.clock() - Math.max(c.firstSeenMs, walkedAt) <= patienceMs(c)) return null;
      // Its window has ended: the next check reads it once more, and takes it or gives it up.
      if (this.clock() - c.changedAt >= c.instrument.stability_seconds * 1000) return null;
      changing.push(c.absolutePath);
    }
    return changing;
  }

  /**
   * The settling files that changed last (SETTLING_SHOWN of them, newest change first): a
   * burst may hold thousands, so the newest are picked in one pass, not by sorting them all.
   */
  settlingFiles(): SettlingFile[] {
    const newest: Candidate[] = [];
    for (const c of this.candidates.values()) {
      if (newest.length === SETTLING_SHOWN && c.changedAt <= newest[newest.length - 1].changedAt) {
        continue;
      }
      const at = newest.findIndex((n) => c.changedAt > n.changedAt);
      newest.splice(at < 0 ? newest.length : at, 0, c);
      if (newest.length > SETTLING_SHOWN) newest.pop();
    }
    const wallNow = this.wall();
    const now = this.clock();
    return newest.map((c) => ({
      instrument: c.instrument.name,
      relative_path: c.relativePath,
      size: c.size,
      changed_at: new Date(wallNow - (now - c.changedAt)).toISOString(),
      open_error: c.openError,
    }));
  }

  /** Ends the wakes (the harvest stops); the candidates are kept, as they were. */
  stop(): void {
    clearTimeout(this.wakeTimer);
    this.wakeTimer = undefined;
    this.wakeAtMs = Infinity;
    clearTimeout(this.settleTimer);
    this.settleTimer = undefined;
  }
}
