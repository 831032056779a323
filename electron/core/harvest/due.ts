/**
 * Which files a harvest tries now: those whose transfer is due (failed ones whose backoff has
 * run out; after a start or a walk, waiting ones), and failed ones made due now by Retry and
 * Retry all (retries.ts), their backoff started over. The file records themselves: records.ts.
 */
import type { Db } from '../db/open.js';
import { cachedStatement } from '../db/statements.js';
import { AppError } from '../util/errors.js';
import { nowIso } from '../util/ids.js';
import { fileById, NEXT_UPDATED_AT } from './records.js';

/**
 * Ids of files whose transfer is due: failed ones whose retry time has come, and (after a
 * start or a walk) waiting ones. Ids only: this runs on every stability tick.
 *
 * A retry time later than `setBack` (now and the longest backoff) was set by the PC's clock
 * before it was set back: due now too. Waited for, a clock set back a day held every failed
 * file for that day on top of its backoff.
 */
export function dueFileIds(
  db: Db,
  now: string,
  instrumentIds: number[],
  includeWaiting: boolean,
  setBack: string,
): number[] {
  if (!instrumentIds.length) return [];
  const queries = dueQueries(instrumentIds.length, includeWaiting);
  const due = cachedStatement(db, queries.due)
    .pluck()
    .all(now, ...instrumentIds) as number[];
  const setBackDue = cachedStatement(db, queries.setBack)
    .pluck()
    .all(setBack, ...instrumentIds) as number[];
  return [...due, ...setBackDue].sort((a, b) => a - b);
}

/**
 * dueFileIds's two queries, for `instruments` instruments. Apart: in one OR, SQLite's plan read
 * every file of the instruments; alone, each is a range of harvest_files_work, the second
 * nearly always empty (a test checks both plans).
 */
export function dueQueries(
  instruments: number,
  includeWaiting: boolean,
): { due: string; setBack: string } {
  const states = includeWaiting
    ? `(state = 'waiting' OR (state = 'failed' AND next_attempt_at <= ?))`
    : `state = 'failed' AND next_attempt_at <= ?`;
  const among = `instrument_id IN (${Array.from({ length: instruments }, () => '?').join(', ')})`;
  return {
    due: `SELECT id FROM harvest_files WHERE ${states} AND ${among}`,
    setBack: `SELECT id FROM harvest_files WHERE state = 'failed' AND next_attempt_at > ? AND ${among}`,
  };
}

/**
 * Every failed file of these instruments, made due now (Retry all), its backoff started over
 * (retried_at_attempts): their ids.
 */
export function retryAllNow(db: Db, instrumentIds: number[]): number[] {
  if (!instrumentIds.length) return [];
  return cachedStatement(
    db,
    `UPDATE harvest_files SET next_attempt_at = ?, retried_at_attempts = attempts,
       updated_at = ${NEXT_UPDATED_AT}
       WHERE state = 'failed' AND instrument_id IN (${instrumentIds.map(() => '?').join(', ')})
     RETURNING id`,
  )
    .pluck()
    .all(nowIso(), nowIso(), ...instrumentIds) as number[];
}

/** How many files retryAllNow would make due, less those `busy` (being tried already). */
export function countRetriable(db: Db, instrumentIds: number[], busy: number[]): number {
  if (!instrumentIds.length) return 0;
  return cachedStatement(
    db,
    `SELECT count(*) FROM harvest_files
       WHERE state = 'failed' AND instrument_id IN (${instrumentIds.map(() => '?').join(', ')})
         AND id NOT IN (SELECT value FROM json_each(?))`,
  )
    .pluck()
    .get(...instrumentIds, JSON.stringify(busy)) as number;
}

/** A failed file made due now (Retry), its backoff started over (retried_at_attempts). */
export function retryNow(db: Db, fileId: number): boolean {
  return (
    cachedStatement(
      db,
      `UPDATE harvest_files SET next_attempt_at = ?, retried_at_attempts = attempts,
         updated_at = ${NEXT_UPDATED_AT}
         WHERE id = ? AND state = 'failed'`,
    ).run(nowIso(), nowIso(), fileId).changes === 1
  );
}

/** What a call naming a file that no record has is refused with (404). */
export function noSuchFile(fileId: number): AppError {
  return new AppError('not_found', `no harvested file with id ${fileId}`);
}

/**
 * retryNow, refused (409) for a file that is not failed now (retried or completed meanwhile),
 * and (404) for one that no record has.
 */
export function retryNowOrRefuse(db: Db, fileId: number): void {
  if (!retryNow(db, fileId)) {
    if (!fileById(db, fileId)) throw noSuchFile(fileId);
    throw new AppError(
      'conflict',
      `file ${fileId} has no failed transfer to retry (retried or completed meanwhile)`,
    );
  }
}
