import type { Db } from '../db/open.js';
import type { Logger } from '../util/log.js';
import {
  registerMailContext,
  resolveMailConfig,
  unregisterMailContext,
  type MailConfig,
  type MailContext,
} from './config.js';
import {
  markAttemptFailed,
  markCancelled,
  markCopyTried,
  markSent,
  nextDueAt,
  nextDueCopy,
  nextDueMail,
  setComposed,
  setRecipients,
  type MailRow,
} from './outbox.js';
import {
  currentCopyRecipient,
  currentMail,
  currentRecipients,
  ACCOUNT_OFF,
  NO_ADDRESS,
  checkMail,
  queueDueReminders,
} from './pending.js';
import { fileTransport, smtpTransport, type MailTransport } from './transport.js';

export interface MailWorkerOptions {
  db: Db;
  log: Logger;
  dataDir: string;
  /** The URL the server listens on: the default base of links in mail. */
  listenUrl: string;
  env?: NodeJS.ProcessEnv;
  clock?: () => number;
}

export interface MailWorker {
  /** Runs a pass soon (a mail was queued). */
  wake(): void;
  /** Stops after the send in flight, if any; closes the SMTP connection. */
  stop(): Promise<void>;
}

/** Delay before attempt n+1 after n failed attempts: base * 2^(n-1), capped. */
export function backoffMs(attempts: number, config: MailConfig): number {
  const exponent = Math.max(0, attempts - 1);
  return Math.min(config.backoffCapMs, config.backoffBaseMs * 2 ** Math.min(exponent, 30));
}

function errorText(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' && !error.message.includes(code)
      ? `${code}: ${error.message}`
      : error.message;
  }
  return String(error);
}

/**
 * Whether this very mail can never be sent: the mail server answered its recipients or its
 * content with a 5xx reply, or its size with 552 (at any step), or the mail library refused it
 * before sending (EENVELOPE: no or a malformed recipient; EMESSAGE: it cannot be built or is
 * larger than the server takes). Anything else says nothing against the mail: no connection, a
 * timeout, a 4xx reply (try later), a login or sender the server refuses (its set-up, which an
 * admin puts right).
 */
export function refusedForGood(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { responseCode, command, code } = error as {
    responseCode?: unknown;
    command?: unknown;
    code?: unknown;
  };
  if (typeof responseCode !== 'number') return code === 'EENVELOPE' || code === 'EMESSAGE';
  if (responseCode === 552) return true;
  return responseCode >= 500 && responseCode < 600 && (command === 'RCPT TO' || command === 'DATA');
}

/**
 * The mail worker of a server: in each pass it queues due reminders, then delivers due mails
 * one at a time in order (oldest due first), by SMTP when configured, else as .eml files.
 * A failed attempt records the error and backs off exponentially (capped). A mail is given up
 * (marked failed and logged) only when the mail server refused it for good and it was tried
 * maxAttempts times; while the mail server cannot be reached or used, the mail waits and is
 * tried again at the capped interval for as long as its answers are pending, so an outage of a
 * weekend loses nothing. A pass stops at the first failure (the SMTP server is most likely down
 * for the others too); the next pass comes after the poll interval.
 *
 * Delivery is at least once: a mail is marked sent only after the transport accepted it, so a
 * crash between the two sends it again on the next start (with the same Message-ID, or over
 * the same .eml file). Mail is never lost for a crash.
 */
export function startMailWorker(options: MailWorkerOptions): MailWorker {
  const { db, log } = options;
  const clock = options.clock ?? Date.now;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;
  let again = false;
  let stopped = false;
  let transport: { key: string; value: MailTransport } | null = null;

  const context: MailContext = {
    dataDir: options.dataDir,
    listenUrl: options.listenUrl,
    env: options.env ?? process.env,
    wake: () => wake(),
    log,
  };
  registerMailContext(db, context);

  function transportFor(config: MailConfig): MailTransport {
    const key = config.smtpUrl === null ? `file:${config.mailDir}` : `smtp:${config.smtpUrl}`;
    if (transport?.key !== key) {
      transport?.value.close();
      const value =
        config.smtpUrl === null ? fileTransport(config.mailDir) : smtpTransport(config.smtpUrl);
      transport = { key, value };
      log.info({ transport: value.description }, 'mail delivery');
    }
    return transport.value;
  }

  async function deliver(queued: MailRow, config: MailConfig): Promise<boolean> {
    let mail = queued;
    const check = checkMail(db, mail.usage_event_id);
    // Their account turned off meanwhile: failed, as for no address, for an admin to send
    // once it is on again.
    if (!check.send && check.why === ACCOUNT_OFF) {
      markAttemptFailed(db, mail.id, ACCOUNT_OFF, null);
      log.warn({ mail: mail.uuid, kind: mail.kind }, `mail not sent: ${ACCOUNT_OFF}`);
      return true;
    }
    if (!check.send) {
      markCancelled(db, mail.id, check.why);
      log.info({ mail: mail.uuid, kind: mail.kind }, `mail cancelled: ${check.why}`);
      return true;
    }
    // To the addresses the people have now, as a retry sends it: one put right while the mail
    // waited (an SMTP server away) is the one it goes to, not the one it was queued with.
    const recipients = currentRecipients(db, check.usageEventId);
    if (recipients === null) {
      markAttemptFailed(db, mail.id, NO_ADDRESS, null);
      log.warn({ mail: mail.uuid, kind: mail.kind }, `mail not sent: ${NO_ADDRESS}`);
      return true;
    }
    // Written anew at each try, as the usage and the server stand now: the usage may have been
    // given to another person since (a station pushing it again), whom the mail would otherwise
    // greet by the last one's name; the public address, the time zone or the tool's name may
    // have been put right while it waited (the Message-ID, of the mail's uuid, stays).
    const current = currentMail(db, check.usageEventId, mail.kind, config);
    if (current !== null) {
      setComposed(db, mail.id, current);
      mail = { ...mail, ...current };
    } else {
      setRecipients(db, mail.id, recipients);
      mail = { ...mail, ...recipients };
    }
    const via = transportFor(config);
    try {
      const { response } = await via.send(mail, config.from);
      const now = new Date(clock()).toISOString();
      // The user has it, recorded at once; the operator's copy goes after it, in an envelope of
      // its own (deliverCopy). A crash here (sent, not yet marked) resends the mail on the next
      // start: at least once, and the time for that is the user's envelope alone.
      markSent(db, mail.id, now, via.copiesApart && mail.cc ? now : null);
      log.info(
        { mail: mail.uuid, kind: mail.kind, to: mail.to, via: via.description, response },
        'mail sent',
      );
      return true;
    } catch (error) {
      const attempts = mail.attempts + 1;
      const message = errorText(error);
      if (attempts >= config.maxAttempts && refusedForGood(error)) {
        markAttemptFailed(db, mail.id, message, null);
        log.error(
          { mail: mail.uuid, kind: mail.kind, to: mail.to, attempts, error: message },
          'mail delivery failed for good',
        );
      } else {
        const retryAt = new Date(clock() + backoffMs(attempts, config)).toISOString();
        markAttemptFailed(db, mail.id, message, retryAt);
        log.warn(
          { mail: mail.uuid, kind: mail.kind, attempts, retryAt, error: message },
          'mail delivery failed; will retry',
        );
      }
      return false;
    }
  }

  /**
   * The operator's copy of a sent mail, owed since its mail server said try later: sent alone.
   * Given up when that server refuses it for good, or after maxAttempts tries; not sent once
   * the usage's answers came in (it tells of a mail that asks for them).
   */
  async function deliverCopy(owed: MailRow, config: MailConfig): Promise<boolean> {
    let mail = owed;
    const check = checkMail(db, mail.usage_event_id);
    if (!check.send) {
      markCopyTried(db, mail.id, null, null);
      log.info({ mail: mail.uuid, kind: mail.kind }, `operator's copy not sent: ${check.why}`);
      return true;
    }
    // To the operator as they are now, as the mail went to its user: an address put right or
    // taken away while the copy waited is the one it reaches, or none.
    const cc = currentCopyRecipient(db, check.usageEventId);
    if (cc === '') {
      markCopyTried(db, mail.id, null, null);
      log.info(
        { mail: mail.uuid, kind: mail.kind },
        "operator's copy not sent: the operator has no address now, or is not copied",
      );
      return true;
    }
    if (cc !== mail.cc) {
      // Composed for them (as the usage stands now, where it can be); the mail as sent to its
      // user stays as it is recorded.
      mail = { ...mail, ...currentMail(db, check.usageEventId, mail.kind, config), cc };
    }
    const via = transportFor(config);
    try {
      const { response } = await via.sendCopy(mail, config.from);
      markCopyTried(db, mail.id, null, null);
      log.info(
        { mail: mail.uuid, kind: mail.kind, cc: mail.cc, via: via.description, response },
        "operator's copy sent",
      );
      return true;
    } catch (error) {
      const attempts = mail.copy_attempts + 1;
      const message = errorText(error);
      if (refusedForGood(error) || attempts >= config.maxAttempts) {
        markCopyTried(db, mail.id, message, null);
        log.warn(
          { mail: mail.uuid, kind: mail.kind, cc: mail.cc, attempts, error: message },
          "mail sent, but the operator's copy was not taken",
        );
        return true;
      }
      const retryAt = new Date(clock() + backoffMs(attempts, config)).toISOString();
      markCopyTried(db, mail.id, message, retryAt);
      log.warn(
        { mail: mail.uuid, kind: mail.kind, cc: mail.cc, attempts, retryAt, error: message },
        "operator's copy not taken now; will retry",
      );
      return false;
    }
  }

  /** Sends what is due, in order, until a mail fails: false then. */
  async function pass(): Promise<boolean> {
    const config = resolveMailConfig(db, context);
    const reminders = queueDueReminders(db, config, clock());
    if (reminders > 0) log.info({ reminders }, 'pending-answers reminders queued');
    for (;;) {
      if (stopped) return true;
      const now = new Date(clock()).toISOString();
      const setBack = new Date(clock() + config.backoffCapMs).toISOString();
      const mail = nextDueMail(db, now, setBack);
      if (mail) {
        if (!(await deliver(mail, config))) return false;
        continue;
      }
      // The users' mails first; then the operators' copies owed.
      const copy = nextDueCopy(db, now, setBack);
      if (!copy) return true;
      if (!(await deliverCopy(copy, config))) return false;
    }
  }

  /** The next pass: at the next mail due, or after a failed pass at the poll interval. */
  function schedule(afterFailure = false): void {
    if (stopped) return;
    if (timer) clearTimeout(timer);
    const config = resolveMailConfig(db, context);
    let delay = config.pollMs;
    const due = nextDueAt(db);
    // The others due now would most likely fail as that one did (the mail server is down, or
    // refuses the login): not tried one after another, each waiting for its timeout.
    if (due !== null && !afterFailure) delay = Math.min(delay, Date.parse(due) - clock());
    timer = setTimeout(run, Math.max(20, delay));
    timer.unref();
  }

  function run(): void {
    timer = null;
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    let failed = false;
    running = pass()
      .then((ok) => void (failed = !ok))
      .catch((error: unknown) => {
        failed = true;
        log.error({ error: errorText(error) }, 'mail worker pass failed');
      })
      .finally(() => {
        running = null;
        // A mail queued during a pass that failed waits too: it would most likely fail alike.
        if (again && !failed) {
          again = false;
          run();
        } else {
          again = false;
          schedule(failed);
        }
      });
  }

  function wake(): void {
    if (stopped) return;
    if (timer) clearTimeout(timer);
    timer = null;
    run();
  }

  const startConfig = resolveMailConfig(db, context);
  const { publicUrl } = startConfig;
  // Whether mail can go out is told at start, not first when a mail fails hours later.
  const checking = transportFor(startConfig);
  checking.verify().then(
    () =>
      checking.sends
        ? log.info({ transport: checking.description }, 'mail: the mail server answers')
        : log.warn(
            { transport: checking.description },
            'mail: no LABSTATION_SMTP_URL: mail is written to this folder as .eml files, not sent',
          ),
    (error: unknown) =>
      log.warn(
        { transport: checking.description, error: errorText(error) },
        'mail: cannot use the mail server now; mail waits in the outbox and is tried again',
      ),
  );
  const host = URL.canParse(publicUrl) ? new URL(publicUrl).hostname : '';
  if (host === '' || host === '0.0.0.0' || host === '[::]') {
    log.warn(
      { publicUrl },
      'links in e-mail will not work: set LABSTATION_PUBLIC_URL or the server.publicUrl setting',
    );
  }
  run();

  return {
    wake,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = null;
      await running;
      transport?.value.close();
      transport = null;
      unregisterMailContext(db);
    },
  };
}
