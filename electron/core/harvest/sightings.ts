/**
 * The watcher's sightings: the paths and folders the watches report between walks, gathered
 * per watched folder and looked at in groups (listed and stat'ed in the service worker), their
 * files handed to the intake.
 */
import type { Logger } from '../util/log.js';
import type { Instrument, WatchFolder } from './config.js';
import { listFiles, statFiles } from './copyBatch.js';
import type { CopyPool } from './copyPool.js';
import {
  relativeTo,
  statFound,
  type FolderFilter,
  type FoundFile,
  type StatAll,
} from './discover.js';
import type { Intake } from './intake.js';
import { RecentListings } from './listings.js';
import { candidateKey, type Candidate, type StabilityChecks } from './stability.js';
import type { TransferQueue } from './transferQueue.js';

/** Paths the watcher reported in one watched folder, not looked at yet (Sightings.sighted). */
interface FolderSightings {
  instrument: Instrument;
  filter: FolderFilter;
  paths: Set<string>;
  folders: Set<string>;
}

/** Folders listed per request to the service worker (Sightings.lookAtSightings). */
const LIST_GROUP = 4;

/** A folder the watcher reports is read again this long after (Sightings.folderSighted). */
const FOLDER_SETTLE_MS = 1000;

/** What the sightings ask of the engine. */
export interface SightingsHost {
  /** Whether the harvest stopped: nothing more is looked at. */
  stopped(): boolean;
  /** Whether this instrument (this configuration of it) is harvested here now. */
  harvests(instrument: Instrument): boolean;
  /** The copy workers, once the harvest started them; null before. */
  pool(): CopyPool | null;
  /** The service worker's lstat of many files; in this thread without one. */
  statAll(): StatAll | undefined;
}

export class Sightings {
  private readonly sightings = new Map<WatchFolder, FolderSightings>();
  /** The second listings of new folders (folderSighted), ended with the watches. */
  private readonly relists = new Set<NodeJS.Timeout>();
  /**
   * The latest listing of each folder the watcher reported, for a few seconds: the next listing
   * of the folder skips what it held unchanged (listings.ts).
   */
  private readonly listings: RecentListings;
  private lookingAtSightings = false;

  constructor(
    private readonly log: Logger,
    /** Measures how long a folder's listing is kept (monotonic: util/clock.ts monotonicMs). */
    elapsed: () => number,
    private readonly stability: StabilityChecks,
    private readonly transfers: TransferQueue,
    private readonly intake: Intake,
    private readonly host: SightingsHost,
  ) {
    this.listings = new RecentListings(elapsed, 3 * FOLDER_SETTLE_MS);
  }

  /**
   * The watcher saw something happen to files (`paths`) or in folders (`folders`: the folder
   * appeared, or changed without naming what). Sightings are looked at in groups: a folder
   * copied or moved in is thousands of files at once, and a group's file-system calls go to the
   * service worker in one message, as the walk's do. The first sighting is looked at on the next
   * turn of the event loop; those that come meanwhile wait for the next group, so a lone file is
   * not held back.
   */
  sighted(
    instrument: Instrument,
    folder: WatchFolder,
    filter: FolderFilter,
    seen: { paths?: string[]; folders?: string[] },
  ): void {
    if (this.host.stopped()) return;
    let waiting = this.sightings.get(folder);
    if (!waiting) {
      waiting = { instrument, filter, paths: new Set(), folders: new Set() };
      this.sightings.set(folder, waiting);
    }
    for (const path of seen.paths ?? []) waiting.paths.add(path);
    for (const dir of seen.folders ?? []) waiting.folders.add(dir);
    if (this.lookingAtSightings) return;
    this.lookingAtSightings = true;
    setImmediate(() => void this.lookAtSightings());
  }

  /**
   * A folder appeared in the watched tree (made, or moved in with its files), or changed
   * without naming what: its files are read now, and once more after FOLDER_SETTLE_MS. Some
   * watches report a new folder before they watch it (chokidar polling, Node's recursive watch
   * on Linux; watchers.ts); a file made in it between the first read and that watch shows up in
   * the second read, not at the next walk minutes later. Its subfolders are reported one by one.
   */
  folderSighted(
    instrument: Instrument,
    folder: WatchFolder,
    filter: FolderFilter,
    dir: string,
  ): void {
    this.sighted(instrument, folder, filter, { folders: [dir] });
    const again = setTimeout(() => {
      this.relists.delete(again);
      this.sighted(instrument, folder, filter, { folders: [dir] });
    }, FOLDER_SETTLE_MS);
    again.unref();
    this.relists.add(again);
  }

  /**
   * Drops what the watches saw and has not been looked at, when they stop or are set up again:
   * the walk that follows a new setup finds it, with the new configuration.
   */
  forget(): void {
    this.sightings.clear();
    for (const timer of this.relists) clearTimeout(timer);
    this.relists.clear();
    this.listings.clear();
  }

  private async lookAtSightings(): Promise<void> {
    try {
      while (this.sightings.size && !this.host.stopped()) {
        const [folder, waiting] = this.sightings.entries().next().value as [
          WatchFolder,
          FolderSightings,
        ];
        this.sightings.delete(folder);
        try {
          await this.lookAt(folder, waiting);
        } catch (error) {
          // The service worker or the database failed: the next walk finds what this group
          // would have. The others are still looked at.
          if (!this.host.stopped()) {
            this.log.warn(
              { err: error, folder: folder.path },
              'harvest: files the watcher saw are left to the next walk',
            );
          }
        }
      }
    } finally {
      this.lookingAtSightings = false;
    }
  }

  private async lookAt(folder: WatchFolder, waiting: FolderSightings): Promise<void> {
    const { instrument, filter } = waiting;
    // Sightings of an instrument no longer harvested here (the configuration changed while they
    // waited) are dropped: the walk after the change finds what the new one wants.
    const current = (): boolean => this.host.harvests(instrument);
    // A file being copied is left to its copy, which sees a change. The folder's filter holds
    // for every path.
    const accepted = (path: string): string | null => {
      if (this.transfers.reads(instrument, path)) return null;
      const rel = relativeTo(folder.path, path);
      return filter.accepts(rel) ? rel : null;
    };
    const take = (found: FoundFile[]): void => this.intake.take(instrument, folder, found);
    // A few folders per request, each group taken as it is listed: the first files of a tree
    // moved in are copied while the rest is listed. A listed candidate is considered again with
    // its size and mtime, which restart its window only if they changed.
    const dirs = [...waiting.folders];
    for (let at = 0; at < dirs.length && current(); at += LIST_GROUP) {
      const group = dirs.slice(at, at + LIST_GROUP);
      const pool = this.host.pool();
      const listed = pool ? await pool.list(group) : listFiles(group);
      if (!current()) return;
      // Files being copied are left to their copy, and not remembered: the next listing looks.
      const left = new Set<string>();
      take(
        group.flatMap((dir, i) =>
          this.listings.newSince(folder, dir, listed[i]).flatMap((file) => {
            if (this.transfers.reads(instrument, file.path)) {
              left.add(file.path);
              return [];
            }
            const rel = accepted(file.path);
            return rel === null ? [] : [{ ...file, absolutePath: file.path, relativePath: rel }];
          }),
        ),
      );
      group.forEach((dir, i) => this.listings.remember(folder, dir, listed[i], left));
    }
    // An event for a candidate is a change: its window starts again now, with no stat
    // (stability.ts written). Links are not followed (statFiles uses lstat, as the walk does).
    const growing: Candidate[] = [];
    const files = [...waiting.paths].flatMap((path) => {
      if (this.stability.written(candidateKey(instrument, path), growing)) return [];
      const rel = accepted(path);
      return rel === null ? [] : [{ path, rel }];
    });
    if (growing.length && current()) {
      await this.stability.readSizes(instrument, growing, this.host.statAll() ?? statFiles);
    }
    if (!files.length || !current()) return;
    const found = await statFound(files, this.host.statAll());
    if (current()) take(found);
  }
}
