/**
 * A data dir a starting command may be the first to fill, and how a failed start leaves it as
 * it was found.
 */
import { existsSync, rmdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { DataDirBusy } from '../core/harvest/lock.js';

/** The files a start makes in a data dir (the database, its journal, the locks, the token). */
const STARTED_FILES = [
  'labstation.db',
  'labstation.db-wal',
  'labstation.db-shm',
  'rpc-token',
  'running.lock',
  'harvest.lock',
];

/**
 * A data dir a command may be the first to fill. Should the command fail, `undo` leaves it as
 * it was found, not holding a database that would make it look set up: the files of
 * STARTED_FILES that were not there, then the folders this run made, if empty. Anything else
 * put there meanwhile stays, and so do the folders holding it. Never throws: the command's own
 * error is the one to report.
 */
export function firstFill(dataDir: string): { undo(): void } {
  if (existsSync(join(dataDir, 'labstation.db'))) return { undo: () => undefined };
  const made = STARTED_FILES.filter((name) => !existsSync(join(dataDir, name)));
  // The folders the open would make, innermost first.
  const madeDirs: string[] = [];
  for (let dir = dataDir; !existsSync(dir) && dirname(dir) !== dir; dir = dirname(dir)) {
    madeDirs.push(dir);
  }
  return {
    undo() {
      try {
        for (const name of made) rmSync(join(dataDir, name), { force: true });
        for (const dir of madeDirs) rmdirSync(dir);
      } catch {
        // Something else is there, or cannot be removed: it stays.
      }
    },
  };
}

/** Undoes `fill` unless another process holds the data dir (then nothing here was made). */
export function undoUnlessBusy(fill: { undo(): void }): (error: unknown) => never {
  return (error) => {
    if (!(error instanceof DataDirBusy)) fill.undo();
    throw error;
  };
}
