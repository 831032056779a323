import type { Db } from '../db/open.js';
import { findTool, toolInfo } from '../station/records.js';
import { nowIso } from '../util/ids.js';
import {
  composePendingMail,
  hasMailAddress,
  mailAddress,
  mailbox,
  type ComposedMail,
  type MailPerson,
  type PendingUsage,
} from './compose.js';
import { mailContextOf, resolveMailConfig, type MailConfig } from './config.js';
import { enqueueMail, recordUnsendableMail, type MailKind } from './outbox.js';

/** Why a notice to a person without an address was not sent (the failed mail's last_error). */
export const NO_ADDRESS = 'the user has no e-mail address';

/**
 * Why a notice to a person whose account is turned off is not sent: they can no longer log in
 * to answer (staff answer for them on the server's page).
 */
export const ACCOUNT_OFF = "the user's account is turned off";

interface PendingRow {
  id: number;
  uuid: string;
  start: string;
  end: string | null;
  post_usage_pending: number;
  user_id: number;
  operator_id: number;
  tool_id: number;
  tool: string;
  u_username: string;
  u_first_name: string;
  u_last_name: string;
  u_email: string;
  u_is_active: number;
  o_username: string;
  o_first_name: string;
  o_last_name: string;
  o_email: string;
}

const PENDING_SELECT = `
  SELECT e.id, e.uuid, e.start, e."end", e.post_usage_pending, e.user_id, e.operator_id,
    e.tool_id, t.name AS tool,
    u.username AS u_username, u.first_name AS u_first_name, u.last_name AS u_last_name,
    u.email AS u_email, u.is_active AS u_is_active,
    o.username AS o_username, o.first_name AS o_first_name, o.last_name AS o_last_name,
    o.email AS o_email
  FROM usage_events e
  JOIN tools t ON t.id = e.tool_id
  JOIN users u ON u.id = e.user_id
  JOIN users o ON o.id = e.operator_id
  WHERE e.id = ?`;

/**
 * Whether the usage's tool asks post-usage questions now: the pending form shows the tool's
 * current ones (server/web/handlers.ts), so a mail asking to answer them is for a tool that has
 * some (an admin may have taken them away after the usage was force-ended).
 */
function toolAsksPostUsage(db: Db, toolId: number): boolean {
  return toolInfo(findTool(db, toolId)).post_usage_questions.length > 0;
}

/** A mail to send, for this usage; or one to cancel, and why. */
export type MailCheck = { send: true; usageEventId: number } | { send: false; why: string };

/**
 * Whether a mail about `usageEventId` is to go now: not when its answers came in, or its tool
 * asks no post-usage questions any more. For a mail waiting to go, and one retried.
 */
export function checkMail(db: Db, usageEventId: number | null): MailCheck {
  const toolId = usageEventId === null ? null : pendingEndedTool(db, usageEventId);
  if (usageEventId === null || toolId === null) return { send: false, why: NOT_PENDING };
  if (!toolAsksPostUsage(db, toolId)) return { send: false, why: NO_QUESTIONS };
  if (!userActive(db, usageEventId)) return { send: false, why: ACCOUNT_OFF };
  return { send: true, usageEventId };
}

/** Whether the account of the usage's user is on. */
function userActive(db: Db, usageEventId: number): boolean {
  return (
    db
      .prepare(
        'SELECT u.is_active FROM usage_events e JOIN users u ON u.id = e.user_id WHERE e.id = ?',
      )
      .pluck()
      .get(usageEventId) === 1
  );
}

/** Why a mail whose answers came in meanwhile is not sent. */
const NOT_PENDING = 'the post-usage answers are no longer pending';

/** Why a mail about a tool that asks no post-usage questions (any more) is not sent. */
export const NO_QUESTIONS = 'the tool asks no post-usage questions now';

/** The tool of an ended usage whose post-usage answers are still pending; null for another. */
function pendingEndedTool(db: Db, usageEventId: number): number | null {
  const row = db
    .prepare(`SELECT post_usage_pending, "end", tool_id FROM usage_events WHERE id = ?`)
    .get(usageEventId) as
    { post_usage_pending: number; end: string | null; tool_id: number } | undefined;
  return row !== undefined && row.post_usage_pending === 1 && row.end !== null ? row.tool_id : null;
}

/** An ended usage whose post-usage answers are still pending (the mail's condition). */
function isPendingEnded(db: Db, usageEventId: number): boolean {
  return pendingEndedTool(db, usageEventId) !== null;
}

function person(row: PendingRow, prefix: 'u' | 'o'): MailPerson {
  return {
    username: row[`${prefix}_username`],
    first_name: row[`${prefix}_first_name`],
    last_name: row[`${prefix}_last_name`],
    email: row[`${prefix}_email`],
  };
}

function queuePending(
  db: Db,
  kind: MailKind,
  row: PendingRow,
  config: MailConfig,
  now: string,
): number | null {
  if (row.end === null || row.post_usage_pending !== 1) return null;
  if (!toolAsksPostUsage(db, row.tool_id)) return null;
  const user = person(row, 'u');
  const mail = composePendingMail(kind, pendingUsage(row, row.end), config);
  const why = row.u_is_active !== 1 ? ACCOUNT_OFF : hasMailAddress(user) ? null : NO_ADDRESS;
  if (why === null) return enqueueMail(db, { kind, usageEventId: row.id, ...mail }, now);
  // Nobody to write to. Not dropped without a word: the mail is recorded failed, so it is
  // among the failed mails an admin lists, and can be sent once the person has an address
  // (or their account is on again).
  const id = recordUnsendableMail(
    db,
    { kind, usageEventId: row.id, ...mail, to: hasMailAddress(user) ? mail.to : '' },
    now,
    why,
  );
  if (id !== null) {
    mailContextOf(db)?.log?.warn(
      { mail: id, kind, user: row.u_username, usage_event: row.uuid },
      `pending-answers notice not sent: ${why}`,
    );
  }
  return id;
}

/**
 * The addresses a mail about `usageEventId` goes to now (To, and Cc for the operator), as the
 * notice writes them; null when the user has no address.
 */
export function currentRecipients(db: Db, usageEventId: number): { to: string; cc: string } | null {
  const row = db.prepare(PENDING_SELECT).get(usageEventId) as PendingRow | undefined;
  if (!row || !hasMailAddress(person(row, 'u'))) return null;
  return {
    to: mailbox(person(row, 'u')),
    cc: copiesOperator(row) ? mailbox(person(row, 'o')) : '',
  };
}

/**
 * The operator's mailbox when they are copied now (another person than the user, with an
 * address of their own), else '': an operator's copy owed goes there, whether the user, whose
 * mail went already, still has an address or not.
 */
export function currentCopyRecipient(db: Db, usageEventId: number): string {
  const row = db.prepare(PENDING_SELECT).get(usageEventId) as PendingRow | undefined;
  return row && copiesOperator(row) ? mailbox(person(row, 'o')) : '';
}

/**
 * The mail of `kind` for the usage as it stands now (to its user now, greeting them, their
 * operator copied), or null when the user has no address.
 */
export function currentMail(
  db: Db,
  usageEventId: number,
  kind: MailKind,
  config: { publicUrl: string; timeZone: string },
): ComposedMail | null {
  const row = db.prepare(PENDING_SELECT).get(usageEventId) as PendingRow | undefined;
  if (!row || row.end === null || !hasMailAddress(person(row, 'u'))) return null;
  return composePendingMail(kind, pendingUsage(row, row.end), config);
}

/** What a pending-answers mail says of the usage: its user, the operator when copied. */
function pendingUsage(row: PendingRow, end: string): PendingUsage {
  return {
    uuid: row.uuid,
    tool: row.tool,
    start: row.start,
    end,
    user: person(row, 'u'),
    operator: copiesOperator(row) ? person(row, 'o') : null,
  };
}

/** Whether the operator gets a copy: someone else than the user, with another address. */
function copiesOperator(row: PendingRow): boolean {
  const user = mailAddress(person(row, 'u')).toLowerCase();
  const operator = mailAddress(person(row, 'o')).toLowerCase();
  return row.operator_id !== row.user_id && operator !== '' && operator !== user;
}

function wakeWorker(db: Db): void {
  const wake = mailContextOf(db)?.wake;
  // After the surrounding transaction has committed (it is synchronous).
  if (wake) setImmediate(wake);
}

/**
 * Queues the e-mail asking the user of a force-ended usage event (ended, post-usage answers
 * pending) to complete the questions, copying the operator when that is someone else with an
 * address. For a user without an e-mail address the notice is recorded failed at once, saying
 * so, and logged, for an admin to see. Does nothing for any other event, or when the notice was
 * queued before (a re-pushed event never queues a second one). Meant to run in the transaction
 * that stores the event, so the mail exists if and only if the event does. Returns the mail's
 * id when one was queued or recorded.
 */
export function queuePendingAnswersMail(
  db: Db,
  usageEventId: number,
  now: string = nowIso(),
  config?: MailConfig,
): number | null {
  // Cheap check first: this runs for every usage event a station pushes.
  if (!isPendingEnded(db, usageEventId)) return null;
  const row = db.prepare(PENDING_SELECT).get(usageEventId) as PendingRow | undefined;
  if (!row) return null;
  const id = queuePending(db, 'pending_answers', row, config ?? resolveMailConfig(db), now);
  if (id !== null) wakeWorker(db);
  return id;
}

/**
 * The reminder scheduler: queues one reminder for each event still pending `reminderHours`
 * after its notice was sent (not queued: a notice held up by an SMTP outage is not followed at
 * once by its reminder). One reminder per event: the page link stays valid and staff see the
 * pending events; more would be nagging. Returns how many reminders were queued.
 */
export function queueDueReminders(db: Db, config: MailConfig, nowMs: number = Date.now()): number {
  if (config.reminderHours === null) return 0;
  const sentBefore = new Date(nowMs - config.reminderHours * 3_600_000).toISOString();
  const now = new Date(nowMs).toISOString();
  // Driven by the pending events (CROSS JOIN keeps them the outer loop, through their partial
  // index), not by the whole mail history.
  const due = db
    .prepare(
      `SELECT e.id FROM usage_events e
       CROSS JOIN mail_outbox n ON n.usage_event_id = e.id AND n.kind = 'pending_answers'
       WHERE e.post_usage_pending = 1 AND e."end" IS NOT NULL
         AND n.status = 'sent' AND n.sent_at <= ?
         AND NOT EXISTS (SELECT 1 FROM mail_outbox r
                         WHERE r.usage_event_id = e.id AND r.kind = 'pending_reminder')
       ORDER BY n.sent_at, e.id`,
    )
    .pluck()
    .all(sentBefore) as number[];
  if (due.length === 0) return 0;
  return db
    .transaction((): number => {
      let queued = 0;
      const select = db.prepare(PENDING_SELECT);
      for (const id of due) {
        // Read again inside the write transaction: the answers may have come in meanwhile.
        const row = select.get(id) as PendingRow | undefined;
        if (row && queuePending(db, 'pending_reminder', row, config, now) !== null) queued += 1;
      }
      return queued;
    })
    .immediate();
}
