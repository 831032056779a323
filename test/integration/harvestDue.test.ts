/**
 * Which files a harvest tries now (harvest/due.ts dueFileIds), on a real station database:
 * failed files whose retry time has come, and those whose retry time a clock since set back
 * left further ahead than any backoff; and the plans of its two queries.
 */
import { describe, expect, it } from 'vitest';
import { dueFileIds, dueQueries } from '../../electron/core/harvest/due.js';
import { finishTransfer } from '../../electron/core/harvest/records.js';
import { failedAt, fileNamed, stationDb } from './harvestRecordsFixture.js';

const NOW = '2026-12-07T09:00:00.000Z';
const SET_BACK = '2026-12-07T10:01:00.000Z'; // now, the longest backoff (an hour) and a minute

describe('dueFileIds', () => {
  // Mutation: the setBack query left out: the file whose retry time lies a day ahead waited.
  it('takes failed files due now and those whose retry time lies beyond any backoff', () => {
    const db = stationDb(NOW);
    const retryAt = {
      'due.tif': '2026-12-07T08:59:00.000Z',
      'later.tif': '2026-12-07T09:30:00.000Z',
      'set-back.tif': '2026-12-08T09:00:00.000Z',
    };
    const ids: Record<string, number> = {};
    for (const [name, at] of Object.entries(retryAt)) {
      ids[name] = fileNamed(db, name, NOW);
      finishTransfer(db, ids[name], failedAt('2026-12-07T08:00:00.000Z', at));
    }
    const waiting = fileNamed(db, 'waiting.tif', NOW);
    expect(dueFileIds(db, NOW, [1], false, SET_BACK)).toEqual([
      ids['due.tif'],
      ids['set-back.tif'],
    ]);
    expect(dueFileIds(db, NOW, [1], true, SET_BACK)).toEqual([
      ids['due.tif'],
      ids['set-back.tif'],
      waiting,
    ]);
    expect(dueFileIds(db, NOW, [2], true, SET_BACK)).toEqual([]);
    db.close();
  });

  it('reads two ranges of harvest_files_work, not every file of the instruments (EXPLAIN QUERY PLAN)', () => {
    const db = stationDb(NOW);
    for (const waiting of [false, true]) {
      const { due, setBack } = dueQueries(2, waiting);
      const plan = (sql: string, ...args: unknown[]): string =>
        (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...args) as { detail: string }[])
          .map((r) => r.detail)
          .join('\n');
      const duePlan = plan(due, NOW, 1, 2);
      expect(duePlan).toMatch(/harvest_files_work \(state=\? AND next_attempt_at<\?\)/);
      expect(duePlan).not.toMatch(/harvest_files_source/);
      expect(plan(setBack, SET_BACK, 1, 2)).toMatch(
        /SEARCH harvest_files USING INDEX harvest_files_work \(state=\? AND next_attempt_at>\?\)/,
      );
    }
    db.close();
  });
});
