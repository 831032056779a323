/**
 * The run queue: the harvest runs asked for (a trigger from the server, a schedule) run one
 * after the other, each a full harvest of its instrument that ends once its files are
 * transferred or left changing, stored with its counts and what it could not read.
 */
import type { Db } from '../db/open.js';
import { getSetting } from '../station/settings.js';
import { nowIso } from '../util/ids.js';
import type { Logger } from '../util/log.js';
import type { Instrument } from './config.js';
import type { Intake } from './intake.js';
import { finishRun, queuedRuns, runCounts, startRun, type RunRow } from './runs.js';
import type { StabilityChecks } from './stability.js';
import type { TransferQueue } from './transferQueue.js';
import type { Walks } from './walks.js';

/** How often a harvest run checks whether its instrument's files have settled. */
const RUN_SETTLE_POLL_MS = 250;

/** What the run queue asks of the engine. */
export interface RunQueueHost {
  /** Whether the harvest stopped: a run under way is left running, for the next start. */
  stopped(): boolean;
  /** The start under way, if any: runs wait for it. */
  starting(): Promise<void> | null;
  /** The reload of the configuration under way (Harvester.rescanNow), or a settled promise. */
  rescanning(): Promise<void>;
  /** Whether this harvester waits for another one's lock: the runs stay queued. */
  waitsForLock(): boolean;
  /** A harvested instrument by id. */
  instrument(id: number): Instrument | undefined;
  /** Enabled instruments not harvested until their history is here. */
  awaitingHistory(): readonly Instrument[];
  /** Tells the UIs. */
  changed(): void;
}

export class RunQueue {
  private runChain: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    private readonly clock: () => number,
    /** Measures how long a run waits (monotonic, as the stability checks' clock: the same). */
    private readonly elapsed: () => number,
    private readonly walks: Walks,
    private readonly intake: Intake,
    private readonly stability: StabilityChecks,
    private readonly transfers: TransferQueue,
    private readonly host: RunQueueHost,
  ) {}

  private now(): string {
    return nowIso(this.clock);
  }

  /** Runs the queued harvest runs one after the other (a trigger from the server, a schedule). */
  runQueued(): void {
    this.runChain = this.runChain
      .then(async () => {
        await this.host.starting();
        // A configuration from the server that came with the run (an instrument made or turned
        // on just before its trigger) is applied first: the run would not find it otherwise.
        await this.host.rescanning();
        // Waiting for the lock: the runs stay queued, for when it is taken (begin).
        if (this.host.waitsForLock()) return;
        for (const run of queuedRuns(this.db)) {
          if (this.host.stopped()) return;
          await this.execute(run);
        }
      })
      .catch((error: unknown) => this.log.error({ err: error }, 'harvest: run failed'));
  }

  private async execute(run: RunRow): Promise<void> {
    // An instrument waiting for its history is not harvested yet: its run stays queued, and
    // runs once the history is here (the sync client then asks for the queued runs again).
    if (this.host.awaitingHistory().some((i) => i.id === run.instrument_id)) return;
    const startedAt = this.now();
    startRun(this.db, run.id, startedAt);
    this.host.changed();
    const instrument = this.host.instrument(run.instrument_id);
    if (!instrument) {
      finishRun(this.db, run.id, {
        state: 'failed',
        counts: { files_completed: 0, files_skipped: 0, files_failed: 0 },
        error: "the instrument is disabled, or not on this station's tool",
        now: this.now(),
      });
      return;
    }
    await this.walks.harvestInstrument(instrument.id);
    // What this run's walk could not read (a folder not there, a share gone, a subfolder
    // without permission, a name that is not UTF-8): the run fails naming it, as `harvest
    // --once` exits 1, instead of reporting a clean run; its counts say what it did.
    const unread = this.walks.problemOf(instrument.id);
    const walkedAt = this.elapsed();
    const limitMs = getSetting(this.db, 'harvest.runTimeoutMinutes') * 60_000;
    // Done when the transfers have ended and what is left of this instrument's files are those
    // still changing long after the walk (a log written all day): they are left for the next
    // run, as `harvest --once` leaves them. Waiting for them would hold this run, and every
    // run queued behind it, until the run timeout.
    let settled = this.settledFor(instrument.id, walkedAt);
    while (settled === null && !this.host.stopped() && this.elapsed() - walkedAt < limitMs) {
      await new Promise((resolve) => setTimeout(resolve, RUN_SETTLE_POLL_MS));
      settled = this.settledFor(instrument.id, walkedAt);
    }
    if (this.host.stopped()) return; // left running: the next start runs it again
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
    this.host.changed();
  }

  /**
   * Whether a run of `instrumentId` whose walk ended at `walkedAt` is done: null while walks,
   * checks or transfers of the instrument are under way or a file of it may still settle; else
   * the files of the instrument still changing (seen changing for ONCE_PATIENCE_WINDOWS
   * windows, at least 10 s, since the walk). Another instrument's work is not waited for: a
   * detector that writes all day would hold every run of the station's other instruments.
   */
  private settledFor(instrumentId: number, walkedAt: number): string[] | null {
    if (
      this.walks.walksInstrument(instrumentId) ||
      this.transfers.busyFor(instrumentId) ||
      this.intake.comparingFor(instrumentId)
    ) {
      return null;
    }
    return this.stability.changingFor(instrumentId, walkedAt);
  }
}
