/**
 * The transfers' outcomes, stored in group commits (records.ts finishTransfers): a burst of
 * small files shares one wait for the disk instead of one each.
 */
import type { Db } from '../db/open.js';
import { finishTransfer, finishTransfers, type TransferOutcome } from './records.js';

/** Outcomes stored together: at most this many, waiting at most this long (see record). */
export const GROUP_COMMIT_MAX = 256;
const GROUP_COMMIT_MS = 3;

export class OutcomeCommits {
  private pending: {
    fileId: number;
    outcome: TransferOutcome;
    resolve(): void;
    reject(error: unknown): void;
  }[] = [];
  private timer: NodeJS.Timeout | undefined;

  /** @param stopping whether the harvest stops: then no outcome is taken */
  constructor(
    private readonly db: Db,
    private readonly stopping: () => boolean,
  ) {}

  /**
   * Group commit: outcomes that arrive within a few milliseconds are stored in one transaction,
   * so many small files share one wait for the disk instead of one each.
   */
  record(fileId: number, outcome: TransferOutcome): Promise<void> {
    // Stopping: what is under way is not recorded (the next start cleans up or finishes it).
    if (this.stopping()) return Promise.reject(new Error('the harvest is stopping'));
    return new Promise((resolve, reject) => {
      this.pending.push({ fileId, outcome, resolve, reject });
      if (this.pending.length >= GROUP_COMMIT_MAX) this.flush();
      else this.timer ??= setTimeout(() => this.flush(), GROUP_COMMIT_MS);
    });
  }

  /**
   * Stores the waiting outcomes as one group. If the group is refused, nothing of it is
   * stored, and each outcome is stored again in its own savepoint, so one refused outcome does
   * not take the others with it. A savepoint per outcome every time cost two more statements
   * per file.
   */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.pending.splice(0);
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
}
