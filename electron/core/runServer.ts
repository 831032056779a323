import { isIP } from 'node:net';
import { EMAIL_PATTERN } from '../../shared/text.js';
import type { FastifyInstance } from 'fastify';
import type { Db } from './db/open.js';
import { MAX_REMINDER_HOURS, configuredPublicUrl, redactUrl } from './mail/config.js';
import { parseFrom } from './mail/transport.js';
import { startMailWorker } from './mail/worker.js';
import { takeDataDirLock } from './harvest/lock.js';
import { createAccount, logonNameClashes } from './server/accounts.js';
import { createServerApp } from './server/app.js';
import { listensOnLoopback } from './http/loopbackHost.js';
import { openServerData } from './server/dataDir.js';
import { getSetting, setSetting } from './station/settings.js';
import { AppError } from './util/errors.js';
import type { Logger } from './util/log.js';

/**
 * Checks an IANA time zone name (Europe/Zurich, America/New_York, UTC) against Intl; a bad one
 * is refused under `label`, the name of where it came from (`--time-zone`,
 * `LABSTATION_TIME_ZONE`).
 */
export function checkTimeZone(name: string, label = 'time zone'): string {
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    throw new AppError(
      'validation_failed',
      `${label}: ${JSON.stringify(name)} is not an IANA time zone name (e.g. Europe/Zurich)`,
    );
  }
}

/**
 * LABSTATION_TRUST_PROXY: the reverse proxies in front of the server, by address or network
 * (`127.0.0.1`, `10.0.0.0/8`, `::1`) or by proxy-addr's names (`loopback`, `linklocal`,
 * `uniquelocal`), comma-separated. A request coming from one of them is taken as coming from
 * the client its X-Forwarded-For names (throttling counts failures per client, not per proxy),
 * over the scheme and host of X-Forwarded-Proto and X-Forwarded-Host. Unset: no proxy is
 * trusted, and those headers are ignored (anyone could send them).
 */
export function trustedProxies(text: string | undefined): string[] {
  const names = new Set(['loopback', 'linklocal', 'uniquelocal']);
  const entries = (text ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  for (const entry of entries) {
    const slash = entry.indexOf('/');
    const address = slash < 0 ? entry : entry.slice(0, slash);
    const bits = slash < 0 ? null : entry.slice(slash + 1);
    const family = isIP(address);
    const max = family === 4 ? 32 : 128;
    const bitsOk = bits === null || (/^\d{1,3}$/.test(bits) && Number(bits) <= max);
    if (!names.has(entry) && (family === 0 || !bitsOk)) {
      throw new AppError(
        'validation_failed',
        `LABSTATION_TRUST_PROXY: ${JSON.stringify(entry)} is not an IP address, a network ` +
          '(10.0.0.0/8) or one of loopback, linklocal, uniquelocal',
      );
    }
  }
  return entries;
}

/**
 * LABSTATION_STATION_TAKEOVER_SECONDS: how long the Labstation holding a station key must be
 * silent before another may take it (server/sync/stationAuth.ts); undefined when unset.
 */
export function stationTakeoverMs(text: string | undefined): number | undefined {
  const value = text?.trim();
  if (!value) return undefined;
  if (!/^\d{1,7}$/.test(value)) {
    throw new AppError(
      'validation_failed',
      `LABSTATION_STATION_TAKEOVER_SECONDS: ${JSON.stringify(value)} is not a whole number of ` +
        'seconds (e.g. 120)',
    );
  }
  return Number(value) * 1000;
}

/** LABSTATION_PUBLIC_URL, when set, must be an http or https address. */
export function checkPublicUrl(text: string | undefined): void {
  const value = text?.trim();
  if (!value) return;
  const url = URL.canParse(value) ? new URL(value) : null;
  if (url === null || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new AppError(
      'validation_failed',
      `LABSTATION_PUBLIC_URL: ${JSON.stringify(value)} is not an http or https address ` +
        '(e.g. https://labstation.example.org/)',
    );
  }
}

/**
 * The mail variables, checked at start: a typo would otherwise show only when the first mail
 * fails, hours later, in the outbox.
 */
export function checkMailEnv(env: NodeJS.ProcessEnv): void {
  const smtp = env.LABSTATION_SMTP_URL?.trim();
  if (smtp) {
    const url = URL.canParse(smtp) ? new URL(smtp) : null;
    if (url === null || (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') || !url.hostname) {
      throw new AppError(
        'validation_failed',
        `LABSTATION_SMTP_URL: ${JSON.stringify(redactUrl(smtp))} is not an smtp:// or smtps:// ` +
          'address with a host (e.g. smtp://user:password@mail.example.org:587)',
      );
    }
  }
  const from = env.LABSTATION_MAIL_FROM?.trim();
  // One address, alone or after a display name (which may hold any character but < and >:
  // the mail quotes it).
  const sender = from ? parseFrom(from) : null;
  if (from && sender && (!EMAIL_PATTERN.test(sender.address) || /[<>]/.test(sender.name))) {
    throw new AppError(
      'validation_failed',
      `LABSTATION_MAIL_FROM: ${JSON.stringify(from)} is not an e-mail address ` +
        '(e.g. Labstation <labstation@example.org>)',
    );
  }
  // Read by the mail worker as a number: "24h" or "1 day" would be passed over for the default,
  // and "-1" would turn the reminders off, each without a word.
  const reminder = env.LABSTATION_REMINDER_HOURS?.trim();
  if (reminder && !(/^\d{1,6}(\.\d+)?$/.test(reminder) && Number(reminder) <= MAX_REMINDER_HOURS)) {
    throw new AppError(
      'validation_failed',
      `LABSTATION_REMINDER_HOURS: ${JSON.stringify(reminder)} is not a number of hours from 0 ` +
        `(no reminder) to ${MAX_REMINDER_HOURS} (e.g. 24 or 0.5)`,
    );
  }
}

export function serverTimeZone(db: Db): string {
  return getSetting(db, 'server.timeZone') ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
}

/**
 * LABSTATION_ADMIN_EMAIL and LABSTATION_ADMIN_PASSWORD make that admin when no account has
 * that e-mail yet: at the first start (also when people, admins among them, were imported
 * before it), and later only while the server has no active admin. An existing account is left
 * as it is: the variables never reset a password or a role, nor bring back an admin whose
 * e-mail was changed.
 */
async function ensureEnvAdmin(db: Db, env: NodeJS.ProcessEnv, log: Logger): Promise<void> {
  const email = env.LABSTATION_ADMIN_EMAIL?.trim();
  const password = env.LABSTATION_ADMIN_PASSWORD;
  if (!email && !password) return;
  if (!email || !password) {
    log.warn('set both LABSTATION_ADMIN_EMAIL and LABSTATION_ADMIN_PASSWORD to make an admin');
    return;
  }
  const existing = db
    .prepare("SELECT role FROM users WHERE email = ? COLLATE NOCASE AND email <> ''")
    .pluck()
    .get(email) as string | undefined;
  const activeAdmins = db
    .prepare("SELECT count(*) FROM users WHERE role = 'admin' AND is_active = 1")
    .pluck()
    .get() as number;
  if (existing === undefined && getSetting(db, 'server.envAdminMade') && activeAdmins > 0) {
    log.info({ email }, 'LABSTATION_ADMIN_EMAIL names no account; its admin was made before');
    return;
  }
  if (existing !== undefined) {
    setSetting(db, 'server.envAdminMade', true);
    if (existing !== 'admin') {
      log.warn(
        { email, role: existing },
        'LABSTATION_ADMIN_EMAIL names an account that is not an admin; left as it is',
      );
    }
    return;
  }
  // Named as the e-mail's local part, or that with a number where a person has that name
  // already (the server's people were imported before it): the log-on is the e-mail.
  const local = email.split('@')[0] ?? email;
  let username = local;
  for (let n = 2; username && logonNameClashes(db, null, username, null).length; n += 1) {
    username = `${local}${n}`;
  }
  try {
    const made = await createAccount(db, { email, password, role: 'admin', username });
    setSetting(db, 'server.envAdminMade', true);
    log.info(
      { email, username: made.username },
      'created the admin named by LABSTATION_ADMIN_EMAIL',
    );
  } catch (error) {
    // Its problems are named by the variable that was set, not by a field nobody typed.
    if (error instanceof AppError) {
      const message = error.message
        .replace(/^email: /, 'LABSTATION_ADMIN_EMAIL: ')
        .replace(/^password: /, 'LABSTATION_ADMIN_PASSWORD: ')
        .replace(/^username: /, 'LABSTATION_ADMIN_EMAIL (its name before the @): ');
      throw new AppError(error.code, message);
    }
    throw error;
  }
}

export interface RunServerOptions {
  dataDir: string;
  host: string;
  port: number;
  log: Logger;
  env?: NodeJS.ProcessEnv;
  /** The zone of naive date-times in the NEMO API; kept in the data dir once given. */
  timeZone?: string | undefined;
}

export interface RunningServer {
  app: FastifyInstance;
  db: Db;
  url: string;
  close(): Promise<void>;
}

export async function runServer(options: RunServerOptions): Promise<RunningServer> {
  // First, before the database is opened: a second server on the data dir touches nothing.
  const running = takeDataDirLock(options.dataDir);
  let db: Db;
  try {
    db = openServerData(options.dataDir);
  } catch (error) {
    running.release();
    throw error;
  }
  try {
    if (options.timeZone !== undefined) {
      setSetting(db, 'server.timeZone', checkTimeZone(options.timeZone));
    }
    const env = options.env ?? process.env;
    const proxies = trustedProxies(env.LABSTATION_TRUST_PROXY);
    checkPublicUrl(env.LABSTATION_PUBLIC_URL);
    checkMailEnv(env);
    const takeoverMs = stationTakeoverMs(env.LABSTATION_STATION_TAKEOVER_SECONDS);
    await ensureEnvAdmin(db, env, options.log);
    const app = await createServerApp({
      db,
      log: options.log,
      jwtSecret: getSetting(db, 'server.jwtSecret')!,
      timeZone: () => serverTimeZone(db),
      trustProxy: proxies,
      // Behind a proxy, the Host is the proxy's to check (it forwards the names it serves).
      loopbackOnly: listensOnLoopback(options.host) && proxies.length === 0,
      publicUrl: () => configuredPublicUrl(db, env),
      ...(takeoverMs === undefined ? {} : { stationTakeoverMs: takeoverMs }),
    });
    await app.listen({ host: options.host, port: options.port });
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : options.port;
    const host = options.host.includes(':') ? `[${options.host}]` : options.host;
    const url = `http://${host}:${port}/`;
    const mail = startMailWorker({
      db,
      log: options.log,
      dataDir: options.dataDir,
      listenUrl: url,
      env,
    });
    return {
      app,
      db,
      url,
      async close() {
        await app.close();
        await mail.stop();
        db.close();
        running.release();
      },
    };
  } catch (error) {
    db.close();
    running.release();
    throw error;
  }
}
