/**
 * What the database alone tells of the harvest's status: today's totals, the failed files and
 * the version of the failure list, read every second while files are copied. The engine adds
 * its live state to it (engine.ts status), its instruments as instrumentsStatus shows them.
 */
import { createHash } from 'node:crypto';
import { isTestArk } from '../../../shared/ark.js';
import type { HarvestStatus } from '../../../shared/api.js';
import type { Db } from '../db/open.js';
import { cachedStatement } from '../db/statements.js';
import { HISTORY_PROBLEM } from '../sync/history.js';
import type { Instrument } from './config.js';
import { arkConfig } from './records.js';

/**
 * The files failed since a moment and failed still, by when their attempt ended (as completed
 * ones are counted): read from the failed transfers that ended since then (the index
 * harvest_transfers_failed_ended, which holds the file: the list is of distinct ids), each file
 * then looked up by its id; the unary + keeps SQLite from walking every failed file by
 * harvest_files_work instead, each looked up among its transfers (24 ms at 100,000 failed
 * files, against 0.03 ms with 100 failed today).
 */
export const FAILED_SINCE_QUERY = `SELECT count(*) FROM harvest_files f
  WHERE f.id IN (
    SELECT file_id FROM harvest_transfers
    WHERE status = 'failed' AND coalesce(completed_at, started_at) >= ?)
  AND +f.state = 'failed'`;

/** The transfers completed and skipped since a moment, by status (totalsSince). */
export const ENDED_SINCE_QUERY = `SELECT status, count(*) AS n, sum(bytes_transferred) AS bytes
  FROM harvest_transfers
  WHERE status IN ('completed', 'skipped') AND completed_at >= ? AND from_server = 0
  GROUP BY status`;

/**
 * Today's totals, `since` being the start of today (local time): transfers completed and
 * skipped that ended since then, the bytes completed, and the files that failed since then
 * and are failed still (FAILED_SINCE_QUERY: the status is read every second while files are
 * copied). Files, not attempts: a share down all day is one failed file per file,
 * however often each was tried, and a file that failed and then completed is not failed.
 */
export function totalsSince(
  db: Db,
  since: string,
): { completed: number; skipped: number; failed: number; bytes: number } {
  // Ended today: a copy that started before midnight and ended after it is today's. Found by
  // when it ended (the index harvest_transfers_ended, which answers alone). Made here: not
  // another station's, taken with an instrument's history.
  const ended = cachedStatement(db, ENDED_SINCE_QUERY).all(since) as {
    status: 'completed' | 'skipped';
    n: number;
    bytes: number | null;
  }[];
  const totals = { completed: 0, skipped: 0, failed: 0, bytes: 0 };
  for (const r of ended) {
    totals[r.status] = r.n;
    if (r.status === 'completed') totals.bytes = r.bytes ?? 0;
  }
  totals.failed = cachedStatement(db, FAILED_SINCE_QUERY).pluck().get(since) as number;
  return totals;
}

export const FAILURES_QUERY = `SELECT count(*) AS failed, total(id) AS ids,
    total(unixepoch(next_attempt_at, 'subsec')) AS due, total(attempts) AS attempts
  FROM harvest_files WHERE state = 'failed'`;

/**
 * What the failure list shows that is not its files' own: the names of every instrument and
 * every storage location (a failed transfer's destination), each with its id; and the history
 * pages taken (sync/history.ts: each moves its instrument's cursor on, the last one ends it),
 * which may add to a file failed here a transfer made elsewhere, its last transfer then,
 * without a failure here. A few rows: read whole, as the status is, not only the failed files'.
 */
export const FAILURES_CONTEXT_QUERY = `SELECT
    coalesce((SELECT group_concat(id || ' ' || name, char(10))
       FROM (SELECT id, name FROM instruments ORDER BY id)), '')
    || char(0) ||
    coalesce((SELECT group_concat(id || ' ' || name, char(10))
       FROM (SELECT id, name FROM storage_locations ORDER BY id)), '')
    || char(0) ||
    coalesce((SELECT group_concat(instrument_id || ' ' || after, char(10))
       FROM (SELECT instrument_id, after FROM harvest_history_pending ORDER BY instrument_id)), '')`;

/**
 * How many files are failed, and a version of what the failure list shows of them, which a
 * change of any of it moves on. The list shows each failed file's path (never changed), its
 * attempts, its next try and its last transfer (the reason, the storage location and the
 * destination: one made here is a new failure, which adds an attempt), its instrument's name
 * and its storage location's name; it holds the newest failed files. So: a file failing or no
 * longer failed changes the count and the sum of the ids; a file failing again its attempts
 * (also where its next_attempt_at comes out as it was: one not retried by itself, retried from
 * the CLI or another window and failed again before anyone read the status); a Retry its
 * next_attempt_at (now); a rename of an instrument or a storage location, or a page of an
 * instrument's history taken, the digest of FAILURES_CONTEXT_QUERY. The files' part is read
 * from the index harvest_files_work alone (state, next_attempt_at, attempts and the id): the
 * status is read every second while files are copied (17 ms at 100,000 failed files, 0.1 ms at
 * 1,000). Sums as floats (total), which never overflow; the same rows always give the same
 * text.
 */
function failures(db: Db): { failed: number; failures_version: string } {
  const row = cachedStatement(db, FAILURES_QUERY).get() as {
    failed: number;
    ids: number;
    due: number;
    attempts: number;
  };
  // No failed file, no list: the names cannot show, and a first failure moves the count.
  const context = row.failed
    ? (cachedStatement(db, FAILURES_CONTEXT_QUERY).pluck().get() as string)
    : undefined;
  const digest =
    context === undefined
      ? ''
      : createHash('sha1').update(context).digest('base64url').slice(0, 12);
  return {
    failed: row.failed,
    failures_version: `${row.failed}:${row.ids}:${row.due}:${row.attempts}:${digest}`,
  };
}

/**
 * What the database alone tells of the harvest: the Data tab's status where no engine runs, and
 * the base the engine adds its live state to.
 */
export function idleHarvestStatus(db: Db, now: number = Date.now()): HarvestStatus {
  const midnight = new Date(now);
  midnight.setHours(0, 0, 0, 0);
  const ark = arkConfig(db);
  return {
    running: false,
    problem: null,
    started: false,
    instruments: [],
    active: [],
    settling: 0,
    settling_files: [],
    queued: 0,
    ...failures(db),
    retriable: 0,
    today: totalsSince(db, midnight.toISOString()),
    ark: { ...ark, test: isTestArk(ark) },
    last_scan_at: null,
  };
}

/**
 * The instruments as the status shows them: those harvested, each with what its last walk
 * could not read (`problemOf`), then those waiting for their history (sync/history.ts).
 */
export function instrumentsStatus(
  harvested: readonly Instrument[],
  awaitingHistory: readonly Instrument[],
  problemOf: (instrumentId: number) => string | null,
): HarvestStatus['instruments'] {
  return [
    ...harvested.map((i) => ({ i, waiting: false })),
    ...awaitingHistory.map((i) => ({ i, waiting: true })),
  ].map(({ i, waiting }) => ({
    name: i.name,
    watch: i.watch.map((w) => w.path),
    storage: i.storage_location
      ? `${i.storage_location.name} (${i.storage_location.base_path})`
      : null,
    problem: waiting ? HISTORY_PROBLEM : problemOf(i.id),
    waiting_for_history: waiting,
  }));
}
