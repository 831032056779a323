import { describe, expect, it } from 'vitest';
import {
  composePendingMail,
  formatDateTime,
  hasMailAddress,
} from '../../../electron/core/mail/compose.js';

const alice = { username: 'alice', first_name: 'Alice', last_name: 'Martin', email: 'a@b.org' };
const options = { publicUrl: 'https://lab.example.org/', timeZone: 'Europe/Zurich' };

describe('the times of a pending-answers notice', () => {
  it('writes each time with its UTC offset', () => {
    expect(formatDateTime('2025-05-01T08:03:00.000Z', 'Europe/Zurich')).toBe(
      '2025-05-01 10:03 +02:00',
    );
    expect(formatDateTime('2025-01-15T08:03:00.000Z', 'Europe/Zurich')).toBe(
      '2025-01-15 09:03 +01:00',
    );
    expect(formatDateTime('2025-05-01T08:03:00.000Z', 'UTC')).toBe('2025-05-01 08:03 +00:00');
    expect(formatDateTime('2025-05-01T08:03:00.000Z', 'Asia/Kolkata')).toBe(
      '2025-05-01 13:33 +05:30',
    );
    expect(formatDateTime('2025-05-01T08:03:00.000Z', 'America/New_York')).toBe(
      '2025-05-01 04:03 -04:00',
    );
  });

  it('tells apart the two 02:30 of the night summer time ends', () => {
    // 2025-10-26 in Zurich: 02:30 +02:00 (00:30 UTC), then 02:30 +01:00 (01:30 UTC).
    const mail = composePendingMail(
      'pending_answers',
      {
        uuid: '01900000-0000-7000-8000-00000000c001',
        tool: 'SEM',
        start: '2025-10-26T00:30:00.000Z',
        end: '2025-10-26T01:30:00.000Z',
        user: alice,
        operator: null,
      },
      options,
    );
    const line = 'Session: 2025-10-26 02:30 +02:00 to 2025-10-26 02:30 +01:00 (Europe/Zurich)';
    expect(mail.text).toContain(line);
    expect(mail.html).toContain(line);
  });
});

describe('an address of spaces only', () => {
  it('is no address: the notice copies nobody at it', () => {
    expect(hasMailAddress({ email: ' \t ' })).toBe(false);
    expect(hasMailAddress({ email: ' a@b.org ' })).toBe(true);
    const sam = { username: 'sam', first_name: '', last_name: '', email: '   ' };
    const mail = composePendingMail(
      'pending_answers',
      {
        uuid: '01900000-0000-7000-8000-00000000c002',
        tool: 'SEM',
        start: '2025-05-01T08:00:00.000Z',
        end: '2025-05-01T09:00:00.000Z',
        user: alice,
        operator: sam,
      },
      options,
    );
    expect(mail.cc).toBe('');
    expect(mail.to).toBe('"Alice Martin" <a@b.org>');
  });
});
