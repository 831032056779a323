import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { domainToASCII } from 'node:url';
import nodemailer from 'nodemailer';
import addressparser from 'nodemailer/lib/addressparser/index.js';
import type Mail from 'nodemailer/lib/mailer/index.js';
import SMTPPool from 'nodemailer/lib/smtp-pool/index.js';
import SMTPTransport from 'nodemailer/lib/smtp-transport/index.js';
import { redactUrl } from './config.js';
import type { MailRow } from './outbox.js';

/** Delivers one composed mail; rejects when it was not accepted. */
export interface MailTransport {
  /** For logs: the SMTP URL without password, or the mail folder. */
  readonly description: string;
  /** Whether mail goes to a mail server, or is only written to a folder (no SMTP set). */
  readonly sends: boolean;
  /**
   * Whether the operator's copy goes in an envelope of its own, after the mail (sendCopy: a
   * mail server), or is written with it (a folder).
   */
  readonly copiesApart: boolean;
  /**
   * The mail to its user (a mail server's envelope holds them alone where copiesApart): the
   * server's answer, or the file written.
   */
  send(mail: MailRow, from: string): Promise<{ response: string }>;
  /** The operator's copy alone, after the mail: rejects as send. */
  sendCopy(mail: MailRow, from: string): Promise<{ response: string }>;
  /** Connects (and logs in) without sending: rejects with why the server cannot be used. */
  verify(): Promise<void>;
  close(): void;
}

/**
 * A sender setting (`Name <address>`, `"Name" <address>` or an address) as its display name,
 * unquoted, and its address. The mail gets it as that pair, so that nodemailer quotes the name
 * where a header needs it: given as text, a name holding `:` made From a group, and one holding
 * `,` or `;` lost its first part.
 */
export function parseFrom(from: string): { name: string; address: string } {
  const match = /^(.*?)<\s*([^<>\s]*)\s*>\s*$/.exec(from.trim());
  if (!match) return { name: '', address: from.trim() };
  let name = (match[1] ?? '').trim();
  if (name.length >= 2 && name.startsWith('"') && name.endsWith('"')) {
    name = name.slice(1, -1).replace(/\\(.)/g, '$1');
  }
  return { name, address: match[2] ?? '' };
}

/** The domain of the sender's address, in ASCII (punycode), for the Message-ID. */
function domainOf(address: string): string {
  const at = address.lastIndexOf('@');
  const domain = at < 0 ? '' : domainToASCII(address.slice(at + 1));
  return domain === '' ? 'labstation.invalid' : domain;
}

/** nodemailer message options for an outbox row. Message-ID is fixed by the row's uuid, so a
 * resend after a crash carries the same id and mail clients can spot the duplicate. */
export function messageOptions(mail: MailRow, from: string): Mail.Options {
  const sender = parseFrom(from);
  return {
    from: sender,
    to: mail.to,
    ...(mail.cc ? { cc: mail.cc } : {}),
    subject: mail.subject,
    text: mail.text,
    ...(mail.html !== null ? { html: mail.html } : {}),
    messageId: `<${mail.uuid}@${domainOf(sender.address)}>`,
    headers: {
      'X-Labstation-Kind': mail.kind,
      'Auto-Submitted': 'auto-generated',
    },
  };
}

/** The bare addresses of a header value (`"Alice" <alice@example.org>, bob@example.org`). */
function addressesOf(header: string): string[] {
  return addressparser(header, { flatten: true })
    .map((a) => a.address)
    .filter((address): address is string => Boolean(address));
}

/**
 * The refusal of a recipient the mail server turned away (RCPT TO), as the error the worker
 * classifies (refusedForGood: its response code and command).
 */
function refusal(info: SMTPTransport.SentMessageInfo): Error {
  const [first] = (info as { rejectedErrors?: Error[] }).rejectedErrors ?? [];
  const who = info.rejected.map((a) => (typeof a === 'string' ? a : a.address)).join(', ');
  return Object.assign(
    new Error(`the mail server refused ${who}: ${first?.message ?? 'no reason given'}`),
    {
      responseCode: (first as { responseCode?: number } | undefined)?.responseCode,
      command: 'RCPT TO',
    },
  );
}

/**
 * How long a mail server may take to accept a connection, to greet, and to answer each
 * command: a stalled one fails the send within a minute, and the mails behind it, and a stop
 * of the server, do not wait for nodemailer's own ten minutes.
 */
export const SMTP_TIMEOUTS = {
  connectionTimeout: 30_000,
  greetingTimeout: 30_000,
  socketTimeout: 60_000,
};

export function smtpTransport(url: string, timeouts = SMTP_TIMEOUTS): MailTransport {
  // The transport made here, not by createTransport: given a `url`, that reads the URL alone
  // and drops every other option, the timeouts with them. (Options in the URL's query still
  // win over these.)
  // A pooled transport where the URL asks for one (`?pool=true`), as createTransport picks.
  const pooled =
    URL.canParse(url) && ['true', '1'].includes(new URL(url).searchParams.get('pool') ?? '');
  const transporter = nodemailer.createTransport(
    pooled
      ? new SMTPPool({ url, pool: true, ...timeouts })
      : new SMTPTransport({ url, ...timeouts }),
  );
  /** The mail in an envelope to the addresses of `recipients` (a To or a Cc header's value). */
  const envelope = (mail: MailRow, from: string, recipients: string) =>
    transporter.sendMail({
      ...messageOptions(mail, from),
      envelope: { from: parseFrom(from).address, to: addressesOf(recipients) },
    });
  return {
    description: redactUrl(url),
    sends: true,
    // The person's mail and the operator's copy go in envelopes of their own (the same message,
    // To and Cc shown in both), each recorded as it is taken (worker.ts): the mail counts as
    // sent the moment the person's mail server took it, and a copy that waits or fails neither
    // holds it back nor, after a restart, sends it again.
    copiesApart: true,
    async send(mail, from) {
      const info = await envelope(mail, from, mail.to);
      if (info.rejected.length > 0) throw refusal(info);
      return { response: info.response };
    },
    async sendCopy(mail, from) {
      const info = await envelope(mail, from, mail.cc);
      if (info.rejected.length > 0) throw refusal(info);
      return { response: info.response };
    },
    async verify() {
      await transporter.verify();
    },
    close() {
      transporter.close();
    },
  };
}

/** 2025-05-01T10-20-30.123Z: a timestamp usable in a file name everywhere. */
function fileStamp(iso: string): string {
  return iso.replaceAll(':', '-');
}

/**
 * Writes each mail as an RFC 5322 message (CRLF line ends) to `<dir>/<created_at>-<uuid>.eml`,
 * through a temporary name and a rename, so the folder never holds half a message. The name
 * comes from the row, so a resend after a crash rewrites the same file.
 */
export function fileTransport(dir: string): MailTransport {
  const transporter = nodemailer.createTransport({
    streamTransport: true,
    buffer: true,
    newline: 'windows',
  });
  return {
    description: dir,
    sends: false,
    copiesApart: false,
    async send(mail, from) {
      const info = await transporter.sendMail(messageOptions(mail, from));
      if (!Buffer.isBuffer(info.message)) throw new Error('the mail composer returned no buffer');
      // Body lines keep the LF of the composed text; RFC 5322 wants CRLF everywhere. The
      // encoded message is 7-bit (quoted-printable/base64), so latin1 round-trips it.
      const message = Buffer.from(
        info.message.toString('latin1').replace(/\r?\n/g, '\r\n'),
        'latin1',
      );
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const file = join(dir, `${fileStamp(mail.created_at)}-${mail.uuid}.eml`);
      const partial = `${file}.partial`;
      writeFileSync(partial, message, { mode: 0o600, flush: true });
      renameSync(partial, file);
      return { response: file };
    },
    // The file written holds the copy's Cc: none is ever owed.
    sendCopy: () => Promise.resolve({ response: 'written with the mail' }),
    verify() {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      return Promise.resolve();
    },
    close() {
      transporter.close();
    },
  };
}
