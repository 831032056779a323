/**
 * A server restored from a backup has lost the records stations pushed after the backup was
 * taken; the stations had deleted them from their outboxes on its acknowledgement. So an
 * acknowledged outbox row is kept a while (outbox_sent, migration 22, sync.keepSentDays), with
 * its payload and its id. Every pull answers the highest outbox id the server took from this data
 * dir (FacilityDelta.acked_through, as for restored.ts the other way round): below an id kept
 * here, the server has lost what it took after that id, and those rows go back to the outbox, in
 * their order. The server upserts by uuid, so one it still had costs a resend, nothing more.
 */
import type { Db } from '../db/open.js';
import { cachedStatement } from '../db/statements.js';
import { getSetting } from '../station/settings.js';

const DAY_MS = 24 * 3600_000;

/**
 * Moves the acknowledged rows from the outbox into outbox_sent (in the caller's transaction),
 * and lets go of those kept longer than sync.keepSentDays.
 */
export function keepSent(db: Db, ids: number[], now: number = Date.now()): void {
  const days = getSetting(db, 'sync.keepSentDays');
  const at = new Date(now).toISOString();
  const keep = cachedStatement(
    db,
    `INSERT OR REPLACE INTO outbox_sent (id, kind, record_uuid, payload, created_at, acked_at)
       SELECT id, kind, record_uuid, payload, created_at, ? FROM outbox WHERE id = ?`,
  );
  const remove = cachedStatement(db, 'DELETE FROM outbox WHERE id = ?');
  for (const id of ids) {
    if (days > 0) keep.run(at, id);
    remove.run(id);
  }
  if (days > 0) {
    cachedStatement(db, 'DELETE FROM outbox_sent WHERE acked_at < ?').run(
      new Date(now - days * DAY_MS).toISOString(),
    );
  } else {
    cachedStatement(db, 'DELETE FROM outbox_sent').run();
  }
}

/** The highest outbox id kept as acknowledged (0 when none is kept). */
export function sentThrough(db: Db): number {
  return (
    (cachedStatement(db, 'SELECT max(id) FROM outbox_sent').pluck().get() as number | null) ?? 0
  );
}

/**
 * Takes the server's `ackedThrough`, answered to a pull sent when this data dir held
 * acknowledged rows up to `sentBefore`: a lower one means the server no longer has what it took
 * after it (restored from a backup). Those rows go back to the outbox, numbered on, in their
 * order; returns how many (0 when the server has all of them).
 */
export function resendLost(db: Db, ackedThrough: number, sentBefore: number): number {
  if (ackedThrough >= sentBefore) return 0;
  return db
    .transaction((): number => {
      const { changes } = cachedStatement(
        db,
        `INSERT INTO outbox (kind, record_uuid, payload, created_at)
           SELECT kind, record_uuid, payload, created_at FROM outbox_sent WHERE id > ? ORDER BY id`,
      ).run(ackedThrough);
      cachedStatement(db, 'DELETE FROM outbox_sent WHERE id > ?').run(ackedThrough);
      return changes;
    })
    .immediate();
}
