/**
 * Retry and Retry all, asked for from the UI, the CLI or the server: failed files made due now
 * (due.ts retryNow, retryAllNow) and handed to the transfer queue at once, not left to
 * their backoff. A file of an instrument waiting for its history is not retried.
 */
import type { Db } from '../db/open.js';
import { HISTORY_PROBLEM } from '../sync/history.js';
import { AppError } from '../util/errors.js';
import type { HarvestedInstruments } from './harvested.js';
import { retryAllNow, retryNowOrRefuse } from './due.js';
import { fileById } from './records.js';
import type { TransferQueue } from './transferQueue.js';

/** What a Retry says of a file whose source is being written again (after its path). */
export const HELD_FOR_NEW_BYTES =
  'is being written again: it is taken once it stops changing (its stability window), not before';

/** Why a file of an instrument not harvested here (turned off, or on another tool) is not retried. */
export const NOT_HARVESTED_HERE =
  'not harvested on this station now (turned off, or on another tool): its files are not tried';

/** What a Retry asks of the engine. */
export interface RetriesHost {
  /** Whether the harvest has not started yet (nor been started and stopped). */
  notStarted(): boolean;
  /** The station's tool: its enabled instruments are harvested. */
  tool(): string | null;
  /** Whether this harvester waits for another one's lock. */
  waitsForLock(): boolean;
  /** Tells the UIs. */
  changed(): void;
}

export class Retries {
  constructor(
    private readonly db: Db,
    private readonly harvested: HarvestedInstruments,
    private readonly transfers: TransferQueue,
    private readonly host: RetriesHost,
  ) {}

  /**
   * Makes a failed file due now and hands it to the queue. Whether its copy is held back
   * (TransferQueue.holds): its source is being written again, and the intake takes the new
   * bytes once they are stable, under this record or one of their own.
   */
  retry(fileId: number): { held: boolean } {
    this.instrumentsBeforeStart();
    // A file of an instrument waiting for its history keeps the ARK the server may still send:
    // trying it now would copy it under a record that the history then replaces.
    const instrumentId = fileById(this.db, fileId)?.instrument_id;
    const waiting = this.harvested.awaitingHistory.find((i) => i.id === instrumentId);
    if (waiting) throw new AppError('conflict', `${waiting.name}: ${HISTORY_PROBLEM}`);
    // Made due, it would wait for a turn that never comes: the queue takes only the files of
    // the instruments harvested here (Retry all leaves them out too).
    if (instrumentId !== undefined && this.harvested.byId(instrumentId) === undefined) {
      const name = this.db
        .prepare('SELECT name FROM instruments WHERE id = ?')
        .pluck()
        .get(instrumentId) as string;
      throw new AppError('conflict', `${name}: ${NOT_HARVESTED_HERE}`);
    }
    retryNowOrRefuse(this.db, fileId);
    this.takeNow([fileId]);
    return { held: this.transfers.holds(fileId) };
  }

  /**
   * Retry all: every failed file of the instruments harvested here is due now (those of an
   * instrument waiting for its history wait for it). How many were failed.
   */
  retryAll(): number {
    this.instrumentsBeforeStart();
    const ids = retryAllNow(this.db, this.harvested.ids());
    this.takeNow(ids);
    return ids.length;
  }

  /**
   * A Retry before the harvest has started (a station waits up to 5 s for the server's first
   * answer): the instruments are read as the start will read them, so the files are made due
   * now and taken when it starts; before, Retry all answered 0 and left them to their backoff.
   */
  private instrumentsBeforeStart(): void {
    if (this.host.notStarted()) this.harvested.load(this.host.tool());
  }

  /** Files made due now by a Retry: queued at once. */
  private takeNow(ids: number[]): void {
    // Waiting for the lock: due now, and taken with the other due files once it is held.
    if (!ids.length || this.host.waitsForLock()) return;
    for (const id of ids) this.transfers.enqueue(id);
    this.transfers.pump();
    this.host.changed();
  }
}
