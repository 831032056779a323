/**
 * HarvestStatus.today.failed, on a real database: the files that failed since the start of the
 * day and are failed still, counted from today's failures (an index of failed transfers by
 * started_at), not by looking at every failed file: the status is read every second while
 * files are copied, and failed files pile up over the days.
 */
import { describe, expect, it } from 'vitest';
import { finishTransfer, requeueFile } from '../../electron/core/harvest/records.js';
import {
  ENDED_SINCE_QUERY,
  FAILED_SINCE_QUERY,
  totalsSince,
} from '../../electron/core/harvest/status.js';
import { awaitHistory, takeHistoryPage } from '../../electron/core/sync/history.js';
import type { SyncHistoryFile } from '../../electron/core/sync/protocol.js';
import { newUuid } from '../../electron/core/util/ids.js';
import { completedAt, failedAt, fileNamed, stationDb } from './harvestRecordsFixture.js';

const YESTERDAY = '2026-03-01T10:00:00.000Z';
const MIDNIGHT = '2026-03-02T00:00:00.000Z';
const TODAY = '2026-03-02T10:00:00.000Z';
const completed = completedAt(TODAY);

describe('today.failed', () => {
  it('counts the files failed since the start of the day and failed still, once each', () => {
    const db = stationDb(TODAY);
    const failedToday = (): number => totalsSince(db, MIDNIGHT).failed;
    expect(failedToday()).toBe(0);

    // Failed yesterday and not tried since: not today's.
    const old = fileNamed(db, 'old.tif', YESTERDAY);
    finishTransfer(db, old, failedAt(YESTERDAY));
    expect(failedToday()).toBe(0);

    // Failed yesterday and again today, twice: one file.
    finishTransfer(db, old, failedAt(TODAY));
    finishTransfer(db, old, failedAt('2026-03-02T11:00:00.000Z'));
    expect(failedToday()).toBe(1);

    // Another failing today, then completing: not failed.
    const b = fileNamed(db, 'b.tif', YESTERDAY);
    finishTransfer(db, b, failedAt(TODAY));
    expect(failedToday()).toBe(2);
    finishTransfer(db, b, completed);
    expect(failedToday()).toBe(1);

    // Started before midnight and failed after it: today's (by when it ended), as a completed
    // one is; it was in neither day's count.
    const overnight = fileNamed(db, 'overnight.mrc', YESTERDAY);
    finishTransfer(db, overnight, {
      ...failedAt('2026-03-01T23:50:00.000Z'),
      completedAt: '2026-03-02T00:20:00.000Z',
    });
    expect(failedToday()).toBe(2);
    finishTransfer(db, overnight, completed);
    expect(failedToday()).toBe(1);

    // Found again (waiting): no longer failed.
    const c = fileNamed(db, 'c.tif', YESTERDAY);
    finishTransfer(db, c, failedAt(TODAY));
    expect(failedToday()).toBe(2);
    requeueFile(db, c, 2, 1);
    expect(failedToday()).toBe(1);
    db.close();
  });

  // Mutation: completed and skipped counted by their start, as they were: the copy that ran
  // over midnight was in neither day's totals.
  it("counts a transfer by the day it ended: one that ran over midnight is today's", () => {
    const db = stationDb(TODAY);
    const yesterday = fileNamed(db, 'yesterday.tif', YESTERDAY);
    finishTransfer(db, yesterday, completedAt(YESTERDAY));
    const overnight = fileNamed(db, 'overnight.mrc', YESTERDAY);
    finishTransfer(db, overnight, {
      ...completedAt('2026-03-01T23:50:00.000Z'),
      bytes: 5_000,
      completedAt: '2026-03-02T00:20:00.000Z',
    });
    const today = fileNamed(db, 'today.tif', TODAY);
    finishTransfer(db, today, { ...completed, status: 'skipped' });
    expect(totalsSince(db, MIDNIGHT)).toEqual({
      completed: 1,
      skipped: 1,
      failed: 0,
      bytes: 5_000,
    });
    db.close();
  });

  // Mutation: totalsSince counting every transfer stored, another station's too.
  it("counts the copies made here, not another station's taken with an instrument's history", () => {
    const db = stationDb(TODAY);
    const here = fileNamed(db, 'here.tif', TODAY);
    finishTransfer(db, here, { ...completed, bytes: 100 });
    awaitHistory(db, 'i1');
    const made = (name: string): SyncHistoryFile => ({
      id: 1,
      uuid: newUuid(),
      persistent_id: 'ark:99999/fk4elsewhere' + name.length,
      persistent_id_type: 'ark',
      watch_path: '/src',
      source_path: `/src/${name}`,
      relative_path: name,
      filename: name,
      size: 7_000,
      mtime_ms: 0,
      xxhash: 'ab',
      hash_algorithm: 'xxh3-128',
      first_discovered_at: TODAY,
      usage_event_uuid: null,
      metadata_: {},
      state: 'done',
      updated_at: TODAY,
      transfers: [
        {
          uuid: newUuid(),
          status: 'completed',
          storage_location_uuid: null,
          destination_path: `/nas/${name}`,
          bytes_transferred: 7_000,
          dest_checksum: 'ab',
          checksum_verified: true,
          started_at: TODAY,
          completed_at: TODAY,
          error: '',
          note: '',
        },
      ],
    });
    expect(takeHistoryPage(db, 1, { files: [made('morning.tif')], next: null })).toBe(true);
    expect(db.prepare('SELECT count(*) FROM harvest_transfers').pluck().get()).toBe(2);
    expect(totalsSince(db, MIDNIGHT)).toMatchObject({ completed: 1, bytes: 100 });
    db.close();
  });

  it("is read from today's failed transfers, then each file by its id (EXPLAIN QUERY PLAN)", () => {
    const db = stationDb(TODAY);
    const plan = (
      db.prepare(`EXPLAIN QUERY PLAN ${FAILED_SINCE_QUERY}`).all(MIDNIGHT) as { detail: string }[]
    )
      .map((r) => r.detail)
      .join('\n');
    // Not a walk over every failed file (by harvest_files_work), each looked up in the transfers.
    expect(plan).not.toMatch(/harvest_files_work/);
    // Today's endings alone, from the index (covering: no row of yesterday's read).
    expect(plan).toMatch(/USING COVERING INDEX harvest_transfers_failed_ended \(<expr>>\?\)/);
    expect(plan).toMatch(/SEARCH f USING INTEGER PRIMARY KEY \(rowid=\?\)/);
    // And those completed or skipped: today's endings alone, the index answering.
    const ended = (
      db.prepare(`EXPLAIN QUERY PLAN ${ENDED_SINCE_QUERY}`).all(MIDNIGHT) as { detail: string }[]
    )
      .map((r) => r.detail)
      .join('\n');
    expect(ended).toMatch(/USING COVERING INDEX harvest_transfers_ended \(completed_at>\?\)/);
    db.close();
  });
});
