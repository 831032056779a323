/**
 * A data dir a starting command may be the first to fill, and how a failed start leaves it as
 * it was found.
 *
 * The commands that may be first (`station`, `serve`, `import`) take turns at it: each holds
 * `<data>/fill.lock` (the system's file lock, as running.lock) from before it looks for the
 * database until its start has succeeded or been undone. Without that, an `import` into a new
 * data dir beside a `station` starting there (allowed: an import may run beside a station)
 * could write its bundle into the database the start made, and the start, failing then (a
 * port in use), deleted it all: the import said it had imported, and nothing was left.
 */
import { existsSync, mkdirSync, rmdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { cannotLock, DataDirBusy, holdExclusive, type HarvestLock } from '../core/harvest/lock.js';
import { AppError, errorCode } from '../core/util/errors.js';

const FILL_LOCK = 'fill.lock';
/** How long a command waits for another's first fill (a station's start, an import). */
const FILL_WAIT_MS = 60_000;

/** The files a start makes in a data dir (the database, its journal, the locks, the token). */
const STARTED_FILES = [
  'labstation.db',
  'labstation.db-wal',
  'labstation.db-shm',
  'rpc-token',
  'running.lock',
  'upgrade.lock',
  'harvest.lock',
];

export interface FirstFill {
  /** The command succeeded: what it made stays, and the next command may go on. */
  done(): void;
  /**
   * The command failed: a data dir this one was the first to fill is left as it was found, not
   * holding a database that would make it look set up: the files of STARTED_FILES that were
   * not there, then the folders this run made, if empty. Anything else put there meanwhile
   * stays, and so do the folders holding it. Never throws: the command's own error is the one
   * to report.
   */
  undo(): void;
}

/** Another command's first fill of `dataDir` held its lock past FILL_WAIT_MS. */
function stillFilling(dataDir: string): AppError {
  return new AppError(
    'conflict',
    `another Labstation command has been setting up ${dataDir} for a minute; ` +
      'try again once it is done',
  );
}

/**
 * Waits for any other command's first fill of `dataDir`, then tells whether this one is the
 * first to fill it (`labstation.db` is not there); until done() or undo(), others wait.
 */
export function firstFill(dataDir: string): FirstFill {
  const madeDirs = new Set<string>();
  let lock: HarvestLock;
  try {
    lock = takeFillLock(dataDir, madeDirs);
  } catch (error) {
    if (errorCode(error) === 'SQLITE_BUSY') throw stillFilling(dataDir);
    throw cannotLock(dataDir, error);
  }
  if (existsSync(join(dataDir, 'labstation.db'))) {
    // Set up already (maybe by the command this one waited for): nothing to undo.
    lock.release();
    return { done: () => undefined, undo: () => undefined };
  }
  const made = STARTED_FILES.filter((name) => !existsSync(join(dataDir, name)));
  let settled = false;
  return {
    done() {
      if (settled) return;
      settled = true;
      lock.release();
    },
    undo() {
      if (settled) return;
      settled = true;
      try {
        for (const name of made) rmSync(join(dataDir, name), { force: true });
        // The lock's file goes while this one still holds it: a command waiting for it then
        // finds it gone and takes a new one (takeFillLock).
        rmSync(join(dataDir, FILL_LOCK), { force: true });
      } catch {
        // Something cannot be removed (a file open elsewhere, on Windows): it stays.
      }
      lock.release();
      try {
        // Where a file held open cannot be removed (Windows), once more now that it is not.
        rmSync(join(dataDir, FILL_LOCK), { force: true });
      } catch {
        // Another command waits on it (it takes it over), or it cannot be removed: it stays.
      }
      try {
        // Innermost first.
        for (const dir of [...madeDirs].sort((a, b) => b.length - a.length)) rmdirSync(dir);
      } catch {
        // Something else is there, or cannot be removed: it stays.
      }
    },
  };
}

/**
 * Holds `<dataDir>/fill.lock`, noting in `madeDirs` the folders made for it. A lock taken on
 * a file that an undo removed meanwhile (this one waited on it, and got it once the undo let
 * go) is no lock: let go, and take the one there now.
 */
function takeFillLock(dataDir: string, madeDirs: Set<string>): HarvestLock {
  const file = join(dataDir, FILL_LOCK);
  for (;;) {
    let before;
    try {
      const first = mkdirSync(dataDir, { recursive: true, mode: 0o700 });
      if (first !== undefined) {
        for (let dir = dataDir; dir.length >= first.length; dir = dirname(dir)) madeDirs.add(dir);
      }
      writeFileSync(file, '', { mode: 0o600, flag: 'a' });
      before = statSync(file);
    } catch (error) {
      // The folder went (an undo removed it) between the two: make it again.
      if (errorCode(error) === 'ENOENT') continue;
      throw error;
    }
    const lock = holdExclusive(file, FILL_WAIT_MS);
    const now = statSync(file, { throwIfNoEntry: false });
    if (now?.ino === before.ino && now.birthtimeMs === before.birthtimeMs) return lock;
    lock.release();
  }
}

/**
 * For a command that reads or adds to a data dir set up already (`usage`, `files`, `admin`,
 * `harvest --once`): waits while another command fills it for the first time (a `serve`
 * starting), so that what this one writes is not in a database that a failed start removes.
 * The data dir is neither made nor changed.
 */
export function waitForFirstFill(dataDir: string): void {
  const file = join(dataDir, FILL_LOCK);
  if (!existsSync(file)) return;
  let lock: HarvestLock;
  try {
    lock = holdExclusive(file, FILL_WAIT_MS, false);
  } catch (error) {
    if (errorCode(error) === 'SQLITE_BUSY') throw stillFilling(dataDir);
    // Gone meanwhile (a start undone): the caller finds no database.
    return;
  }
  lock.release();
}

/** Undoes `fill` unless another process holds the data dir (then nothing here was made). */
export function undoUnlessBusy(fill: FirstFill): (error: unknown) => never {
  return (error) => {
    if (!(error instanceof DataDirBusy)) fill.undo();
    else fill.done();
    throw error;
  };
}

/**
 * Refuses a data dir whose labstation.db is an empty file (made by hand, or left by a copy that
 * failed): SQLite would take it for a new database, and a command that only reads would make
 * it a data dir of its own kind (a server's, for `mail list`).
 */
export function refuseEmptyDatabase(dataDir: string): void {
  const file = join(dataDir, 'labstation.db');
  if (statSync(file, { throwIfNoEntry: false })?.size === 0) {
    throw new AppError(
      'not_found',
      `${file} is an empty file, not a Labstation database: remove it, or give the data dir it ` +
        'was copied from',
    );
  }
}
