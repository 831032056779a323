/**
 * What a station's harvest does on its timers while it runs (engine.ts begin, until stop): the
 * stability check every tickMs; a full walk every harvest.rescanMinutes; and every
 * WATCH_CHECK_MS the watches renewed, or a configuration imported meanwhile applied. A one-shot
 * run has its ticks only (engine.ts runOnce).
 */
import type { Db } from '../db/open.js';
import { getSetting } from '../station/settings.js';
import type { Logger } from '../util/log.js';
import type { Instrument } from './config.js';
import { tickMs } from './stability.js';

/** How often the watched folders are checked for one that appeared or was replaced. */
const WATCH_CHECK_MS = 5_000;

/** What the timers ask of the engine. */
export interface HarvestTimersHost {
  /** Whether the harvest stopped: the watches are not renewed. */
  stopped(): boolean;
  /** Runs the stability check (stability.ts check). */
  check(): Promise<void>;
  /** Looks again where the storage locations are on disk, then walks every folder. */
  rescan(): Promise<void>;
  /** Re-reads the configuration and walks every folder now (Harvester.rescanNow). */
  reload(): Promise<void>;
  /** Renews the watch of every watched folder (watches.ts renewAll). */
  renewWatches(): Promise<void>;
}

export class HarvestTimers {
  private timers: NodeJS.Timeout[] = [];
  private checkingWatches = false;
  /** harvest.importedAt as this harvester last applied it (renew). */
  private importedAt: string | null = null;

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    private readonly host: HarvestTimersHost,
  ) {}

  /** The configuration imported so far is the one applied: a later import is applied (renew). */
  importSeen(): void {
    this.importedAt = getSetting(this.db, 'harvest.importedAt');
  }

  start(instruments: readonly Instrument[]): void {
    const tick = setInterval(() => void this.host.check(), tickMs(instruments));
    const rescanMinutes = Math.max(getSetting(this.db, 'harvest.rescanMinutes'), 0.05);
    // Each walk looks again where the storage locations are on disk first: a link or a
    // share's mount may have changed. (A start, a reload and --once look before their walk.)
    const rescan = setInterval(() => void this.host.rescan(), rescanMinutes * 60_000);
    const renew = setInterval(() => void this.renew(), WATCH_CHECK_MS);
    this.timers = [tick, rescan, renew];
    for (const t of this.timers) t.unref();
  }

  stop(): void {
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
  }

  /**
   * The watch of every watched folder renewed (watches.ts renew), every WATCH_CHECK_MS: a
   * folder that appears (a share mounted late at boot) is watched within seconds, not at the
   * next walk. One check at a time: a share that hangs holds one of libuv's threads, not all
   * of them.
   */
  private async renew(): Promise<void> {
    if (this.checkingWatches || this.host.stopped()) return;
    this.checkingWatches = true;
    try {
      // A bundle imported into this data dir while the station runs (`labstation import`):
      // its instruments, watches, hooks and schedules take effect now, not at the next start.
      const imported = getSetting(this.db, 'harvest.importedAt');
      if (imported !== this.importedAt) {
        this.importedAt = imported;
        this.log.info('harvest: configuration imported; applying it');
        await this.host.reload();
        return;
      }
      await this.host.renewWatches();
    } finally {
      this.checkingWatches = false;
    }
  }
}
