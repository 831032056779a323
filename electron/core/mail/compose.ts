import type { MailKind } from './outbox.js';

export interface MailPerson {
  username: string;
  first_name: string;
  last_name: string;
  email: string;
}

/** What a pending-answers mail says about its usage event. */
export interface PendingUsage {
  uuid: string;
  tool: string;
  start: string;
  end: string;
  user: MailPerson;
  /** Null when the operator is the user. */
  operator: MailPerson | null;
}

export interface ComposedMail {
  to: string;
  cc: string;
  subject: string;
  text: string;
  html: string;
}

export function escapeHtml(value: string): string {
  return value
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;');
}

/** No control characters (CR/LF above all) in a header value made from user data. */
function headerSafe(value: string): string {
  // eslint-disable-next-line no-control-regex
  return value.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
}

function displayName(person: MailPerson): string {
  return [person.first_name, person.last_name].filter(Boolean).join(' ') || person.username;
}

/**
 * The one rule for whether mail can go to a person, used wherever the mail code decides: the
 * address trimmed, and one of only spaces counts as none ('').
 */
export function mailAddress(person: Pick<MailPerson, 'email'>): string {
  return person.email.trim();
}

export function hasMailAddress(person: Pick<MailPerson, 'email'>): boolean {
  return mailAddress(person) !== '';
}

/** "Alice Martin" <alice@example.org>, as the To and Cc headers of a mail write a person. */
export function mailbox(person: MailPerson): string {
  const name = headerSafe(displayName(person)).replaceAll('\\', '\\\\').replaceAll('"', '\\"');
  return `"${name}" <${mailAddress(person)}>`;
}

function parts(iso: string, timeZone: string): Record<string, string> {
  const format = new Intl.DateTimeFormat('en-GB', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
    timeZoneName: 'longOffset',
  });
  const out: Record<string, string> = {};
  for (const part of format.formatToParts(new Date(iso))) out[part.type] = part.value;
  return out;
}

/** 2025-05-01, in the server's time zone. */
export function formatDate(iso: string, timeZone: string): string {
  const p = parts(iso, timeZone);
  return `${p.year}-${p.month}-${p.day}`;
}

/** "GMT+02:00" (Intl's longOffset) as "+02:00"; "GMT" (UTC itself) as "+00:00". */
function utcOffset(name = ''): string {
  if (name === 'GMT' || name === 'UTC') return '+00:00';
  return /^(?:GMT|UTC)([+-]\d{2}:\d{2})$/.exec(name)?.[1] ?? name;
}

/**
 * 2025-05-01 14:03 +02:00: in the server's time zone, with that moment's offset from UTC, so
 * the reader in another zone can tell the time, and the hour repeated when summer time ends
 * (02:30 +02:00, then 02:30 +01:00) is not read twice the same.
 */
export function formatDateTime(iso: string, timeZone: string): string {
  const p = parts(iso, timeZone);
  return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute} ${utcOffset(p.timeZoneName)}`;
}

export function pendingLink(publicUrl: string, usageUuid: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/#/pending/${encodeURIComponent(usageUuid)}`;
}

/**
 * The notice (or reminder) asking a user to complete the post-usage questions of a force-ended
 * usage: plain text and a simple HTML part; every user-provided string is escaped in the HTML
 * and stripped of control characters in headers.
 */
export function composePendingMail(
  kind: MailKind,
  usage: PendingUsage,
  options: { publicUrl: string; timeZone: string },
): ComposedMail {
  const tool = headerSafe(usage.tool);
  const day = formatDate(usage.start, options.timeZone);
  const start = formatDateTime(usage.start, options.timeZone);
  const end = formatDateTime(usage.end, options.timeZone);
  const link = pendingLink(options.publicUrl, usage.uuid);
  const reminder = kind === 'pending_reminder';
  const subject = `${reminder ? 'Reminder: p' : 'P'}ost-usage questions pending for ${tool} on ${day}`;
  const greeting = `Hello ${displayName(usage.user)},`;
  const intro = reminder
    ? `This is a reminder: the post-usage questions of your session on ${usage.tool} are still unanswered.`
    : `Your session on ${usage.tool} was ended without its post-usage questions being answered.`;
  const when = `Session: ${start} to ${end} (${options.timeZone})`;
  const ask = 'Please complete the questions here:';
  const text = [greeting, '', intro, when, '', ask, link, '', '-- ', 'Labstation', ''].join('\n');
  const html = [
    '<!doctype html>',
    '<html><body>',
    `<p>${escapeHtml(greeting)}</p>`,
    `<p>${escapeHtml(intro)}<br>${escapeHtml(when)}</p>`,
    `<p>${escapeHtml(ask)} <a href="${escapeHtml(link)}">${escapeHtml(link)}</a></p>`,
    '<p>-- <br>Labstation</p>',
    '</body></html>',
    '',
  ].join('\n');
  const cc = usage.operator && hasMailAddress(usage.operator) ? mailbox(usage.operator) : '';
  return { to: mailbox(usage.user), cc, subject, text, html };
}
