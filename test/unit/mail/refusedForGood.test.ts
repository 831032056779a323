/**
 * Which delivery errors give a mail up (after its last try) and which keep it queued: the
 * errors are shaped as nodemailer throws them (code, command, responseCode).
 */
import { describe, expect, it } from 'vitest';
import { refusedForGood } from '../../../electron/core/mail/worker.js';

const smtpError = (fields: Record<string, unknown>): Error =>
  Object.assign(new Error('delivery failed'), fields);

describe('refusedForGood', () => {
  it('gives up a mail whose recipients or content the server refuses with 5xx', () => {
    expect(
      refusedForGood(smtpError({ code: 'EENVELOPE', command: 'RCPT TO', responseCode: 550 })),
    ).toBe(true);
    expect(
      refusedForGood(smtpError({ code: 'EMESSAGE', command: 'DATA', responseCode: 554 })),
    ).toBe(true);
  });

  it('gives up a mail too large for the server, at whatever step it says so (552)', () => {
    expect(
      refusedForGood(smtpError({ code: 'EENVELOPE', command: 'MAIL FROM', responseCode: 552 })),
    ).toBe(true);
  });

  it('gives up a mail the mail library refuses before sending', () => {
    expect(refusedForGood(smtpError({ code: 'EENVELOPE', command: 'API' }))).toBe(true);
    expect(refusedForGood(smtpError({ code: 'EMESSAGE', command: 'API' }))).toBe(true);
  });

  it('keeps a mail while the server is away, busy or not set up right', () => {
    expect(refusedForGood(smtpError({ code: 'ESOCKET', command: 'CONN' }))).toBe(false);
    expect(refusedForGood(smtpError({ code: 'ETIMEDOUT', command: 'CONN' }))).toBe(false);
    expect(
      refusedForGood(smtpError({ code: 'EENVELOPE', command: 'RCPT TO', responseCode: 450 })),
    ).toBe(false);
    expect(
      refusedForGood(smtpError({ code: 'EAUTH', command: 'AUTH PLAIN', responseCode: 535 })),
    ).toBe(false);
    expect(
      refusedForGood(smtpError({ code: 'EENVELOPE', command: 'MAIL FROM', responseCode: 553 })),
    ).toBe(false);
    expect(refusedForGood('not an error')).toBe(false);
  });
});
