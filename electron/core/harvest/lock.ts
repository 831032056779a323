/**
 * One harvester per data dir. Two (a running station and a cron `labstation harvest --once`)
 * would each take the other's partial copies for leftovers of a crash and transfer the same
 * files twice.
 *
 * The lock is the operating system's file lock: `harvest.lock` is an empty SQLite database that
 * the owner holds exclusively (locking_mode EXCLUSIVE) for as long as it harvests. The system
 * drops the lock when the owner's process ends, however it ends, so nothing stale is left. The
 * lock used to be a file holding the owner's pid, and a pid outlives its process: after a
 * reboot, or at once on Windows, which hands pids out again soon, another program could hold
 * it, and no harvest would start until someone deleted the file.
 */
import { existsSync, mkdirSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { newDatabase, type Db } from '../db/open.js';
import { AppError, errorCode } from '../util/errors.js';
import { isRunning } from '../util/pid.js';

export interface HarvestLock {
  release(): void;
}

const TAKEN = 'another harvest runs on this data dir';
const STOP_IT = 'stop it first (a running station harvests by itself)';

/**
 * How long a held lock is waited for before it is refused. Windows drops a dead process's
 * locks soon, not at once, and a station started again right after a crash must not find its
 * own old lock; elsewhere the lock goes with the process.
 */
const WAIT_MS = process.platform === 'win32' ? 2000 : 0;

/**
 * The connections that hold a lock, until their release. A connection nothing refers to is
 * closed when the garbage collector takes it (better-sqlite3), and its lock goes with it: a
 * caller that kept only what it needed to release the lock, or nothing, would hold it only
 * until the next full collection, and a second harvest could then start beside it.
 */
const heldLocks = new Set<Db>();

/**
 * Holds `file` (an empty SQLite database, made if missing) locked exclusively until `release`;
 * throws SQLite's error (SQLITE_BUSY: another holder) when it cannot. The holder must not open
 * and close `file` in any other way while it holds the lock: on Linux and macOS, closing any
 * descriptor of a file drops every lock the process has on it.
 */
export function holdExclusive(file: string, waitMs = WAIT_MS, create = true): HarvestLock {
  let db: Db | null = null;
  try {
    // Created readable by its owner only, as the database is. Only if missing: opening and
    // closing the file here would drop a lock this process holds on it.
    if (create && !existsSync(file)) writeFileSync(file, '', { mode: 0o600, flag: 'a' });
    db = newDatabase(file, { timeout: waitMs, fileMustExist: !create });
    db.pragma('locking_mode = EXCLUSIVE');
    // No journal file beside the lock: a holder that is killed would leave it behind.
    db.pragma('journal_mode = MEMORY');
    // In exclusive locking mode the lock that BEGIN EXCLUSIVE takes outlives the transaction
    // and is held until the connection closes.
    db.exec('BEGIN EXCLUSIVE');
    db.exec('COMMIT');
    const held = db;
    heldLocks.add(held);
    return {
      release: () => {
        heldLocks.delete(held);
        held.close();
      },
    };
  } catch (error) {
    db?.close();
    throw error;
  }
}

/** Another station or server holds the data dir: nothing of it was touched. */
export class DataDirBusy extends AppError {
  constructor(dataDir: string) {
    super(
      'conflict',
      upgradeRuns(dataDir)
        ? `a Labstation command is upgrading the database of ${dataDir} to this version; ` +
            'start again when it has finished'
        : `another Labstation station or server runs on ${dataDir}; stop it first (one per data dir)`,
    );
  }
}

/**
 * Held (besides running.lock) by a one-shot command while it upgrades the data dir's database
 * (upgradeOnlyIfIdle), so that whoever finds running.lock taken meanwhile is told so, not that
 * a station runs there.
 */
const UPGRADE_LOCK = 'upgrade.lock';

/** Whether a command is upgrading the data dir's database now. */
function upgradeRuns(dataDir: string): boolean {
  try {
    holdExclusive(join(dataDir, UPGRADE_LOCK), 0, false).release();
    return false;
  } catch (error) {
    return errorCode(error) === 'SQLITE_BUSY';
  }
}

/**
 * One `station` or `serve` per data dir (`<data>/running.lock`, held as the harvest lock is):
 * two would answer on two ports from one database, sync it twice, and a server's mail worker
 * would send each e-mail twice. Commands that read or add to the data dir (`usage`, `import`,
 * `admin`, `harvest --once`) take no part in it.
 */
export function takeDataDirLock(dataDir: string): HarvestLock {
  try {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    return holdExclusive(join(dataDir, 'running.lock'));
  } catch (error) {
    if (errorCode(error) === 'SQLITE_BUSY') throw new DataDirBusy(dataDir);
    throw cannotLock(dataDir, error);
  }
}

/**
 * Why a data dir could not be locked, in words: a path that is a file (or lies below one) is
 * named so, rather than as a folder that is not writable.
 */
export function cannotLock(dataDir: string, error: unknown): AppError {
  const code = errorCode(error);
  if (code === 'EEXIST' || code === 'ENOTDIR') {
    return new AppError(
      'bad_request',
      `--data ${dataDir} is a file, or lies below one: give a folder for the data dir`,
    );
  }
  return new AppError(
    'internal',
    `cannot lock ${dataDir}: ${(error as Error).message} (the data dir must be writable)`,
  );
}

/**
 * For the commands that open a data dir beside a running station or server (`usage`, `files`,
 * `transfers`, `unlock`, `import`, `admin`, `mail`, `harvest --once`): a database older than
 * this build is upgraded only while no station or server runs on it (db/open.ts
 * beforeUpgrade), holding `<data>/running.lock` meanwhile. Upgraded under an older station,
 * it would keep writing to a schema it does not know, and refuse to start again; and the
 * migration's write lock failed its log-ons meanwhile.
 */
export function upgradeOnlyIfIdle(dataDir: string): (found: number, latest: number) => () => void {
  return (found, latest) => {
    let held: HarvestLock;
    try {
      held = holdExclusive(join(dataDir, 'running.lock'));
    } catch (error) {
      if (errorCode(error) !== 'SQLITE_BUSY') throw error;
      if (upgradeRuns(dataDir)) {
        throw new AppError(
          'conflict',
          `${dataDir} was written by an older Labstation (schema ${found}), and another ` +
            `command is upgrading it to ${latest} now: nothing was changed. Run this command ` +
            'again when it has finished',
        );
      }
      throw new AppError(
        'conflict',
        `${dataDir} was written by an older Labstation (schema ${found}; this one upgrades it ` +
          `to ${latest}), and a station or server runs on it: nothing was changed. Stop it, ` +
          'then start this version on the data dir (or run this command again) to upgrade it',
      );
    }
    let marker: HarvestLock | null = null;
    try {
      marker = holdExclusive(join(dataDir, UPGRADE_LOCK));
    } catch {
      // Only a better message for others rests on it: the upgrade goes on without.
    }
    return () => {
      marker?.release();
      held.release();
    };
  };
}

export function takeHarvestLock(file: string): HarvestLock {
  for (let attempt = 0; attempt < 3; attempt += 1) {
    try {
      return holdExclusive(file);
    } catch (error) {
      const code = errorCode(error);
      // SQLITE_BUSY from another process; from this one, SQLite refuses a second connection the
      // same way.
      if (code === 'SQLITE_BUSY') throw new AppError('conflict', `${TAKEN}; ${STOP_IT}`);
      if (code !== 'SQLITE_NOTADB') {
        throw new AppError(
          'internal',
          `cannot take the harvest lock ${file}: ${(error as Error).message} ` +
            '(the data dir must be writable)',
        );
      }
    }
    // A pid lock left by an earlier version. Its owner, if it still runs, holds no file lock:
    // only its pid tells. Emptied, not deleted: the file keeps its identity, so two harvests
    // that meet here both lock the same file and one of them is refused.
    let owner = Number.NaN;
    try {
      owner = Number(readFileSync(file, 'utf8').trim());
    } catch {
      continue;
    }
    if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && isRunning(owner)) {
      throw new AppError('conflict', `${TAKEN} (process ${owner}); ${STOP_IT}`);
    }
    truncateSync(file, 0);
  }
  throw new AppError('conflict', `cannot take the harvest lock ${file}`);
}
