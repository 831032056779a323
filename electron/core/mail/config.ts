import { join } from 'node:path';
import type { Db } from '../db/open.js';
import type { Logger } from '../util/log.js';
import { getSetting } from '../station/settings.js';

/**
 * Mail configuration of a running server. Environment variables win over the settings table
 * (deployment beats stored configuration), then the defaults:
 *   LABSTATION_SMTP_URL        'mail.smtpUrl'       none: .eml files under <data>/mail/
 *   LABSTATION_MAIL_FROM       'mail.from'          Labstation <labstation@localhost>
 *   LABSTATION_PUBLIC_URL      'server.publicUrl'   the URL the server listens on
 *   LABSTATION_REMINDER_HOURS  'mail.reminderHours' 24 (decimals allowed; 0 = no reminder)
 * Tuning of the worker (tests): LABSTATION_MAIL_POLL_MS, LABSTATION_MAIL_BACKOFF_BASE_MS,
 * LABSTATION_MAIL_BACKOFF_CAP_MS, LABSTATION_MAIL_MAX_ATTEMPTS.
 */
export interface MailConfig {
  smtpUrl: string | null;
  from: string;
  /** Without a trailing slash. */
  publicUrl: string;
  /** null: no reminder. */
  reminderHours: number | null;
  timeZone: string;
  /** Where .eml files go when no SMTP server is configured. */
  mailDir: string;
  pollMs: number;
  backoffBaseMs: number;
  backoffCapMs: number;
  maxAttempts: number;
}

/** What a server process knows about itself that the settings table does not. */
export interface MailContext {
  dataDir: string;
  listenUrl: string;
  env: NodeJS.ProcessEnv;
  /** Called after a mail was queued, so the worker picks it up without waiting for its poll. */
  wake?: () => void;
  /** The server's logger: what cannot be sent at all is said there too. */
  log?: Logger;
}

export const DEFAULT_FROM = 'Labstation <labstation@localhost>';

const contexts = new WeakMap<Db, MailContext>();

/** Binds a database to the server process that delivers its mail (see startMailWorker). */
export function registerMailContext(db: Db, context: MailContext): void {
  contexts.set(db, context);
}

export function unregisterMailContext(db: Db): void {
  contexts.delete(db);
}

export function mailContextOf(db: Db): MailContext | undefined {
  return contexts.get(db);
}

function text(value: string | undefined): string | null {
  const trimmed = value?.trim();
  return trimmed ? trimmed : null;
}

function positiveNumber(value: string | undefined, fallback: number): number {
  const n = value === undefined || value.trim() === '' ? NaN : Number(value);
  return Number.isFinite(n) && n > 0 ? n : fallback;
}

/** Ten years: more is a typo, and would put the reminder's time out of the date range. */
export const MAX_REMINDER_HOURS = 87_600;

function reminderHours(db: Db, env: NodeJS.ProcessEnv): number | null {
  const raw = text(env.LABSTATION_REMINDER_HOURS);
  const fromEnv = raw === null ? NaN : Number(raw);
  const hours = Number.isFinite(fromEnv) ? fromEnv : getSetting(db, 'mail.reminderHours');
  // The server refuses to start with more in the environment (runServer.ts); a setting edited
  // by hand is held to it here, so that no reminder's time falls out of the date range.
  return hours === null || !(hours > 0) ? null : Math.min(hours, MAX_REMINDER_HOURS);
}

/**
 * The address people and clients reach the server at, as configured (LABSTATION_PUBLIC_URL,
 * then the server.publicUrl setting), without a trailing slash; null when neither is set. A
 * server behind a reverse proxy sets it: links it hands out (e-mail, the API's page links)
 * then name the proxy's address, not the one the request came in on.
 */
export function configuredPublicUrl(db: Db, env: NodeJS.ProcessEnv): string | null {
  const url = text(env.LABSTATION_PUBLIC_URL) ?? getSetting(db, 'server.publicUrl');
  return url === null ? null : url.replace(/\/+$/, '');
}

/**
 * The configuration in force now for `db`. Read on every use (a few primary-key reads), so a
 * changed setting applies without a restart. Without a registered context (a tool or test
 * using the queries alone) it falls back to this process's environment and a loopback URL.
 */
export function resolveMailConfig(
  db: Db,
  context: MailContext | undefined = contexts.get(db),
): MailConfig {
  const env = context?.env ?? process.env;
  const dataDir = context?.dataDir ?? '.';
  const publicUrl = configuredPublicUrl(db, env) ?? context?.listenUrl ?? 'http://127.0.0.1:8080/';
  return {
    smtpUrl: text(env.LABSTATION_SMTP_URL) ?? getSetting(db, 'mail.smtpUrl'),
    from: text(env.LABSTATION_MAIL_FROM) ?? getSetting(db, 'mail.from') ?? DEFAULT_FROM,
    publicUrl: publicUrl.replace(/\/+$/, ''),
    reminderHours: reminderHours(db, env),
    timeZone: getSetting(db, 'server.timeZone') ?? Intl.DateTimeFormat().resolvedOptions().timeZone,
    mailDir: join(dataDir, 'mail'),
    pollMs: positiveNumber(env.LABSTATION_MAIL_POLL_MS, 5_000),
    backoffBaseMs: positiveNumber(env.LABSTATION_MAIL_BACKOFF_BASE_MS, 30_000),
    backoffCapMs: positiveNumber(env.LABSTATION_MAIL_BACKOFF_CAP_MS, 3_600_000),
    maxAttempts: Math.floor(positiveNumber(env.LABSTATION_MAIL_MAX_ATTEMPTS, 10)),
  };
}

/** The SMTP URL without its password, for logs. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparsable SMTP URL)';
  }
}
