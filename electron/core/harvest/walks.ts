/**
 * The walks: every watched folder of an instrument read in full (at the start, every few minutes,
 * for a harvest run, after a burst of watcher events), its files handed to the intake as each
 * folder is listed; what could not be read is the instrument's problem (status, a run's error).
 */
import type { Db } from '../db/open.js';
import { cachedStatement } from '../db/statements.js';
import { injected } from '../util/failpoint.js';
import { nowIso } from '../util/ids.js';
import type { Logger } from '../util/log.js';
import { HISTORY_PROBLEM } from '../sync/history.js';
import type { Instrument, WatchFolder } from './config.js';
import { scanFolder, type FolderFilter, type FoundFile, type StatAll } from './discover.js';
import type { Intake } from './intake.js';
import { indexPaths } from './views.js';
import type { StabilityChecks } from './stability.js';
import { describeError } from './attempt.js';

/** What the walks ask of the engine. */
export interface WalksHost {
  /** Whether the harvest stopped: a walk under way ends. */
  stopped(): boolean;
  /** The instruments harvested here now. */
  instruments(): readonly Instrument[];
  /** A harvested instrument by id. */
  instrument(id: number): Instrument | undefined;
  /** Enabled instruments not harvested until their history is here. */
  awaitingHistory(): readonly Instrument[];
  /** The run under way (--once), whose `unreachable` each walk adds to; or null. */
  run(): { unreachable: string[] } | null;
  /** A watched folder's filter, with the storage folders and the data dir inside it left out. */
  filterOf(folder: WatchFolder): FolderFilter;
  /** The folder a watched folder is through a link (harvested.ts linkedFolders), or null. */
  linkedTo(folder: WatchFolder): string | null;
  /** The service worker's lstat of many files; in this thread without one. */
  statAll(): StatAll | undefined;
  /** Watches the folder again when what is there now is not what its watch was set up on. */
  renewWatch(instrument: Instrument, folder: WatchFolder): Promise<void>;
  /** Queues the transfers now due (with includeWaiting, the waiting records too). */
  queueDue(includeWaiting: boolean): void;
  /** Tells the UIs. */
  changed(): void;
}

export class Walks {
  /** Walks under way: a one-shot run is not done while a folder is still being walked. */
  private scanning = 0;
  private lastScanAt: string | null = null;
  /** What the last walk of each instrument could not read, by instrument id. */
  private readonly problems = new Map<number, string>();
  /** Walks under way by instrument id. */
  private readonly walking = new Map<number, number>();

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    private readonly clock: () => number,
    private readonly stability: StabilityChecks,
    private readonly intake: Intake,
    private readonly host: WalksHost,
  ) {}

  /** Whether a walk is under way. */
  get busy(): boolean {
    return this.scanning > 0;
  }

  /** Whether a walk of this instrument's folders is under way. */
  walksInstrument(instrumentId: number): boolean {
    return (this.walking.get(instrumentId) ?? 0) > 0;
  }

  /** When the last walk of every folder ended. */
  get lastAt(): string | null {
    return this.lastScanAt;
  }

  /** What the last walk of this instrument could not read, or null. */
  problemOf(instrumentId: number): string | null {
    return this.problems.get(instrumentId) ?? null;
  }

  /** A full harvest of one instrument: walk its folders and retry its failed files now. */
  async harvestInstrument(instrumentId: number): Promise<void> {
    const instrument = this.host.instrument(instrumentId);
    if (!instrument) return;
    cachedStatement(
      this.db,
      `UPDATE harvest_files SET next_attempt_at = ? WHERE instrument_id = ? AND state = 'failed'
           AND next_attempt_at IS NOT NULL`,
    ).run(nowIso(this.clock), instrumentId);
    // Counted as a walk: a run waiting for the harvest to settle must not see it idle while
    // the folders are still being walked.
    this.scanning += 1;
    try {
      await this.rescan(instrument);
    } finally {
      this.scanning -= 1;
    }
    this.host.queueDue(true);
  }

  async rescanAll(): Promise<void> {
    this.scanning += 1;
    try {
      // The records made since the last walk join the path index in bulk, off the per-file
      // path; a search reads those made since as they are (views.ts indexPaths).
      try {
        indexPaths(this.db);
      } catch (error) {
        this.log.warn({ err: error }, 'harvest: the path index was not brought up to date');
      }
      for (const i of this.host.awaitingHistory())
        this.host.run()?.unreachable.push(`${i.name}: ${HISTORY_PROBLEM}`);
      for (const instrument of this.host.instruments()) await this.rescan(instrument);
      this.lastScanAt = nowIso(this.clock);
      this.host.changed();
    } finally {
      this.scanning -= 1;
    }
    this.host.queueDue(true);
  }

  /** Walks every folder of the instrument (a watch that is up, or saw a burst of events). */
  async rescan(instrument: Instrument): Promise<void> {
    if (this.host.stopped()) return;
    this.walking.set(instrument.id, (this.walking.get(instrument.id) ?? 0) + 1);
    try {
      await this.walk(instrument);
    } finally {
      const left = (this.walking.get(instrument.id) ?? 1) - 1;
      if (left > 0) this.walking.set(instrument.id, left);
      else this.walking.delete(instrument.id);
      this.intake.walkEnded(instrument.id);
    }
  }

  private async walk(instrument: Instrument): Promise<void> {
    // Tests: a walk still under way while the watcher's files are recorded (and fail, in
    // about a second; the hold leaves a busy machine six).
    if (injected('harvest.slow-walk')) {
      this.log.warn({ instrument: instrument.name }, 'harvest: walk held for 6 s (injected)');
      await new Promise((resolve) => setTimeout(resolve, 6000));
    }
    const problems: string[] = [];
    // Said beside what could not be read, but no failure of a run: the files are harvested,
    // once, through the other folder.
    const notes: string[] = [];
    for (const folder of instrument.watch) {
      const linked = this.host.linkedTo(folder);
      if (linked !== null) {
        notes.push(
          `${folder.path}: not harvested: through a link, it holds files of ${linked} (or ` +
            'that folder holds its), which are harvested there',
        );
        continue;
      }
      // Each folder's files are considered as the walk reaches them, so the ticks (every
      // tickMs) check and copy them while the rest of the tree is walked. They are compared
      // with their records as they are then: those the watcher's files got while the walk
      // went on too.
      const take = (found: FoundFile[]): void => {
        if (!this.host.stopped()) this.intake.take(instrument, folder, found);
      };
      try {
        await this.host.renewWatch(instrument, folder);
        const unread = await scanFolder(
          folder,
          this.host.filterOf(folder),
          take,
          this.host.statAll(),
          () => this.host.stopped(),
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
      if (this.host.stopped()) return;
    }
    if (problems.length || notes.length) {
      this.problems.set(instrument.id, [...problems, ...notes].join('; '));
    } else {
      this.problems.delete(instrument.id);
    }
    if (problems.length) {
      this.host.run()?.unreachable.push(...problems);
      this.log.warn({ instrument: instrument.name, problems }, 'harvest: folders not reachable');
    }
    void this.stability.check();
  }
}
