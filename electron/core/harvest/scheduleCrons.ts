/**
 * The timers of the harvest schedules of this station's instruments. A schedule that fires
 * queues a run of its instrument (runs.ts), and the schedules' deployments are reported:
 * deployed with their next run, failed with why (a cron the timer refuses), or removed
 * (runs.ts reportDeployments, for the server).
 *
 * croner reads the cron (its fields, the time zone); the timer is ours (ScheduleTimer). croner's
 * own names, started in the hour repeated when summer time ends, the first of the repeated
 * times for its next run, which has passed: it fired at once, named the same past time again,
 * and fired again, thousands of times a second until the time it meant came round.
 */
import { Cron } from 'croner';
import type { Db } from '../db/open.js';
import type { Logger } from '../util/log.js';
import { schedulesFor, type Schedule } from './config.js';
import { createScheduledRun, hasQueuedRun, reportDeployments, type Deployment } from './runs.js';

/** The longest wait setTimeout takes (2^31 - 1 ms, about 24.8 days); longer ones are chained. */
const LONGEST_WAIT_MS = 2 ** 31 - 1;

/** One schedule's timer: fires at each time its cron names, never at one already past. */
class ScheduleTimer {
  private timer: ReturnType<typeof setTimeout> | null = null;
  private stopped = false;

  constructor(
    private readonly cron: Cron,
    private readonly fire: () => void,
  ) {}

  /** The next time the cron names after now; null when it names none. */
  next(): Date | null {
    const now = Date.now();
    // In the second pass of a repeated hour croner names times of the first, gone by; the one
    // after such a time may be one too (a cron of every few seconds). Looked for from later
    // and later, 5 minutes at a time, until past the repeated hour.
    for (let ahead = 0; ahead <= 2 * 3_600_000; ahead += 5 * 60_000) {
      let next = this.cron.nextRun(new Date(now + ahead));
      for (let i = 0; next !== null && next.getTime() <= now && i < 3; i++) {
        next = this.cron.nextRun(next);
      }
      if (next === null) return null;
      if (next.getTime() > now) return next;
    }
    return null;
  }

  start(): void {
    this.arm();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  private arm(): void {
    if (this.stopped) return;
    const next = this.next();
    if (next === null) return;
    const at = next.getTime();
    this.timer = setTimeout(
      () => {
        this.timer = null;
        if (this.stopped) return;
        // Woken before its time (a wait longer than setTimeout takes, chained): waits on.
        if (Date.now() >= at) this.fire();
        this.arm();
      },
      Math.min(Math.max(at - Date.now(), 0), LONGEST_WAIT_MS),
    );
  }
}

export class ScheduleCrons {
  private timers: { scheduleId: number; timer: ScheduleTimer }[] = [];
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
        const cron = new Cron(schedule.cron, {
          paused: true,
          ...(schedule.timezone ? { timezone: schedule.timezone } : {}),
        });
        const timer: ScheduleTimer = new ScheduleTimer(cron, () => this.fire(schedule, timer));
        this.timers.push({ scheduleId: schedule.id, timer });
        timer.start();
        deployments.set(schedule.id, {
          state: 'deployed',
          next_run_at: timer.next()?.toISOString() ?? null,
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
    for (const t of this.timers) t.timer.stop();
    this.timers = [];
  }

  /** A timer fired. Nothing it does may throw: a timer's error would end the process. */
  private fire(schedule: Schedule, timer: ScheduleTimer): void {
    try {
      // A run of this schedule still waiting its turn covers this one too: runs that
      // come faster than they end must not pile up.
      if (hasQueuedRun(this.db, schedule.id)) return;
      if (createScheduledRun(this.db, schedule, this.now()) === null) {
        // Removed or changed since its timer started: the reload that follows the change
        // starts the timers anew.
        timer.stop();
        // Not reported as deployed any more: the reload reports the schedule as it is now.
        this.timers = this.timers.filter((t) => t.timer !== timer);
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
    for (const { scheduleId, timer } of this.timers) {
      deployments.set(scheduleId, {
        state: 'deployed',
        next_run_at: timer.next()?.toISOString() ?? null,
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
