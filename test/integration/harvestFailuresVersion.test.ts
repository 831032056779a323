/**
 * HarvestStatus.failures_version, on a real database: the Data tab reads the failure list again
 * when it changes, so it must change with every change of that list, and not with the other
 * files' transfers (a burst of completions).
 */
import { describe, expect, it } from 'vitest';
import { retryNow } from '../../electron/core/harvest/due.js';
import { finishTransfer, markGone, requeueFile } from '../../electron/core/harvest/records.js';
import { FAILURES_QUERY, idleHarvestStatus } from '../../electron/core/harvest/status.js';
import { getFileView } from '../../electron/core/harvest/views.js';
import { awaitHistory, takeHistoryPage } from '../../electron/core/sync/history.js';
import type { SyncHistoryFile } from '../../electron/core/sync/protocol.js';
import { newUuid } from '../../electron/core/util/ids.js';
import { completedAt, failedAt, fileNamed, stationDb } from './harvestRecordsFixture.js';

const T = '2026-03-02T10:00:00.000Z';
const failed = (retryAt: string | null) => failedAt(T, retryAt);
const completed = completedAt(T);

describe('failures_version', () => {
  it('changes with the failed files, and not with the others', () => {
    const db = stationDb(T);
    const version = (): string => idleHarvestStatus(db).failures_version;
    // Whether it differs from what it was at the last look.
    let last = '';
    const changed = (): boolean => {
      const before = last;
      last = version();
      return last !== before;
    };
    expect(changed()).toBe(true);

    const a = fileNamed(db, 'a.tif', T);
    const b = fileNamed(db, 'b.tif', T);
    // A file found, waiting: no failure.
    expect(changed()).toBe(false);
    finishTransfer(db, a, failed('2026-03-02T10:00:30.000Z'));
    expect(changed()).toBe(true);
    expect(idleHarvestStatus(db).failed).toBe(1);

    // A burst of other files completing leaves it as it is.
    for (let i = 0; i < 50; i += 1) finishTransfer(db, fileNamed(db, `f${i}.tif`, T), completed);
    expect(changed()).toBe(false);

    // Failing again (a new backoff), a Retry (due now), another file failing.
    finishTransfer(db, a, failed('2026-03-02T10:01:30.000Z'));
    expect(changed()).toBe(true);
    expect(retryNow(db, a)).toBe(true);
    expect(changed()).toBe(true);
    finishTransfer(db, b, failed(null));
    expect(changed()).toBe(true);

    // One leaves the list as another one enters it, between two reads: the count stays.
    const c = fileNamed(db, 'c.tif', T);
    finishTransfer(db, b, completed);
    finishTransfer(db, c, failed(null));
    expect(idleHarvestStatus(db).failed).toBe(2);
    expect(changed()).toBe(true);

    // Found again (requeued), or gone: no longer failed.
    requeueFile(db, a, 2, 1);
    expect(changed()).toBe(true);
    markGone(db, c);
    expect(changed()).toBe(true);
    expect(idleHarvestStatus(db).failed).toBe(0);
    db.close();
  });

  it('changes when a failure retried from elsewhere fails again before anyone read it', () => {
    const db = stationDb(T);
    const version = (): string => idleHarvestStatus(db).failures_version;
    // Not retried by itself (next_attempt_at null), and one with a backoff.
    const a = fileNamed(db, 'a.tif', T);
    finishTransfer(db, a, failed(null));
    const before = version();
    // Retry (the CLI, another window) and the same failure again, with no read between: the
    // next try is null again, the count and the ids as they were; the attempts are not.
    expect(retryNow(db, a)).toBe(true);
    finishTransfer(db, a, failed(null));
    expect(version()).not.toBe(before);
    expect(getFileView(db, a)?.attempts).toBe(2);
    db.close();
  });

  it('changes when an instrument or a storage location the list names is renamed', () => {
    const db = stationDb(T);
    db.prepare(
      `INSERT INTO storage_locations (uuid, name, type, base_path, created_at, updated_at)
         VALUES ('l1', 'nas', 'local', '/nas', ?, ?)`,
    ).run(T, T);
    const version = (): string => idleHarvestStatus(db).failures_version;
    const a = fileNamed(db, 'a.tif', T);
    finishTransfer(db, a, { ...failed(null), storageLocationId: 1, destinationPath: 'a.tif' });
    expect(getFileView(db, a)?.last_transfer?.storage_location).toBe('nas');

    const first = version();
    expect(version()).toBe(first);
    db.prepare("UPDATE instruments SET name = 'sem-north' WHERE id = 1").run();
    const renamed = version();
    expect(renamed).not.toBe(first);
    db.prepare("UPDATE storage_locations SET name = 'nas-2' WHERE id = 1").run();
    expect(version()).not.toBe(renamed);
    // The instrument's other columns (its last harvest, a sync's updated_at) leave it as it is.
    const now = version();
    db.prepare(`UPDATE instruments SET last_harvested_at = ?, updated_at = ? WHERE id = 1`).run(
      T,
      '2026-03-02T11:00:00.000Z',
    );
    expect(version()).toBe(now);
    db.close();
  });

  it('changes when a page of history gives a file failed here a transfer made elsewhere', () => {
    const db = stationDb(T);
    db.prepare(
      `INSERT INTO storage_locations (uuid, name, type, base_path, created_at, updated_at)
         VALUES ('l1', 'nas', 'local', '/nas', ?, ?)`,
    ).run(T, T);
    const version = (): string => idleHarvestStatus(db).failures_version;
    const a = fileNamed(db, 'a.tif', T);
    finishTransfer(db, a, failed(null));
    // Its partial could not be removed (the share went away): the record held here stays as
    // it is when the history brings a newer one (sync/history.ts), its transfers do not.
    db.prepare("UPDATE harvest_files SET partial_path = '/nas/.a.tif.x.partial' WHERE id = ?").run(
      a,
    );
    awaitHistory(db, 'i1');
    const before = version();
    const held = getFileView(db, a)!;
    const later = '2026-03-02T11:00:00.000Z';
    const elsewhere: SyncHistoryFile = {
      id: 1,
      uuid: held.uuid,
      persistent_id: held.persistent_id,
      persistent_id_type: 'ark',
      watch_path: '/src',
      source_path: '/src/a.tif',
      relative_path: 'a.tif',
      filename: 'a.tif',
      size: 1,
      mtime_ms: 0,
      xxhash: 'ab',
      hash_algorithm: held.hash_algorithm,
      first_discovered_at: T,
      usage_event_uuid: null,
      metadata_: {},
      state: 'done',
      updated_at: later,
      transfers: [
        {
          uuid: newUuid(),
          status: 'completed',
          storage_location_uuid: 'l1',
          destination_path: '/nas/a.tif',
          bytes_transferred: 1,
          dest_checksum: 'ab',
          checksum_verified: true,
          started_at: later,
          completed_at: later,
          error: '',
          note: '',
        },
      ],
    };
    expect(takeHistoryPage(db, 1, { files: [elsewhere], next: null })).toBe(true);
    const after = getFileView(db, a)!;
    expect(after).toMatchObject({ state: 'failed', attempts: held.attempts });
    expect(after.last_transfer).toMatchObject({ status: 'completed', storage_location: 'nas' });
    expect(version()).not.toBe(before);
    db.close();
  });

  it('is read from the index harvest_files_work alone (EXPLAIN QUERY PLAN)', () => {
    const db = stationDb(T);
    const plan = (
      db.prepare(`EXPLAIN QUERY PLAN ${FAILURES_QUERY}`).all() as { detail: string }[]
    ).map((r) => r.detail);
    expect(plan.join('\n')).toMatch(/USING COVERING INDEX harvest_files_work/);
    db.close();
  });
});
