/**
 * The watches: one watch per watched folder between walks (watchers.ts), its reports handed to the
 * sightings, and set up again when the folder it was set up on is no longer the one there (a
 * share mounted late, a folder replaced).
 */
import type { Logger } from '../util/log.js';
import type { Instrument, WatchFolder } from './config.js';
import type { FolderFilter } from './discover.js';
import { folderIdentity, watchFolder, type FolderWatch } from './watchers.js';
import type { Sightings } from './sightings.js';

/** What the watches ask of the engine. */
export interface WatchesHost {
  /** Whether the harvest stopped: no watch is set up again. */
  stopped(): boolean;
  /** A watched folder's filter, with the storage folders and the data dir inside it left out. */
  filterOf(folder: WatchFolder): FolderFilter;
  /** Walks every folder of the instrument (a watch is up, or saw a burst of events). */
  rescan(instrument: Instrument): Promise<void>;
  /** The folder a watched folder is through a link (harvested.ts linkedFolders), or null. */
  linkedTo(folder: WatchFolder): string | null;
}

export class FolderWatches {
  private readonly watches = new Map<WatchFolder, FolderWatch>();

  constructor(
    private readonly log: Logger,
    private readonly sightings: Sightings,
    private readonly host: WatchesHost,
  ) {}

  start(instruments: readonly Instrument[]): void {
    for (const instrument of instruments) {
      for (const folder of instrument.watch) {
        if (this.host.linkedTo(folder) === null) this.watchOne(instrument, folder);
      }
    }
  }

  private watchOne(instrument: Instrument, folder: WatchFolder): void {
    const filter = this.host.filterOf(folder);
    try {
      this.watches.set(
        folder,
        watchFolder(folder, filter, {
          onPath: (path) => this.sightings.sighted(instrument, folder, filter, { paths: [path] }),
          onFolder: (path) => this.sightings.folderSighted(instrument, folder, filter, path),
          onError: (error) =>
            this.log.warn({ err: error, folder: folder.path }, 'harvest: watcher error'),
          onBurst: () => void this.host.rescan(instrument),
          onReady: () => void this.host.rescan(instrument),
        }),
      );
    } catch (error) {
      this.log.warn({ err: error, folder: folder.path }, 'harvest: cannot watch folder');
    }
  }

  /** renew for every watched folder, one after the other (timers.ts HarvestTimers.renew). */
  async renewAll(instruments: readonly Instrument[]): Promise<void> {
    for (const instrument of instruments) {
      for (const folder of instrument.watch) {
        if (this.host.linkedTo(folder) === null) await this.renew(instrument, folder);
      }
    }
  }

  async close(): Promise<void> {
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
  async renew(instrument: Instrument, folder: WatchFolder): Promise<void> {
    const watch = this.watches.get(folder);
    const watched = watch?.watched();
    if (!watch || watched === undefined || this.host.stopped()) return;
    const now = await folderIdentity(folder.path);
    if (now === watched || this.host.stopped() || this.watches.get(folder) !== watch) return;
    this.log.info({ folder: folder.path }, 'harvest: the watched folder appeared or was replaced');
    this.watchOne(instrument, folder);
    await watch.close();
  }
}
