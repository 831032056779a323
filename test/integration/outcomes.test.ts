/**
 * The transfers' outcomes in group commits (outcomes.ts), on a real station database: those
 * that come within a few milliseconds are stored together, a full group at once, and one that
 * is refused does not take the others with it.
 */
import { describe, expect, it } from 'vitest';
import type { Db } from '../../electron/core/db/open.js';
import { GROUP_COMMIT_MAX, OutcomeCommits } from '../../electron/core/harvest/outcomes.js';
import { completedAt, fileNamed, stationDb } from './harvestRecordsFixture.js';

const AT = '2026-03-02T10:00:00.000Z';

const transfers = (db: Db): number =>
  db.prepare('SELECT count(*) FROM harvest_transfers').pluck().get() as number;

describe('OutcomeCommits', () => {
  it('stores the outcomes that come together in one group, after a few milliseconds', async () => {
    const db = stationDb(AT);
    const commits = new OutcomeCommits(db, () => false);
    const ids = ['a.tif', 'b.tif', 'c.tif'].map((name) => fileNamed(db, name, AT));
    const stored = ids.map((id) => commits.record(id, completedAt(AT)));
    // Not yet: the group waits for more.
    expect(transfers(db)).toBe(0);
    await Promise.all(stored);
    expect(transfers(db)).toBe(3);
  });

  it('stores a full group at once', async () => {
    const db = stationDb(AT);
    const commits = new OutcomeCommits(db, () => false);
    const stored: Promise<void>[] = [];
    for (let i = 0; i < GROUP_COMMIT_MAX - 1; i += 1) {
      stored.push(commits.record(fileNamed(db, `f${i}.tif`, AT), completedAt(AT)));
    }
    expect(transfers(db)).toBe(0);
    stored.push(commits.record(fileNamed(db, 'last.tif', AT), completedAt(AT)));
    expect(transfers(db)).toBe(GROUP_COMMIT_MAX);
    await Promise.all(stored);
  });

  it('refuses the outcome the database refuses, and stores the others of its group', async () => {
    const db = stationDb(AT);
    const commits = new OutcomeCommits(db, () => false);
    const a = fileNamed(db, 'a.tif', AT);
    const b = fileNamed(db, 'b.tif', AT);
    const results = await Promise.allSettled([
      commits.record(a, completedAt(AT)),
      // No such file: its transfer breaks the foreign key.
      commits.record(9999, completedAt(AT)),
      commits.record(b, completedAt(AT)),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(transfers(db)).toBe(2);
  });

  it('takes no outcome once the harvest stops; flush stores those waiting', async () => {
    const db = stationDb(AT);
    let stopping = false;
    const commits = new OutcomeCommits(db, () => stopping);
    const stored = commits.record(fileNamed(db, 'a.tif', AT), completedAt(AT));
    stopping = true;
    await expect(commits.record(fileNamed(db, 'b.tif', AT), completedAt(AT))).rejects.toThrow(
      'the harvest is stopping',
    );
    commits.flush();
    expect(transfers(db)).toBe(1);
    await stored;
  });
});
