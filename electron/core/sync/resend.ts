/**
 * A server restored from a backup has lost the records stations pushed after the backup was
 * taken; the stations had deleted them from their outboxes on its acknowledgement. So an
 * acknowledged outbox row is kept a while (outbox_sent, migration 22, sync.keepSentDays), with
 * its payload and its id, for the key (the server account) that acknowledged it.
 *
 * The server keeps the highest outbox id it took from this data dir. It answers it before each
 * push batch is taken (PushResult.acked_before) and with every pull (FacilityDelta
 * .acked_through). Below an id kept here, the server has lost what it took after that id: the
 * newest kept version of each of those records goes back to the outbox, unless a newer one
 * waits there already. Pushes and pulls both look: a push that reaches a restored server before
 * any pull lifts its count over the lost ids, and an idle station pushes nothing.
 *
 * A server that has no count for this data dir starts one anew: restored from a backup made
 * before this data dir's first push, it lost everything kept here; if another data dir held
 * the key in between, it lost nothing. It cannot tell which, so everything kept goes again,
 * once (the count it starts then covers it). The server upserts by uuid, so a record it still
 * had costs a resend, nothing more. (A new key keeps nothing: see current.)
 *
 * The highest id alone misses a record taken late: set aside (refused until the person it names
 * reached the server, say) while rows of higher ids were taken, then taken itself. A backup made
 * before that holds the same highest id as the server after it. So the server also numbers the
 * pushes it takes from this data dir (PushResult.ack_seq, migration 36), and each kept row
 * holds the number of the push that took it: a number answered below it (ack_seq_before,
 * FacilityDelta.ack_seq) means that push was lost, and its records go again as above.
 */
import { createHash } from 'node:crypto';
import type { Db } from '../db/open.js';
import { cachedStatement } from '../db/statements.js';
import { getSetting, setSetting } from '../station/settings.js';

const DAY_MS = 24 * 3600_000;

/**
 * The key records go with now: kept rows belong to the server account it opens (a server
 * reached at another address is the same server; another key is another account).
 */
function linkOf(db: Db): string {
  // A digest: the key itself is kept once, in sync.key.
  return createHash('sha256')
    .update(getSetting(db, 'sync.key') ?? '')
    .digest('hex');
}

/**
 * What is kept, for the key in use: rows kept for another are dropped (that account never lost
 * them, and this one never had them from here).
 */
function current(db: Db): void {
  const link = linkOf(db);
  if (getSetting(db, 'sync.sent')?.link === link) return;
  cachedStatement(db, 'DELETE FROM outbox_sent').run();
  // (floor: read by versions before 2026-12-05, which sent nothing kept at or below it again.)
  setSetting(db, 'sync.sent', { link, floor: 0 });
}

/**
 * Moves the acknowledged rows from the outbox into outbox_sent (in the caller's transaction),
 * and lets go of those kept longer than sync.keepSentDays.
 */
export function keepSent(
  db: Db,
  ids: number[],
  now: number = Date.now(),
  ackSeq: number | null = null,
): void {
  const days = getSetting(db, 'sync.keepSentDays');
  current(db);
  const at = new Date(now).toISOString();
  const keep = cachedStatement(
    db,
    `INSERT OR REPLACE INTO outbox_sent (id, kind, record_uuid, payload, created_at, acked_at,
       ack_seq)
       SELECT id, kind, record_uuid, payload, created_at, ?, ? FROM outbox WHERE id = ?`,
  );
  const remove = cachedStatement(db, 'DELETE FROM outbox WHERE id = ?');
  for (const id of ids) {
    if (days > 0) keep.run(at, ackSeq, id);
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
 * The number of the latest push kept as acknowledged (0 when none is kept with one). Like
 * sentThrough, it may count rows kept for a key no longer in use: resendLostPushes drops those
 * (current) before it queues anything.
 */
export function sentSeq(db: Db): number {
  return (
    (cachedStatement(db, 'SELECT max(ack_seq) FROM outbox_sent').pluck().get() as number | null) ??
    0
  );
}

/** What was kept as acknowledged when a push or pull was sent (sentThrough, sentSeq). */
export interface SentMarks {
  through: number;
  seq: number;
}

export function sentMarks(db: Db): SentMarks {
  return { through: sentThrough(db), seq: sentSeq(db) };
}

/**
 * The server numbers this data dir's pushes anew (`ack_seq_before` null: a server before
 * migration 36, or another data dir held the key): the numbers kept so far say nothing about
 * its count, and no longer count.
 */
export function seqStartsAnew(db: Db): void {
  cachedStatement(db, 'UPDATE outbox_sent SET ack_seq = NULL WHERE ack_seq IS NOT NULL').run();
}

/**
 * Takes the server's number of the last push it took from here (`ackSeq`), answered to a push
 * or pull sent when the latest push kept was `seqBefore`: a lower one means the server lost the
 * pushes after it (restored from a backup), late ones too. The newest kept version of each
 * record they took goes back to the outbox, as in resendLost; returns how many.
 */
export function resendLostPushes(db: Db, ackSeq: number, seqBefore: number): number {
  if (ackSeq >= seqBefore) return 0;
  return db
    .transaction(() => {
      current(db); // rows kept for another key are not this server's to get again
      return queueAgain(db, 'ack_seq', ackSeq);
    })
    .immediate();
}

/**
 * The kept rows whose `column` (id, or ack_seq) is above `above` were lost: the newest kept
 * version of each of their records goes back to the outbox, numbered on, in their order
 * (unless a newer one waits there already), and they are no longer kept. Returns how many.
 */
function queueAgain(db: Db, column: 'id' | 'ack_seq', above: number): number {
  const { changes } = cachedStatement(
    db,
    // A notebook entry goes without the version it was made from (ingestNotebook.ts): the
    // server lost the versions between its own and this one, so it could not find that one,
    // and refused, at every resend, the entry of the data dir that was not restored.
    `INSERT INTO outbox (kind, record_uuid, payload, created_at)
       SELECT s.kind, s.record_uuid,
         CASE WHEN s.kind = 'notebook_entry'
           THEN json_remove(s.payload, '$.previous_updated_at') ELSE s.payload END,
         s.created_at FROM outbox_sent s
       WHERE s.${column} > ?
         AND s.id = (SELECT max(n.id) FROM outbox_sent n
                     WHERE n.kind = s.kind AND n.record_uuid = s.record_uuid)
         AND NOT EXISTS (SELECT 1 FROM outbox o
                         WHERE o.kind = s.kind AND o.record_uuid = s.record_uuid
                           AND o.id > s.id)
       ORDER BY s.id`,
  ).run(above);
  cachedStatement(db, `DELETE FROM outbox_sent WHERE ${column} > ?`).run(above);
  return changes;
}

/**
 * The server has no count for this data dir (a push answered `acked_before` null): everything
 * kept goes again, as in resendLost, since it may be what a restore lost; returns how many.
 */
export function countStartsAnew(db: Db): number {
  return db
    .transaction(() => {
      current(db); // rows kept for another key are not this server's to get again
      return queueAgain(db, 'id', 0);
    })
    .immediate();
}

/**
 * Takes the server's count (`ackedThrough`), answered to a push or pull sent when this data dir
 * had kept acknowledged rows up to `sentBefore`: a lower one means the server no longer has
 * what it took after it. The newest kept version of each such record goes back to the outbox,
 * numbered on (unless a newer one waits there already); returns how many (0 when the server
 * has them all).
 */
export function resendLost(db: Db, ackedThrough: number, sentBefore: number): number {
  if (ackedThrough >= sentBefore) return 0;
  return db
    .transaction((): number => {
      current(db);
      return queueAgain(db, 'id', ackedThrough);
    })
    .immediate();
}
