/**
 * The harvest lock as a harvester holds it (lock.ts): taken at its start and released at its
 * stop; a station's harvester waits for it while another harvest holds it (a `labstation
 * harvest --once` from cron), its status saying why, and starts once it is free.
 */
import { AppError } from '../util/errors.js';
import type { Logger } from '../util/log.js';
import { takeHarvestLock, type HarvestLock } from './lock.js';

/** How often a station waiting for the harvest lock tries it again. */
const LOCK_RETRY_MS = 5000;

/** What the lock's holder asks of the engine. */
export interface LockHolderHost {
  /** Whether the harvest stopped: it no longer waits for the lock. */
  stopped(): boolean;
  /** Starts the harvest again, now that the lock may be free. */
  start(): Promise<void>;
  /** Tells the UIs. */
  changed(): void;
}

export class HarvestLockHolder {
  private lock: HarvestLock | null = null;
  /** Why this harvester waits instead of harvesting: another one holds the lock. */
  private lockProblem: string | null = null;
  private lockRetry: NodeJS.Timeout | undefined;

  /**
   * `lockFile`: none, no lock is taken. `waitForLock`: while another harvest holds it, take
   * waits for it instead of failing.
   */
  constructor(
    private readonly lockFile: string | undefined,
    private readonly waitForLock: boolean,
    private readonly log: Logger,
    private readonly host: LockHolderHost,
  ) {}

  /** Why this harvester waits instead of harvesting, or null. */
  get problem(): string | null {
    return this.lockProblem;
  }

  /**
   * Takes the harvest lock. False while another harvest holds it and this harvester waits
   * (waitForLock): it tries again every LOCK_RETRY_MS, and its status says why it waits.
   */
  take(): boolean {
    if (!this.lockFile) return true;
    try {
      this.lock = takeHarvestLock(this.lockFile);
    } catch (error) {
      if (!this.waitForLock) throw error;
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
        if (this.host.stopped()) return;
        this.host
          .start()
          .catch((e: unknown) => this.log.error({ err: e }, 'harvest did not start'));
      }, LOCK_RETRY_MS);
      return false;
    }
    if (this.lockProblem !== null) this.log.info('harvest: took the lock, harvesting');
    this.setLockProblem(null);
    return true;
  }

  /** A one-shot run's lock: taken now, or a conflict thrown. */
  takeNow(): void {
    this.lock = this.lockFile ? takeHarvestLock(this.lockFile) : null;
  }

  /** At a stop: no longer waits for the lock. */
  stopWaiting(): void {
    clearTimeout(this.lockRetry);
    this.lockRetry = undefined;
    this.lockProblem = null;
  }

  release(): void {
    this.lock?.release();
    this.lock = null;
  }

  private setLockProblem(problem: string | null): void {
    if (problem === this.lockProblem) return;
    this.lockProblem = problem;
    this.host.changed();
  }
}
