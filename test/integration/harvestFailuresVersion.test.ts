/**
 * HarvestStatus.failures_version, on a real database: the Data tab reads the failure list again
 * when it changes, so it must change with every change of that list, and not with the other
 * files' transfers (a burst of completions).
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../electron/core/db/open.js';
import {
  FAILURES_QUERY,
  finishTransfer,
  idleHarvestStatus,
  markGone,
  recordFile,
  requeueFile,
  retryNow,
  type TransferOutcome,
} from '../../electron/core/harvest/records.js';
import { tempDir } from './helpers.js';

const T = '2026-03-02T10:00:00.000Z';

function station(): ReturnType<typeof openDatabase> {
  const db = openDatabase(join(tempDir(), 'station.db'));
  db.exec(`
    INSERT INTO tools (uuid, name, created_at, updated_at) VALUES ('t1', 'SEM', '${T}', '${T}');
    INSERT INTO instruments (uuid, name, tool_id, destination_template, created_at, updated_at)
      VALUES ('i1', 'sem-1', 1, '{filename}', '${T}', '${T}');`);
  return db;
}

function fileNamed(db: ReturnType<typeof openDatabase>, name: string): number {
  return recordFile(db, {
    instrumentId: 1,
    watchPath: '/src',
    relativePath: name,
    sourcePath: `/src/${name}`,
    filename: name,
    size: 1,
    mtimeMs: 0,
    firstDiscoveredAt: T,
    usageEventId: null,
  });
}

const failed = (retryAt: string | null): TransferOutcome => ({
  status: 'failed',
  storageLocationId: null,
  destinationPath: null,
  bytes: 0,
  destChecksum: null,
  checksumVerified: false,
  startedAt: T,
  completedAt: T,
  error: 'storage not reachable',
  retryAt,
});

const completed: TransferOutcome = {
  status: 'completed',
  storageLocationId: null,
  destinationPath: 'x',
  bytes: 1,
  destChecksum: 'ab',
  checksumVerified: true,
  startedAt: T,
  completedAt: T,
};

describe('failures_version', () => {
  it('changes with the failed files, and not with the others', () => {
    const db = station();
    const version = (): string => idleHarvestStatus(db).failures_version;
    // Whether it differs from what it was at the last look.
    let last = '';
    const changed = (): boolean => {
      const before = last;
      last = version();
      return last !== before;
    };
    expect(changed()).toBe(true);

    const a = fileNamed(db, 'a.tif');
    const b = fileNamed(db, 'b.tif');
    // A file found, waiting: no failure.
    expect(changed()).toBe(false);
    finishTransfer(db, a, failed('2026-03-02T10:00:30.000Z'));
    expect(changed()).toBe(true);
    expect(idleHarvestStatus(db).failed).toBe(1);

    // A burst of other files completing leaves it as it is.
    for (let i = 0; i < 50; i += 1) finishTransfer(db, fileNamed(db, `f${i}.tif`), completed);
    expect(changed()).toBe(false);

    // Failing again (a new backoff), a Retry (due now), another file failing.
    finishTransfer(db, a, failed('2026-03-02T10:01:30.000Z'));
    expect(changed()).toBe(true);
    expect(retryNow(db, a)).toBe(true);
    expect(changed()).toBe(true);
    finishTransfer(db, b, failed(null));
    expect(changed()).toBe(true);

    // One leaves the list as another one enters it, between two reads: the count stays.
    const c = fileNamed(db, 'c.tif');
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

  it('is read from the index harvest_files_work alone (EXPLAIN QUERY PLAN)', () => {
    const db = station();
    const plan = (
      db.prepare(`EXPLAIN QUERY PLAN ${FAILURES_QUERY}`).all() as { detail: string }[]
    ).map((r) => r.detail);
    expect(plan.join('\n')).toMatch(/USING COVERING INDEX harvest_files_work/);
    db.close();
  });
});
