/** An outbox row as the mail worker hands it to a transport, for tests of the transports. */
import type { MailRow } from '../../electron/core/mail/outbox.js';

/** Mail `n` of a test (its uuid and creation time told apart by `n`, 1 to 9), to alice. */
export function mailRow(n: number): MailRow {
  return {
    id: n,
    uuid: `0191f0a0-0000-7000-8000-00000000000${n}`,
    kind: 'pending_answers',
    usage_event_id: null,
    to: 'Alice Martin <alice@example.org>',
    cc: '',
    subject: 'Post-usage questions pending',
    text: 'Please answer.',
    html: null,
    status: 'queued',
    attempts: 0,
    next_attempt_at: '2026-01-01T00:00:00.000Z',
    last_error: null,
    created_at: `2026-01-01T00:00:0${n}.000Z`,
    sent_at: null,
    copy_due: null,
    copy_attempts: 0,
    copy_error: null,
  };
}
