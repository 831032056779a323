import type { MailStatus } from '../../../shared/adminApi.js';
import type { Db } from '../db/open.js';
import { newUuid } from '../util/ids.js';

export type { MailStatus };

export type MailKind = 'pending_answers' | 'pending_reminder';

export interface MailRow {
  id: number;
  uuid: string;
  kind: MailKind;
  usage_event_id: number | null;
  to: string;
  cc: string;
  subject: string;
  text: string;
  html: string | null;
  status: MailStatus;
  attempts: number;
  next_attempt_at: string;
  last_error: string | null;
  created_at: string;
  sent_at: string | null;
  /** When the operator's copy of a sent mail is tried again; null: none is owed. */
  copy_due: string | null;
  /** The operator's copy's tries that failed. */
  copy_attempts: number;
  copy_error: string | null;
}

export interface NewMail {
  kind: MailKind;
  usageEventId: number | null;
  /** Addresses joined with ', '. */
  to: string;
  cc: string;
  subject: string;
  text: string;
  html: string | null;
}

const COLUMNS = `id, uuid, kind, usage_event_id, "to", cc, subject, text, html, status, attempts,
  next_attempt_at, last_error, created_at, sent_at, copy_due, copy_attempts, copy_error`;

/**
 * Queues a mail, due at once. Returns its id, or null when a mail of this kind already exists
 * for the usage event (the unique (usage_event_id, kind) constraint makes queueing idempotent).
 * Call it inside the transaction that writes the record the mail is about.
 */
export function enqueueMail(db: Db, mail: NewMail, now: string): number | null {
  return insertMail(db, mail, now, null);
}

/**
 * Records a mail that cannot be sent as it stands (no address to send it to): failed at once,
 * with `reason`, so an admin sees it among the failed mails and can send it once it can go
 * (retryMail). Idempotent as enqueueMail.
 */
export function recordUnsendableMail(
  db: Db,
  mail: NewMail,
  now: string,
  reason: string,
): number | null {
  return insertMail(db, mail, now, reason);
}

function insertMail(db: Db, mail: NewMail, now: string, failed: string | null): number | null {
  const id = db
    .prepare(
      `INSERT INTO mail_outbox (uuid, kind, usage_event_id, "to", cc, subject, text, html, status,
         attempts, next_attempt_at, last_error, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, CASE WHEN ? IS NULL THEN 'queued' ELSE 'failed' END, 0,
         ?, ?, ?)
       ON CONFLICT (usage_event_id, kind) DO NOTHING
       RETURNING id`,
    )
    .pluck()
    .get(
      newUuid(),
      mail.kind,
      mail.usageEventId,
      mail.to,
      mail.cc,
      mail.subject,
      mail.text,
      mail.html,
      failed,
      now,
      failed,
      now,
    ) as number | undefined;
  return id ?? null;
}

/**
 * The next queued mail that is due, oldest due first (then in queueing order). A retry time
 * later than `setBack` (now and the longest backoff) was set by the clock before it was set
 * back: due now too. Waited for, a clock set back a day held a failed mail a day on top of
 * its backoff.
 */
export function nextDueMail(db: Db, now: string, setBack: string): MailRow | undefined {
  return db
    .prepare(
      `SELECT ${COLUMNS} FROM mail_outbox
       WHERE status = 'queued' AND (next_attempt_at <= ? OR next_attempt_at > ?)
       ORDER BY next_attempt_at, id LIMIT 1`,
    )
    .get(now, setBack) as MailRow | undefined;
}

/** The sent mail whose operator's copy is due to be tried again first, if any (as nextDueMail). */
export function nextDueCopy(db: Db, now: string, setBack: string): MailRow | undefined {
  return db
    .prepare(
      `SELECT ${COLUMNS} FROM mail_outbox
       WHERE copy_due IS NOT NULL AND (copy_due <= ? OR copy_due > ?)
       ORDER BY copy_due, id LIMIT 1`,
    )
    .get(now, setBack) as MailRow | undefined;
}

/** When the next queued mail, or operator's copy owed, falls due (null: nothing is). */
export function nextDueAt(db: Db): string | null {
  const at = (sql: string): string | null =>
    (db.prepare(sql).pluck().get() as string | undefined) ?? null;
  const mail = at(
    `SELECT next_attempt_at FROM mail_outbox WHERE status = 'queued'
     ORDER BY next_attempt_at, id LIMIT 1`,
  );
  const copy = at(
    'SELECT copy_due FROM mail_outbox WHERE copy_due IS NOT NULL ORDER BY copy_due, id LIMIT 1',
  );
  return mail === null || (copy !== null && copy < mail) ? copy : mail;
}

/**
 * The mail sent: its user's mail server took it. `copyDue`: when the operator's copy, which goes
 * in an envelope of its own, is to be sent (null: none is owed).
 */
export function markSent(db: Db, id: number, now: string, copyDue: string | null = null): void {
  db.prepare(
    `UPDATE mail_outbox SET status = 'sent', attempts = attempts + 1, sent_at = ?, last_error = NULL,
       copy_due = ?, copy_attempts = 0, copy_error = NULL
     WHERE id = ? AND status = 'queued'`,
  ).run(now, copyDue, id);
}

/**
 * The operator's copy owed by a sent mail: taken (`error` null), or not: tried again at
 * `retryAt`, or given up when that is null.
 */
export function markCopyTried(
  db: Db,
  id: number,
  error: string | null,
  retryAt: string | null,
): void {
  db.prepare(
    `UPDATE mail_outbox SET copy_due = ?,
       copy_attempts = copy_attempts + CASE WHEN ? IS NULL THEN 0 ELSE 1 END,
       copy_error = coalesce(?, copy_error)
     WHERE id = ? AND copy_due IS NOT NULL`,
  ).run(error === null ? null : retryAt, error, error?.slice(0, 2_000) ?? null, id);
}

/** Records a failed attempt: queued again at `retryAt`, or failed for good when it is null. */
export function markAttemptFailed(db: Db, id: number, error: string, retryAt: string | null): void {
  db.prepare(
    `UPDATE mail_outbox SET attempts = attempts + 1, last_error = ?,
       status = CASE WHEN ? IS NULL THEN 'failed' ELSE 'queued' END,
       next_attempt_at = coalesce(?, next_attempt_at)
     WHERE id = ? AND status = 'queued'`,
  ).run(error.slice(0, 2_000), retryAt, retryAt, id);
}

/** A queued mail that no longer applies (the answers were completed meanwhile). */
export function markCancelled(db: Db, id: number, reason: string): void {
  db.prepare(
    `UPDATE mail_outbox SET status = 'cancelled', last_error = ? WHERE id = ? AND status = 'queued'`,
  ).run(reason, id);
}

/**
 * Puts a failed mail back in the queue, due at once, its tries counted from zero (for an admin
 * after fixing SMTP or an address: admin.ts retryMail), to `recipients` where given.
 */
export function requeueMail(
  db: Db,
  id: number,
  now: string,
  recipients?: { to: string; cc: string },
): boolean {
  return (
    db
      .prepare(
        `UPDATE mail_outbox SET status = 'queued', attempts = 0, next_attempt_at = ?,
           "to" = coalesce(?, "to"), cc = coalesce(?, cc)
         WHERE id = ? AND status = 'failed'`,
      )
      .run(now, recipients?.to ?? null, recipients?.cc ?? null, id).changes === 1
  );
}

/** The mail written anew (pending.ts currentMail): its people, subject and both bodies. */
export function setComposed(
  db: Db,
  id: number,
  mail: { to: string; cc: string; subject: string; text: string; html: string | null },
): void {
  db.prepare(
    'UPDATE mail_outbox SET "to" = ?, cc = ?, subject = ?, text = ?, html = ? WHERE id = ?',
  ).run(mail.to, mail.cc, mail.subject, mail.text, mail.html, id);
}

/** The addresses a mail waiting to go is sent to (the people's own, changed meanwhile). */
export function setRecipients(db: Db, id: number, recipients: { to: string; cc: string }): void {
  db.prepare('UPDATE mail_outbox SET "to" = ?, cc = ? WHERE id = ?').run(
    recipients.to,
    recipients.cc,
    id,
  );
}

export function mailsOfUsage(db: Db, usageEventId: number): MailRow[] {
  return db
    .prepare(`SELECT ${COLUMNS} FROM mail_outbox WHERE usage_event_id = ? ORDER BY id`)
    .all(usageEventId) as MailRow[];
}
