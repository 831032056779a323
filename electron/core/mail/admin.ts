/**
 * What an admin does with the mail outbox: list the mails (the failed ones above all, with why)
 * and send a failed one again once what stopped it is put right (the SMTP settings, the
 * person's address). Used by `labstation mail` and by the server's admin calls.
 */
import type { AdminMail, MailRetryOutcome } from '../../../shared/adminApi.js';
import type { Db } from '../db/open.js';
import { mailContextOf } from './config.js';
import { requeueMail, type MailStatus } from './outbox.js';
import { ACCOUNT_OFF, checkMail, currentRecipients, NO_ADDRESS, NO_QUESTIONS } from './pending.js';

const MAIL_SELECT = `SELECT m.id, m.uuid, m.kind, e.uuid AS usage_event, u.username AS user,
    m."to", m.cc, m.subject, m.status, m.attempts, m.next_attempt_at, m.last_error,
    m.created_at, m.sent_at
  FROM mail_outbox m
  LEFT JOIN usage_events e ON e.id = m.usage_event_id
  LEFT JOIN users u ON u.id = e.user_id`;

/** The mails, newest first; `status` keeps those in that state only. */
export function listMails(
  db: Db,
  filter: { status?: MailStatus | undefined; limit?: number | undefined } = {},
): AdminMail[] {
  const where = filter.status === undefined ? '' : 'WHERE m.status = ?';
  const params: unknown[] = filter.status === undefined ? [] : [filter.status];
  return db
    .prepare(`${MAIL_SELECT} ${where} ORDER BY m.id DESC LIMIT ?`)
    .all(...params, filter.limit ?? -1) as AdminMail[];
}

export function getMail(db: Db, id: number): AdminMail | undefined {
  return db.prepare(`${MAIL_SELECT} WHERE m.id = ?`).get(id) as AdminMail | undefined;
}

export interface MailRetry {
  id: number;
  outcome: MailRetryOutcome;
  /** One line for the admin: what was done, or why not. */
  message: string;
}

/**
 * Sends failed mail `id` again: queued, due at once, with its tries counted from zero. Its
 * recipients are read again from the person's record (and the operator's, for the copy), so
 * an address put right since is the one written to. Not queued: a mail that is not failed, a
 * person still without an address (the mail stays failed, saying so), and a mail whose answers
 * are no longer owed (cancelled: there is nothing to ask any more).
 */
export function retryMail(db: Db, id: number, now: string): MailRetry {
  const result = db
    .transaction((): MailRetry => {
      const mail = db
        .prepare('SELECT status, usage_event_id FROM mail_outbox WHERE id = ?')
        .get(id) as { status: MailStatus; usage_event_id: number | null } | undefined;
      if (!mail) return { id, outcome: 'not_found', message: `there is no mail ${id}` };
      if (mail.status !== 'failed') {
        return { id, outcome: 'not_failed', message: `mail ${id} is ${mail.status}, not failed` };
      }
      const check = checkMail(db, mail.usage_event_id);
      if (!check.send && check.why === ACCOUNT_OFF) {
        db.prepare('UPDATE mail_outbox SET last_error = ? WHERE id = ?').run(ACCOUNT_OFF, id);
        return {
          id,
          outcome: 'account_off',
          message: `mail ${id} not sent: ${ACCOUNT_OFF}; turn it on, then retry`,
        };
      }
      if (!check.send) {
        db.prepare(`UPDATE mail_outbox SET status = 'cancelled', last_error = ? WHERE id = ?`).run(
          check.why,
          id,
        );
        return {
          id,
          outcome: 'cancelled',
          message:
            check.why === NO_QUESTIONS
              ? `mail ${id} cancelled: its tool asks no post-usage questions now`
              : `mail ${id} cancelled: its post-usage answers are no longer pending`,
        };
      }
      const recipients = currentRecipients(db, check.usageEventId);
      if (recipients === null) {
        db.prepare('UPDATE mail_outbox SET last_error = ? WHERE id = ?').run(NO_ADDRESS, id);
        return {
          id,
          outcome: 'no_address',
          message: `mail ${id} not sent: ${NO_ADDRESS}; give them one, then retry`,
        };
      }
      requeueMail(db, id, now, recipients);
      return { id, outcome: 'queued', message: `mail ${id} queued again, to ${recipients.to}` };
    })
    .immediate();
  if (result.outcome === 'queued') {
    // A server in this process sends it at once; another process's, at its next poll.
    const wake = mailContextOf(db)?.wake;
    if (wake) setImmediate(wake);
  }
  return result;
}

/** Every failed mail, oldest first, as retryMail. */
export function retryFailedMails(db: Db, now: string): MailRetry[] {
  const ids = db
    .prepare(`SELECT id FROM mail_outbox WHERE status = 'failed' ORDER BY id`)
    .pluck()
    .all() as number[];
  return ids.map((id) => retryMail(db, id, now));
}
