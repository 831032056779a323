/**
 * The timers (croner) of the harvest schedules of this station's instruments. A schedule that
 * fires queues a run of its instrument (runs.ts), and the schedules' deployments are reported:
 * deployed with their next run, failed with why (a cron the timer refuses), or removed
 * (runs.ts reportDeployments, for the server).
 */
import { Cron } from 'croner';
import type { Db } from '../db/open.js';
import type { Logger } from '../util/log.js';
import { schedulesFor, type Schedule } from './config.js';
import { createScheduledRun, hasQueuedRun, reportDeployments, type Deployment } from './runs.js';

export class ScheduleCrons {
  private crons: { scheduleId: number; cron: Cron }[] = [];
  /** The schedules whose timer would not start, with why: reported so until the next start. */
  private failed = new Map<number, Deployment>();

  /** `queued`: a schedule fired and queued a run; the harvest runs what is queued. */
  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    private readonly now: () => string,
    private readonly queued: () => void,
  ) {}

  /** Starts the enabled schedules of these instruments, and reports them all. */
  start(instrumentIds: number[]): void {
    const deployments = new Map<number, Deployment>();
    this.failed = new Map();
    for (const schedule of schedulesFor(this.db, instrumentIds)) {
      try {
        const cron = new Cron(
          schedule.cron,
          { protect: true, ...(schedule.timezone ? { timezone: schedule.timezone } : {}) },
          (self: Cron) => this.fire(schedule, self),
        );
        this.crons.push({ scheduleId: schedule.id, cron });
        deployments.set(schedule.id, {
          state: 'deployed',
          next_run_at: cron.nextRun()?.toISOString() ?? null,
          error: '',
        });
      } catch (error) {
        this.log.warn({ err: error, schedule: schedule.id }, 'harvest: schedule not started');
        const failed = {
          state: 'failed' as const,
          next_run_at: null,
          error: (error as Error).message,
        };
        deployments.set(schedule.id, failed);
        this.failed.set(schedule.id, failed);
      }
    }
    this.report(deployments);
  }

  /** Stops every timer; the deployments stand until the next start reports them. */
  stop(): void {
    for (const c of this.crons) c.cron.stop();
    this.crons = [];
  }

  /**
   * A timer fired. Nothing it does may throw: croner would hold the error as an unhandled
   * rejection, which ends the process, and with `protect` never fire this timer again.
   */
  private fire(schedule: Schedule, cron: Cron): void {
    try {
      // A run of this schedule still waiting its turn covers this one too: runs that
      // come faster than they end must not pile up.
      if (hasQueuedRun(this.db, schedule.id)) return;
      if (createScheduledRun(this.db, schedule, this.now()) === null) {
        // Removed or changed since its timer started: the reload that follows the change
        // starts the timers anew.
        cron.stop();
        // Not reported as deployed any more: the reload reports the schedule as it is now.
        this.crons = this.crons.filter((c) => c.cron !== cron);
        this.log.info(
          { schedule: schedule.id },
          'harvest: schedule changed; its old timer stopped',
        );
        return;
      }
      this.queued();
      this.reportNextRuns();
    } catch (error) {
      this.log.error({ err: error, schedule: schedule.id }, 'harvest: scheduled run not queued');
    }
  }

  /**
   * The next runs, after a schedule fired; the schedules that would not start are still failed
   * (a schedule left out of the report is taken for removed).
   */
  private reportNextRuns(): void {
    const deployments = new Map<number, Deployment>(this.failed);
    for (const { scheduleId, cron } of this.crons) {
      deployments.set(scheduleId, {
        state: 'deployed',
        next_run_at: cron.nextRun()?.toISOString() ?? null,
        error: '',
      });
    }
    this.report(deployments);
  }

  private report(deployments: Map<number, Deployment>): void {
    try {
      reportDeployments(this.db, deployments, this.now());
    } catch (error) {
      this.log.error({ err: error }, 'harvest: schedule deployments not recorded');
    }
  }
}
