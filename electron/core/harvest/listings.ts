/**
 * The folders the watcher reported, as listed a moment ago. A folder the watcher reports is
 * listed twice (sightings.ts folderSighted), and a file the first listing held unchanged was taken
 * then, or turned down by the watched folder's filter: its candidate, its copy or its record
 * already stands for it, and looking its record up again cost a query per file (a tree of
 * 10,000 files moved in: 0.14 s of the engine's thread, and about 0.3 s with the garbage it
 * made). Only listings are passed over so: a file written, made or moved has an event of its
 * own (sightings.ts lookAt's paths).
 */
import type { WatchFolder } from './config.js';
import type { ListedFile } from './copyBatch.js';

/** The files remembered, at most. */
const LISTED_MAX = 200_000;

export class RecentListings {
  /** By watched folder and folder listed (key), oldest first. */
  private readonly listings = new Map<string, { at: number; files: Map<string, ListedFile> }>();
  private listedFiles = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly folderIds = new Map<WatchFolder, number>();

  /**
   * @param keptMs how long a folder's listing is remembered, for the next listing to skip what
   * it held
   */
  constructor(
    private readonly clock: () => number,
    private readonly keptMs: number,
  ) {}

  /**
   * The files of a folder's listing that its listing a moment ago (remember), for the same
   * watched folder, did not hold with this size, mtime and inode: all of them when there was
   * none within keptMs.
   */
  newSince(folder: WatchFolder, dir: string, files: ListedFile[]): ListedFile[] {
    const before = this.listings.get(this.key(folder, dir));
    if (!before || this.clock() - before.at > this.keptMs) return files;
    return files.filter((f) => {
      const was = before.files.get(f.path);
      return !was || was.size !== f.size || was.mtimeMs !== f.mtimeMs || was.ino !== f.ino;
    });
  }

  /**
   * Keeps a folder's listing for newSince, once its files were taken (a listing whose files
   * could not be taken, the database failing, is not kept: the next one takes them), but for
   * those left to a copy under way (`left`), which the next listing looks at again. Listings
   * older than keptMs are dropped meanwhile, and by a timer when no more come.
   */
  remember(folder: WatchFolder, dir: string, files: ListedFile[], left: Set<string>): void {
    const kept = left.size ? files.filter((f) => !left.has(f.path)) : files;
    this.prune(kept.length);
    const key = this.key(folder, dir);
    const old = this.listings.get(key);
    if (old) {
      this.listings.delete(key);
      this.listedFiles -= old.files.size;
    }
    if (this.listedFiles + kept.length > LISTED_MAX) return;
    this.listings.set(key, { at: this.clock(), files: new Map(kept.map((f) => [f.path, f])) });
    this.listedFiles += kept.length;
    this.pruneLater();
  }

  /** Forgets every listing (the watches stopped, or are set up anew). */
  clear(): void {
    this.listings.clear();
    this.listedFiles = 0;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.folderIds.clear();
  }

  /**
   * A listing's key: the watched folder (each has its own filter; one instrument may watch a
   * folder and one inside it, or the same one twice) and the folder listed.
   */
  private key(folder: WatchFolder, dir: string): string {
    let id = this.folderIds.get(folder);
    if (id === undefined) {
      id = this.folderIds.size + 1;
      this.folderIds.set(folder, id);
    }
    return `${id}\0${dir}`;
  }

  /** Drops the listings once they are past keptMs, though no listing comes after. */
  private pruneLater(): void {
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.prune(0);
      if (this.listings.size) this.pruneLater();
    }, this.keptMs + 100).unref();
  }

  /** Drops the listings past keptMs, and the oldest while `room` more would not fit. */
  private prune(room: number): void {
    const now = this.clock();
    for (const [key, kept] of this.listings) {
      if (now - kept.at <= this.keptMs && this.listedFiles + room <= LISTED_MAX) break;
      this.listings.delete(key);
      this.listedFiles -= kept.files.size;
    }
  }
}
