/**
 * The instruments a harvester harvests now: the enabled instruments of the station's tool,
 * less those given by the server and still waiting for the records of their files made before
 * (sync/history.ts), with the folders their harvest leaves out of the watched trees
 * (leftOut.ts). Read again at each start and each reload of the configuration (engine.ts).
 */
import { dirname, resolve } from 'node:path';
import type { Db } from '../db/open.js';
import { cachedStatement } from '../db/statements.js';
import { historyPendingIds } from '../sync/history.js';
import type { Logger } from '../util/log.js';
import { instrumentsOfTool, type Instrument, type WatchFolder } from './config.js';
import { LeftOutFolders, type LeftOutPaths } from './leftOut.js';
import { foldersOverlap } from './storageGuard.js';

/**
 * The folders of each instrument that are, by real path, an earlier folder of it or overlap
 * one, though their paths as written do not (those the harvest takes as nested folders, the
 * inner one's files its own: intake.ts deeperFolderTakes): each with the earlier one's path.
 */
function linkedFolders(
  instruments: readonly Instrument[],
  real: ReadonlyMap<string, string>,
): Map<WatchFolder, string> {
  const linked = new Map<WatchFolder, string>();
  const realOf = (folder: WatchFolder): string => real.get(folder.path) ?? folder.path;
  for (const instrument of instruments) {
    instrument.watch.forEach((folder, at) => {
      const earlier = instrument.watch
        .slice(0, at)
        .find(
          (other) =>
            !linked.has(other) &&
            !foldersOverlap(other.path, folder.path) &&
            foldersOverlap(realOf(other), realOf(folder)),
        );
      if (earlier) linked.set(folder, earlier.path);
    });
  }
  return linked;
}

export class HarvestedInstruments {
  /** The instruments harvested; a new array at each load (guardStorage tells a reload by it). */
  list: Instrument[] = [];
  /** Enabled instruments not harvested until their history is here (load). */
  awaitingHistory: Instrument[] = [];
  /** The storage folders and the data dir inside watched folders, left out of their harvest. */
  readonly leftOut: LeftOutFolders;
  /**
   * Watched folders that are, through a link, another folder of their instrument or inside one
   * (or hold one), with that folder's path: not walked nor watched (guardStorage), or each of
   * their files would be recorded twice, under two ARKs, at two paths.
   */
  private linked = new Map<WatchFolder, string>();

  constructor(
    private readonly db: Db,
    log: Logger,
  ) {
    this.leftOut = new LeftOutFolders(log);
  }

  /** Reads the instruments of `tool` (none without one), and what their harvest leaves out. */
  load(tool: string | null): void {
    const enabled = tool === null ? [] : instrumentsOfTool(this.db, tool).filter((i) => i.enabled);
    // Given by the server and still waiting for the records of their files made before: left
    // alone until those are here, or their files would get new ARKs (sync/history.ts).
    const waiting = historyPendingIds(this.db);
    this.list = enabled.filter((i) => !waiting.has(i.id));
    this.awaitingHistory = enabled.filter((i) => waiting.has(i.id));
    this.leftOut.find(this.leftOutPaths());
    this.linked = new Map();
  }

  /** The folder `folder` is through a link (linked), or null: it is harvested. */
  linkedTo(folder: WatchFolder): string | null {
    return this.linked.get(folder) ?? null;
  }

  /** The paths, as written, whose overlaps leftOut looks for. */
  private leftOutPaths(): LeftOutPaths {
    const name = this.db.name;
    return {
      watched: this.list.flatMap((i) => i.watch),
      storageBases: cachedStatement(
        this.db,
        `SELECT base_path FROM storage_locations WHERE type = 'local'`,
      )
        .pluck()
        .all() as string[],
      // The folder of this station's database; none for one in memory (tests).
      dataDir: name === '' || name === ':memory:' ? null : resolve(dirname(name)),
    };
  }

  /**
   * The storage folders and the data dir inside watched folders by real path: a link can hide
   * them from the paths as written. Waits at most REAL_PATHS_MS (a share that hangs), keeping
   * the paths as written meanwhile.
   */
  async guardStorage(): Promise<void> {
    const instruments = this.list;
    const real = await this.leftOut.findByRealPath(
      this.leftOutPaths(),
      () => this.list === instruments,
    );
    if (real !== null) this.linked = linkedFolders(instruments, real);
  }

  /** A harvested instrument by id. */
  byId(id: number): Instrument | undefined {
    return this.list.find((i) => i.id === id);
  }

  /** The ids of the instruments harvested. */
  ids(): number[] {
    return this.list.map((i) => i.id);
  }
}
