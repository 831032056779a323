/**
 * An outbox that waits for a server holds three rows per harvested file, so every query of it
 * that the station runs again and again must go through an index (migration 50): the sync
 * status, asked every 5 s while the UI is open, counts what waits and what was refused; usage
 * and record look-ups search by kind and record; and the push reads its next batch in id order,
 * never through the index on kind (which would read and sort every waiting row per batch).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../electron/core/db/open.js';
import { openStationDatabase } from '../../electron/core/station/database.js';
import { USAGE_QUEUED_SQL } from '../../electron/core/station/outbox.js';
import { REFUSED_COUNT_SQL, WAITING_COUNT_SQL } from '../../electron/core/sync/client.js';
import { PUSH_BATCH_SQL } from '../../electron/core/sync/pushLoop.js';
import { tempDir } from './helpers.js';

let db: Db;
beforeAll(() => {
  db = openStationDatabase(tempDir('labstation-outbox-'));
});
afterAll(() => db.close());

function plan(sql: string, ...args: unknown[]): string {
  return (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...args) as { detail: string }[])
    .map((row) => row.detail)
    .join('; ');
}

describe("the outbox's queries (EXPLAIN QUERY PLAN)", () => {
  // Mutation: migration 50 without outbox_record (each a SCAN outbox of every row).
  it('count what waits over the index on kind and record, and search a record by it', () => {
    expect(plan(WAITING_COUNT_SQL)).toBe(
      'SEARCH outbox USING COVERING INDEX outbox_record (kind=?)',
    );
    expect(plan('SELECT count(*) FROM outbox')).toBe(
      'SCAN outbox USING COVERING INDEX outbox_record',
    );
    expect(plan(USAGE_QUEUED_SQL, 'u')).toBe(
      'SEARCH outbox USING COVERING INDEX outbox_record (kind=? AND record_uuid=?)',
    );
  });

  // Mutation: migration 50 without outbox_refusal.
  it('count the refused rows over the index that holds only them', () => {
    expect(plan(REFUSED_COUNT_SQL)).toBe(
      'SCAN outbox USING INDEX outbox_refusal; SCALAR SUBQUERY 1; SCAN outbox USING INDEX outbox_refusal',
    );
  });

  // Mutation: PUSH_BATCH_SQL with `kind IN` for `+kind IN` (SEARCH ... outbox_record, then a
  // temporary b-tree to sort every waiting row by id).
  it('read the next batch to push in id order, stopping at its limit', () => {
    expect(plan(PUSH_BATCH_SQL, 'a', 'b', 128)).toBe('SCAN outbox');
  });
});
