/**
 * Pending-answers e-mail with real processes: a real SMTP server (the smtp-server package) in
 * a process of its own, a `labstation serve` pointed at it, and a `labstation station --server`
 * where staff force-end a usage. Then the SMTP server goes down and comes back; and a second
 * server without SMTP writes .eml files.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../electron/core/db/open.js';
import { resolveMailConfig } from '../../electron/core/mail/config.js';
import {
  enqueueMail,
  mailsOfUsage,
  markAttemptFailed,
  markSent,
  nextDueMail,
  type MailRow as OutboxMail,
} from '../../electron/core/mail/outbox.js';
import {
  ACCOUNT_OFF,
  NO_ADDRESS,
  queueDueReminders,
  queuePendingAnswersMail,
} from '../../electron/core/mail/pending.js';
import { retryMail } from '../../electron/core/mail/admin.js';
import { setSetting } from '../../electron/core/station/settings.js';
import { backoffMs, startMailWorker } from '../../electron/core/mail/worker.js';
import { createLogger } from '../../electron/core/util/log.js';
import { facilityBundle, goodPreAnswers } from '../fixtures/facility.js';
import {
  createStationKey,
  runCli,
  startServer,
  startStation,
  tempDir,
  writeJson,
  type ServerProcess,
  type StationProcess,
  waitFor,
} from './helpers.js';
import { parseMessage, TestSmtp } from './smtpSink.js';
import { LONE_HOST } from './tcpCable.js';

const PUBLIC_URL = 'https://lab.example.org/labstation/';
const FAST_MAIL = {
  LABSTATION_MAIL_POLL_MS: '200',
  LABSTATION_MAIL_BACKOFF_BASE_MS: '200',
  LABSTATION_MAIL_BACKOFF_CAP_MS: '800',
  LABSTATION_MAIL_MAX_ATTEMPTS: '1000',
};

function serverBundle(aliceFirstName = 'Alice'): Record<string, unknown> {
  const bundle = facilityBundle();
  delete bundle.station;
  const users = bundle.users as Record<string, unknown>[];
  users[0] = { ...users[0], first_name: aliceFirstName, email: 'alice@example.org' };
  users[2] = { ...users[2], email: 'sam@example.org', password: 'staff password 1', role: 'staff' };
  return bundle;
}

async function prepareServerDir(dir: string, bundle: Record<string, unknown>): Promise<string> {
  const imported = await runCli(['import', '--data', dir, writeJson(tempDir(), 'b.json', bundle)]);
  expect(imported.stderr).toBe('');
  expect(imported.code).toBe(0);
  return createStationKey(dir, 'sem-1', 'SEM');
}

function openReadonly(dir: string): Database.Database {
  return new Database(join(dir, 'labstation.db'), { readonly: true, fileMustExist: true });
}

interface MailRow {
  kind: string;
  status: string;
  attempts: number;
  last_error: string | null;
  to: string;
  cc: string;
}

/**
 * A port on LONE_HOST that was free a moment ago: connections to it are refused, until a server
 * starts there (no other test takes it meanwhile).
 */
async function refusedPort(): Promise<number> {
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, LONE_HOST, () => resolve()));
  const port = (closed.address() as AddressInfo).port;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  return port;
}

/** Inserts force-ended usage events of the SEM for Cathodes, their answers pending: ids. */
function pendingEvents(
  db: Database.Database,
): (uuid: string, start: string, end: string, user?: string) => number {
  const idOf = (sql: string): number => db.prepare(sql).pluck().get() as number;
  const insert = db.prepare(
    `INSERT INTO usage_events (uuid, user_id, operator_id, project_id, tool_id, start, "end",
       post_usage_pending, version, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, 1, 2, ?)`,
  );
  return (uuid, start, end, user = 'alice') => {
    const person = idOf(`SELECT id FROM users WHERE username = '${user}'`);
    return Number(
      insert.run(
        uuid,
        person,
        person,
        idOf("SELECT id FROM projects WHERE name = 'Cathodes'"),
        idOf("SELECT id FROM tools WHERE name = 'SEM'"),
        start,
        end,
        end,
      ).lastInsertRowid,
    );
  };
}

function mailsOf(db: Database.Database, usageUuid: string): MailRow[] {
  return db
    .prepare(
      `SELECT m.kind, m.status, m.attempts, m.last_error, m."to", m.cc FROM mail_outbox m
       JOIN usage_events e ON e.id = m.usage_event_id WHERE e.uuid = ? ORDER BY m.id`,
    )
    .all(usageUuid) as MailRow[];
}

async function ok(
  st: StationProcess,
  name: string,
  args: unknown,
): Promise<Record<string, unknown>> {
  const res = await st.rpc(name, args);
  expect(res.status, `${name}: ${JSON.stringify(res.body)}`).toBe(200);
  return res.body as Record<string, unknown>;
}

/** `user` enables SEM (logged on as `operator`), then sam force-ends it; returns the uuid. */
async function forceEndedUsage(st: StationProcess, operator: string, pin: string): Promise<string> {
  await ok(st, 'session.logon', { login: operator, pin });
  const enabled = await ok(st, 'toolControl.enable', {
    tool: 'SEM',
    project: 'Cathodes',
    answers: goodPreAnswers,
    ...(operator === 'alice' ? {} : { user: 'alice' }),
  });
  const uuid = (enabled.usage as { uuid: string }).uuid;
  await ok(st, 'session.logoff', {});
  await ok(st, 'session.logon', { login: 'sam', pin: '9999' });
  const ended = await ok(st, 'toolControl.forceEnd', { tool: 'SEM' });
  expect(ended.usage).toMatchObject({ uuid, post_usage_pending: true });
  await ok(st, 'session.logoff', {});
  return uuid;
}

const smtp = new TestSmtp();
const servers = new Set<ServerProcess>();
const stations = new Set<StationProcess>();
const databases = new Set<Database.Database>();

beforeAll(async () => {
  await smtp.start(0);
});

afterAll(async () => {
  await Promise.allSettled([...stations].map((st) => st.stop()));
  await Promise.allSettled([...servers].map((s) => s.stop()));
  for (const db of databases) db.close();
  await smtp.stop();
});

describe('pending-answers e-mail over SMTP', () => {
  let serverDir: string;
  let server: ServerProcess;
  let serverDb: Database.Database;
  let station: StationProcess;
  let stationKey: string;
  let first: string;

  it('a force-ended usage sends one notice to its user with the link, then one reminder', async () => {
    serverDir = join(tempDir(), 'server');
    stationKey = await prepareServerDir(serverDir, serverBundle());
    server = await startServer(serverDir, {
      ...FAST_MAIL,
      LABSTATION_SMTP_URL: `smtp://labstation:s3cret@127.0.0.1:${smtp.port}`,
      LABSTATION_MAIL_FROM: 'Facility <facility@example.org>',
      LABSTATION_PUBLIC_URL: PUBLIC_URL,
      LABSTATION_REMINDER_HOURS: '0.001',
    });
    servers.add(server);
    serverDb = openReadonly(serverDir);
    databases.add(serverDb);
    station = await startStation(join(tempDir(), 'station'), {}, [
      '--server',
      server.url,
      '--key',
      stationKey,
    ]);
    stations.add(station);

    first = await forceEndedUsage(station, 'alice', '1234');
    const [notice] = await waitFor('the notice', () =>
      smtp.about(first, 'pending_answers').length
        ? smtp.about(first, 'pending_answers')
        : undefined,
    );
    expect(notice.rcpt).toEqual(['alice@example.org']);
    expect(notice.headers.get('to')).toBe('Alice Martin <alice@example.org>');
    expect(notice.headers.has('cc')).toBe(false); // alice operated the tool herself
    expect(notice.headers.get('from')).toBe('Facility <facility@example.org>');
    expect(notice.headers.get('subject')).toMatch(
      /^Post-usage questions pending for SEM on \d{4}-\d{2}-\d{2}$/,
    );
    expect(notice.body).toContain(`https://lab.example.org/labstation/#/pending/${first}`);
    expect(notice.body).toContain('text/html');
    // Each time with its offset from UTC, then the server's zone by name.
    expect(notice.body).toMatch(
      /Session: \d{4}-\d{2}-\d{2} \d{2}:\d{2} [+-]\d{2}:\d{2} to \d{4}-\d{2}-\d{2} \d{2}:\d{2} [+-]\d{2}:\d{2} \(/,
    );
    expect(smtp.logins).toBeGreaterThan(0);

    const [reminder] = await waitFor('the reminder', () =>
      smtp.about(first, 'pending_reminder').length
        ? smtp.about(first, 'pending_reminder')
        : undefined,
    );
    expect(reminder.rcpt).toEqual(['alice@example.org']);
    expect(reminder.headers.get('subject')).toMatch(/^Reminder: post-usage questions pending/);
    expect(reminder.body).toContain(`#/pending/${first}`);
    // The sink has the message before the server hears its answer and marks the mail sent.
    await waitFor('the reminder marked sent', () =>
      mailsOf(serverDb, first)[1]?.status === 'sent' ? true : undefined,
    );
    expect(mailsOf(serverDb, first).map((m) => [m.kind, m.status])).toEqual([
      ['pending_answers', 'sent'],
      ['pending_reminder', 'sent'],
    ]);
    expect(smtp.about(first, 'pending_answers')).toHaveLength(1);
    expect(smtp.about(first, 'pending_reminder')).toHaveLength(1);
  }, 60_000);

  it('a re-pushed pending event queues no second mail', async () => {
    const row = serverDb
      .prepare(
        `SELECT e.uuid, e.version, e.station_version, e.start, e."end", e.pre_run_data, u.uuid AS user_uuid,
           p.uuid AS project_uuid, t.uuid AS tool_uuid, f.uuid AS forcer_uuid
         FROM usage_events e JOIN users u ON u.id = e.user_id JOIN projects p ON p.id = e.project_id
         JOIN tools t ON t.id = e.tool_id JOIN users f ON f.id = e.force_ended_by_id
         WHERE e.uuid = ?`,
      )
      .get(first) as Record<string, string | number>;
    // The station that owns the event resends it, with a newer version still pending: the
    // server stores it (update path), and the mail outbox stays as it was.
    const res = await fetch(`${server.url}sync/push`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Station ${stationKey}` },
      body: JSON.stringify({
        records: [
          {
            id: 1,
            kind: 'usage_event',
            uuid: first,
            payload: {
              uuid: first,
              user_uuid: row.user_uuid,
              operator_uuid: row.user_uuid,
              project_uuid: row.project_uuid,
              tool_uuid: row.tool_uuid,
              force_ended_by_uuid: row.forcer_uuid,
              start: row.start,
              end: row.end,
              validated: 0,
              remote_work: 0,
              pre_run_data: row.pre_run_data,
              run_data: '',
              post_usage_pending: 1,
              reminder_due: 1,
              version: Number(row.station_version) + 1,
            },
          },
        ],
      }),
    });
    expect(await res.json()).toEqual({ acked: [1], stale: [], error: null });
    expect(
      serverDb.prepare('SELECT version FROM usage_events WHERE uuid = ?').pluck().get(first),
    ).toBe(Number(row.version) + 1);
    expect(mailsOf(serverDb, first)).toHaveLength(2);
  });

  it('says at start whether the mail server answers', async () => {
    const dir = join(tempDir(), 'server');
    await prepareServerDir(dir, serverBundle());
    // A port that was free a moment ago: nothing answers there.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    const closed = await startServer(dir, { LABSTATION_SMTP_URL: `smtp://127.0.0.1:${port}` });
    try {
      await waitFor('the warning', () =>
        closed.stderr().includes('mail: cannot use the mail server now') ? true : undefined,
      );
      expect(closed.stderr()).toMatch(/ECONNREFUSED/);
      expect(closed.stderr()).not.toContain('the mail server answers');
    } finally {
      await closed.stop();
    }
    // No SMTP set: it says that mail is only written to a folder, not that a server answers.
    const none = join(tempDir(), 'server');
    await prepareServerDir(none, serverBundle());
    const unsent = await startServer(none, {});
    try {
      await waitFor('the notice', () =>
        unsent.stderr().includes('mail: no LABSTATION_SMTP_URL') ? true : undefined,
      );
      expect(unsent.stderr()).toContain(join(none, 'mail'));
      expect(unsent.stderr()).not.toContain('the mail server answers');
    } finally {
      await unsent.stop();
    }
  });

  it('while SMTP is down the mail stays queued, and goes out once SMTP is back', async () => {
    await smtp.stop();
    // sam runs SEM for alice this time: the notice goes to alice, copy to sam.
    const second = await forceEndedUsage(station, 'sam', '9999');
    const failing = await waitFor('failed attempts', () => {
      const [mail] = mailsOf(serverDb, second);
      return mail && mail.attempts >= 2 ? mail : undefined;
    });
    expect(failing).toMatchObject({ kind: 'pending_answers', status: 'queued' });
    expect(failing.last_error).toMatch(/ECONNREFUSED/);
    expect(smtp.about(second, 'pending_answers')).toHaveLength(0);

    await smtp.start(); // same port
    const [notice] = await waitFor('the notice after SMTP came back', () =>
      smtp.about(second, 'pending_answers').length
        ? smtp.about(second, 'pending_answers')
        : undefined,
    );
    // alice's mail first, then sam's copy, each in an envelope of its own (the same message).
    expect(notice.rcpt).toEqual(['alice@example.org']);
    expect(notice.headers.get('to')).toBe('Alice Martin <alice@example.org>');
    expect(notice.headers.get('cc')).toBe('sam <sam@example.org>');
    expect(notice.body).toContain(`#/pending/${second}`);
    // The copy goes after the mail is recorded sent, in an envelope of its own.
    await waitFor('the notice marked sent, and its copy sent', () =>
      mailsOf(serverDb, second)[0]?.status === 'sent' &&
      smtp.about(second, 'pending_answers').length === 2
        ? true
        : undefined,
    );
    const both = smtp.about(second, 'pending_answers');
    expect(both.map((m) => m.rcpt)).toEqual([['alice@example.org'], ['sam@example.org']]);
    expect(both[1].headers.get('message-id')).toBe(notice.headers.get('message-id'));
  }, 60_000);
});

describe('pending-answers e-mail without SMTP', () => {
  it('writes an RFC 5322 .eml file under <data>/mail/, with user strings escaped in the HTML', async () => {
    const dir = join(tempDir(), 'server-eml');
    const key = await prepareServerDir(dir, serverBundle('Alice <b>&'));
    const server = await startServer(dir, {
      ...FAST_MAIL,
      LABSTATION_SMTP_URL: '',
      LABSTATION_PUBLIC_URL: '',
      LABSTATION_MAIL_FROM: '',
    });
    servers.add(server);
    const db = openReadonly(dir);
    databases.add(db);
    const uuidOf = (table: string, where: string): string =>
      db.prepare(`SELECT uuid FROM ${table} WHERE ${where}`).pluck().get() as string;
    const uuid = '01900000-0000-7000-8000-00000000e001';
    const payload = {
      uuid,
      user_uuid: uuidOf('users', "username = 'alice'"),
      operator_uuid: uuidOf('users', "username = 'sam'"),
      project_uuid: uuidOf('projects', "name = 'Cathodes'"),
      tool_uuid: uuidOf('tools', "name = 'SEM'"),
      force_ended_by_uuid: uuidOf('users', "username = 'sam'"),
      start: '2025-05-01T08:00:00.000Z',
      end: '2025-05-01T09:30:00.000Z',
      validated: 0,
      remote_work: 0,
      pre_run_data: '{}',
      run_data: '',
      post_usage_pending: 1,
      reminder_due: 1,
      version: 2,
    };
    const push = async (version: number): Promise<unknown> => {
      const res = await fetch(`${server.url}sync/push`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Station ${key}` },
        body: JSON.stringify({
          records: [{ id: version, kind: 'usage_event', uuid, payload: { ...payload, version } }],
        }),
      });
      return res.json();
    };
    expect(await push(2)).toEqual({ acked: [2], stale: [], error: null });
    // Idempotent: the same event pushed again (same and newer version) queues nothing more.
    expect(await push(2)).toEqual({ acked: [2], stale: [], error: null });
    expect(await push(3)).toEqual({ acked: [3], stale: [], error: null });
    expect(mailsOf(db, uuid).map((m) => m.kind)).toEqual(['pending_answers']);

    const mailDir = join(dir, 'mail');
    const files = await waitFor('the .eml file', () => {
      const names = existsSync(mailDir) ? readdirSync(mailDir) : [];
      return names.some((n) => n.endsWith('.eml')) ? names : undefined;
    });
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/^2\d{3}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}\.\d{3}Z-[0-9a-f-]{36}\.eml$/);
    const raw = readFileSync(join(mailDir, files[0]), 'utf8');
    expect(raw).not.toMatch(/[^\r]\n/); // CRLF line ends throughout
    const mail = parseMessage(raw);
    expect(mail.headers.get('from')).toBe('Labstation <labstation@localhost>');
    expect(mail.headers.get('to')).toBe('"Alice <b>& Martin" <alice@example.org>');
    expect(mail.headers.get('cc')).toBe('sam <sam@example.org>');
    expect(mail.headers.get('subject')).toMatch(
      /^Post-usage questions pending for SEM on 2025-0[45]-\d{2}$/,
    );
    expect(mail.headers.get('message-id')).toMatch(/^<[0-9a-f-]{36}@localhost>$/);
    expect(mail.headers.get('date')).toBeDefined();
    expect(mail.headers.get('mime-version')).toBe('1.0');
    expect(mail.headers.get('content-type')).toMatch(/^multipart\/alternative; boundary=/);
    // Without a public URL configured, links use the URL the server listens on.
    expect(mail.body).toContain(`${server.url}#/pending/${uuid}`);
    expect(mail.body).toContain('Hello Alice <b>& Martin,'); // the text part, as is
    expect(mail.body).toContain('Hello Alice &lt;b&gt;&amp; Martin,'); // the HTML part, escaped
    expect(mail.body).not.toContain('<p>Hello Alice <b>');
    await waitFor('the mail marked sent', () =>
      mailsOf(db, uuid)[0]?.status === 'sent' ? true : undefined,
    );
  }, 60_000);
});

describe('mail worker retry (in process, real SMTP client and server)', () => {
  it('keeps a mail while the mail server is away, however long; gives up only on a refusal for good', async () => {
    const dir = join(tempDir(), 'server-retry');
    await prepareServerDir(dir, serverBundle());
    const db = openDatabase(join(dir, 'labstation.db'));
    // bob's mailbox is one the SMTP server refuses for good (550).
    db.prepare("UPDATE users SET email = 'unknown@example.org' WHERE username = 'bob'").run();
    const event = pendingEvents(db);
    // Refused until the SMTP server starts there.
    const port = await refusedPort();
    const late = new TestSmtp();

    const worker = startMailWorker({
      db,
      log: createLogger('silent'),
      dataDir: dir,
      listenUrl: 'http://127.0.0.1:1/',
      env: {
        LABSTATION_SMTP_URL: `smtp://${LONE_HOST}:${port}`,
        LABSTATION_MAIL_POLL_MS: '50',
        LABSTATION_MAIL_BACKOFF_BASE_MS: '40',
        LABSTATION_MAIL_BACKOFF_CAP_MS: '100',
        LABSTATION_MAIL_MAX_ATTEMPTS: '4',
      },
    });
    const row = (
      id: number | null,
    ): { status: string; attempts: number; last_error: string | null } =>
      db.prepare('SELECT status, attempts, last_error FROM mail_outbox WHERE id = ?').get(id) as {
        status: string;
        attempts: number;
        last_error: string | null;
      };
    try {
      const waiting = event(
        '01900000-0000-7000-8000-00000000f001',
        '2025-05-01T08:00:00.000Z',
        '2025-05-01T09:00:00.000Z',
      );
      const waitingMail = db.transaction(() => queuePendingAnswersMail(db, waiting))();
      expect(waitingMail).toEqual(expect.any(Number));
      expect(db.transaction(() => queuePendingAnswersMail(db, waiting))()).toBeNull();
      // Nothing answers: tried more often than LABSTATION_MAIL_MAX_ATTEMPTS, still queued.
      const refused = await waitFor('more failed attempts than the maximum', () =>
        row(waitingMail).attempts >= 7 ? row(waitingMail) : undefined,
      );
      expect(refused.status).toBe('queued');
      expect(refused.last_error).toMatch(/ECONNREFUSED/);
      // The mail server comes up: the mail goes out, once.
      await late.start(port, LONE_HOST);
      await waitFor('the mail sent', () => (row(waitingMail).status === 'sent' ? true : undefined));
      expect(late.about('01900000-0000-7000-8000-00000000f001', 'pending_answers')).toHaveLength(1);

      // A mailbox the mail server refuses for good: given up after the last attempt.
      const doomed = event(
        '01900000-0000-7000-8000-00000000f003',
        '2025-05-03T08:00:00.000Z',
        '2025-05-03T09:00:00.000Z',
        'bob',
      );
      const doomedMail = db.transaction(() => queuePendingAnswersMail(db, doomed))();
      const failed = await waitFor('the mail marked failed', () =>
        row(doomedMail).status === 'failed' ? row(doomedMail) : undefined,
      );
      expect(failed.attempts).toBe(4);
      expect(failed.last_error).toMatch(/550/);
      // An address the mail library itself refuses (no recipient it can read): given up too,
      // not tried every hour without end.
      db.prepare("UPDATE users SET email = 'not an address' WHERE username = 'bob'").run();
      const unreadable = event(
        '01900000-0000-7000-8000-00000000f004',
        '2025-05-04T08:00:00.000Z',
        '2025-05-04T09:00:00.000Z',
        'bob',
      );
      const unreadableMail = db.transaction(() => queuePendingAnswersMail(db, unreadable))();
      const dropped = await waitFor('the unreadable address given up', () =>
        row(unreadableMail).status === 'failed' ? row(unreadableMail) : undefined,
      );
      expect(dropped.attempts).toBe(4);
      expect(dropped.last_error).toMatch(/EENVELOPE/);

      // Queued, then the answers arrive before it could be sent: it is cancelled, not sent.
      const answered = event(
        '01900000-0000-7000-8000-00000000f002',
        '2025-05-02T08:00:00.000Z',
        '2025-05-02T09:00:00.000Z',
      );
      const answeredMail = db.transaction(() => {
        const id = queuePendingAnswersMail(db, answered);
        db.prepare('UPDATE usage_events SET post_usage_pending = 0 WHERE id = ?').run(answered);
        return id;
      })();
      await waitFor('the mail cancelled', () =>
        row(answeredMail).status === 'cancelled' ? true : undefined,
      );
      // An event not force-ended queues nothing.
      expect(db.transaction(() => queuePendingAnswersMail(db, answered))()).toBeNull();
    } finally {
      await worker.stop();
      await late.stop();
      db.close();
    }
  }, 30_000);

  // Mutation: the next pass after a failed one at the next mail due (20 ms on): every queued
  // mail tried in turn against a mail server that is down, each waiting for its own failure.
  it('after a failed try waits the poll interval before it tries the other mails due', async () => {
    const dir = join(tempDir(), 'server-down');
    await prepareServerDir(dir, serverBundle());
    const db = openDatabase(join(dir, 'labstation.db'));
    const event = pendingEvents(db);
    db.transaction(() => {
      for (let i = 1; i <= 3; i++) {
        const id = event(
          `01900000-0000-7000-8000-00000000e00${i}`,
          `2025-05-0${i}T08:00:00.000Z`,
          `2025-05-0${i}T09:00:00.000Z`,
        );
        queuePendingAnswersMail(db, id);
      }
    })();
    const port = await refusedPort();
    const worker = startMailWorker({
      db,
      log: createLogger('silent'),
      dataDir: dir,
      listenUrl: 'http://127.0.0.1:1/',
      env: {
        LABSTATION_SMTP_URL: `smtp://${LONE_HOST}:${port}`,
        LABSTATION_MAIL_POLL_MS: '60000',
        LABSTATION_MAIL_BACKOFF_BASE_MS: '40',
        LABSTATION_MAIL_BACKOFF_CAP_MS: '100',
      },
    });
    const attempts = (): number[] =>
      db.prepare('SELECT attempts FROM mail_outbox ORDER BY id').pluck().all() as number[];
    try {
      await waitFor('the first try', () => (attempts().some((n) => n > 0) ? true : undefined));
      // Connections are refused at once: ten times the time another try would have taken.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(attempts()).toEqual([1, 0, 0]);
    } finally {
      await worker.stop();
      db.close();
    }
  });
});

/** An ended usage of SEM (Cathodes) by `user`, run by `operator`, its answers pending: its id. */
function pendingEvent(db: Database.Database, uuid: string, user: string, operator: string): number {
  const idOf = (sql: string, name: string): number => db.prepare(sql).pluck().get(name) as number;
  const person = 'SELECT id FROM users WHERE username = ?';
  return Number(
    db
      .prepare(
        `INSERT INTO usage_events (uuid, user_id, operator_id, project_id, tool_id, start, "end",
           post_usage_pending, version, updated_at)
         VALUES (?, ?, ?, ?, ?, '2025-05-01T08:00:00.000Z', '2025-05-01T09:00:00.000Z', 1, 2,
           '2025-05-01T09:00:00.000Z')`,
      )
      .run(
        uuid,
        idOf(person, user),
        idOf(person, operator),
        idOf('SELECT id FROM projects WHERE name = ?', 'Cathodes'),
        idOf('SELECT id FROM tools WHERE name = ?', 'SEM'),
      ).lastInsertRowid,
  );
}

describe("the user's mail and the operator's copy", () => {
  /**
   * A server dir whose alice has `email` (and sam `samEmail`), alice's usage force-ended and
   * operated by `operator` (sam: her notice, with a copy to him), its notice queued, and a
   * worker sending through the test's SMTP sink; what it logs at warn and above in `said`.
   * `meanwhile` changes the people after the notice was queued and before the worker starts,
   * as while the SMTP server is away.
   */
  async function sending(
    name: string,
    email: string,
    {
      samEmail = 'sam@example.org',
      operator = 'sam',
      uuid = `01900000-0000-7000-8000-0000000${name.length.toString().padStart(5, '0')}`,
      meanwhile,
    }: {
      samEmail?: string;
      operator?: string;
      uuid?: string;
      meanwhile?: (setEmail: (user: string, email: string) => void, db: Database.Database) => void;
    } = {},
  ) {
    const dir = join(tempDir(), name);
    await prepareServerDir(dir, serverBundle());
    const db = openDatabase(join(dir, 'labstation.db'));
    databases.add(db);
    const setEmail = (user: string, address: string): void =>
      void db.prepare('UPDATE users SET email = ? WHERE username = ?').run(address, user);
    setEmail('alice', email);
    setEmail('sam', samEmail);
    const said: string[] = [];
    const event = pendingEvent(db, uuid, 'alice', operator);
    db.transaction(() => queuePendingAnswersMail(db, event))();
    if (meanwhile) {
      expect(mailsOf(db, uuid)[0]?.to).toContain(`<${email}>`);
      meanwhile(setEmail, db);
    }
    const worker = startMailWorker({
      db,
      log: pino({ level: 'warn', base: undefined }, { write: (line: string) => said.push(line) }),
      dataDir: dir,
      listenUrl: 'http://127.0.0.1:1/',
      env: {
        LABSTATION_SMTP_URL: `smtp://labstation:s3cret@127.0.0.1:${smtp.port}`,
        LABSTATION_MAIL_POLL_MS: '50',
        LABSTATION_MAIL_BACKOFF_BASE_MS: '40',
        LABSTATION_MAIL_BACKOFF_CAP_MS: '100',
        LABSTATION_MAIL_MAX_ATTEMPTS: '2',
      },
    });
    return { db, uuid, worker, said };
  }

  it("is sent only once the user's mail server took it; the copy goes once, in its own envelope", async () => {
    // alice's mail server answers "try later" (450) the first time, and takes it then.
    const { db, uuid, worker } = await sending('greylisted', 'greylisted@example.org');
    try {
      const [mail] = await waitFor('the mail sent, and its copy', () =>
        mailsOf(db, uuid)[0]?.status === 'sent' && smtp.about(uuid, 'pending_answers').length === 2
          ? mailsOf(db, uuid)
          : undefined,
      );
      expect(mail.attempts).toBe(2); // the try refused, and the one taken
      const got = smtp.about(uuid, 'pending_answers');
      expect(got.map((m) => m.rcpt)).toEqual([['greylisted@example.org'], ['sam@example.org']]);
      expect(got[0].headers.get('cc')).toMatch(/sam@example\.org/);
    } finally {
      await worker.stop();
    }
  });

  // Mutation: the user's mail recorded sent only once its copy was taken too (as it was): a
  // restart while the copy's mail server took its time sent the user's mail again.
  it("is recorded sent as its user's mail server takes it, before the operator's copy goes", async () => {
    const { db, uuid, worker } = await sending('slow-copy', 'alice@example.org', {
      samEmail: 'slow@ops.example.org',
      uuid: '01900000-0000-7000-8000-00000000f0d1',
    });
    try {
      await waitFor('the mail sent', () =>
        mailsOf(db, uuid)[0]?.status === 'sent' ? true : undefined,
      );
      // Its copy is still on its way (its mail server answers in 1.5 s).
      expect(smtp.about(uuid, 'pending_answers').map((m) => m.rcpt)).toEqual([
        ['alice@example.org'],
      ]);
      await waitFor('the copy', () =>
        smtp.about(uuid, 'pending_answers').length === 2 ? true : undefined,
      );
      expect(smtp.about(uuid, 'pending_answers')[1].rcpt).toEqual(['slow@ops.example.org']);
    } finally {
      await worker.stop();
    }
  });

  // Mutation: deliverCopy sending to the address stored with the mail (as it did).
  it("sends an operator's copy tried again to the address the operator has then", async () => {
    const { db, uuid, worker } = await sending('copy-moved', 'alice@example.org', {
      samEmail: 'slowgrey@ops.example.org',
      uuid: '01900000-0000-7000-8000-00000000f0d2',
    });
    try {
      await waitFor('the mail sent', () =>
        mailsOf(db, uuid)[0]?.status === 'sent' ? true : undefined,
      );
      // While its mail server takes its time (and then says try later), sam's address changes.
      db.prepare("UPDATE users SET email = 'sam@new.example.org' WHERE username = 'sam'").run();
      await waitFor('the copy', () =>
        smtp.about(uuid, 'pending_answers').length === 2 ? true : undefined,
      );
      const copy = smtp.about(uuid, 'pending_answers')[1];
      expect(copy.rcpt).toEqual(['sam@new.example.org']);
      expect(copy.headers.get('cc')).toMatch(/<?sam@new\.example\.org>?$/);
    } finally {
      await worker.stop();
    }
  });

  // Mutation: the worker writing a mail anew only when its recipients changed, or at its first
  // try (as it did): one that waited kept the link it was first written with.
  it('is written anew at each try: a public address put right while it waited is its link', async () => {
    const { db, uuid, worker } = await sending('link-fixed', 'slowgrey@example.org', {
      uuid: '01900000-0000-7000-8000-00000000f0d3',
    });
    try {
      // While alice's mail server takes its time (and then says try later), the server's public
      // address is put right.
      db.prepare(`INSERT OR REPLACE INTO settings (key, value) VALUES ('server.publicUrl', ?)`).run(
        JSON.stringify('https://lab.example.org/'),
      );
      const [mail] = await waitFor('the mail', () => {
        const got = smtp.about(uuid, 'pending_answers');
        return got.length ? got : undefined;
      });
      expect(mail.body).toContain(`https://lab.example.org/#/pending/${uuid}`);
    } finally {
      await worker.stop();
    }
  });

  // Mutation (second read): deliverCopy dropping the copy when the user has no address now.
  it("sends an operator's copy owed after the user's address was taken away", async () => {
    const { db, uuid, worker } = await sending('copy-kept', 'alice@example.org', {
      samEmail: 'slowgrey@copy.example.org',
      uuid: '01900000-0000-7000-8000-00000000f0d4',
    });
    try {
      await waitFor('the mail sent', () =>
        mailsOf(db, uuid)[0]?.status === 'sent' ? true : undefined,
      );
      // Alice has hers; while sam's server takes its time (then says try later), her address goes.
      db.prepare("UPDATE users SET email = '' WHERE username = 'alice'").run();
      await waitFor('the copy', () =>
        smtp.about(uuid, 'pending_answers').length === 2 ? true : undefined,
      );
      expect(smtp.about(uuid, 'pending_answers')[1].rcpt).toEqual(['slowgrey@copy.example.org']);
    } finally {
      await worker.stop();
    }
  });

  it("is sent when only the operator's copy is refused, and says so as a warning", async () => {
    const { db, uuid, worker, said } = await sending('copy-refused', 'alice@example.org', {
      samEmail: 'unknown@example.org',
    });
    try {
      await waitFor('the mail sent', () =>
        mailsOf(db, uuid)[0]?.status === 'sent' ? true : undefined,
      );
      expect(smtp.about(uuid, 'pending_answers').map((m) => m.rcpt)).toEqual([
        ['alice@example.org'],
      ]);
      const warned = await waitFor('the warning', () =>
        said.find((line) => line.includes("the operator's copy was not taken")),
      );
      expect(warned).toMatch(/unknown@example\.org.*550 no such mailbox/);
    } finally {
      await worker.stop();
    }
  });

  it("tries the operator's copy again when its mail server says try later, alone", async () => {
    // sam's mail server greylists (450 the first time). The copy used to be dropped with a
    // warning, as a refused one is: the first copy to every new operator was lost.
    const { db, uuid, worker, said } = await sending('copy-greylisted', 'alice@example.org', {
      samEmail: 'greylisted@ops.example.org',
    });
    try {
      await waitFor('the copy taken', () =>
        smtp.about(uuid, 'pending_answers').length === 2 ? true : undefined,
      );
      // alice's mail once, then the copy once more, by itself.
      expect(smtp.about(uuid, 'pending_answers').map((m) => m.rcpt)).toEqual([
        ['alice@example.org'],
        ['greylisted@ops.example.org'],
      ]);
      const row = await waitFor('the copy marked sent', () => {
        const r = db
          .prepare('SELECT status, attempts, copy_due, copy_attempts FROM mail_outbox')
          .get() as { copy_due: string | null };
        return r.copy_due === null ? r : undefined;
      });
      expect(row).toEqual({ status: 'sent', attempts: 1, copy_due: null, copy_attempts: 1 });
      expect(said.some((line) => line.includes("the operator's copy was not taken"))).toBe(false);
      expect(said.some((line) => line.includes("operator's copy not taken now"))).toBe(true);
    } finally {
      await worker.stop();
    }
  });

  it('goes to the addresses the people have when it is sent, not those it was queued with', async () => {
    const uuid = '01900000-0000-7000-8000-00000000f0c1';
    const { db, worker } = await sending('address-changed', 'alice@old.example.org', {
      uuid,
      meanwhile: (setEmail) => {
        setEmail('alice', 'alice@new.example.org');
        setEmail('sam', 'sam@new.example.org');
      },
    });
    try {
      const [mail] = await waitFor('the mail sent, and its copy', () =>
        mailsOf(db, uuid)[0]?.status === 'sent' && smtp.about(uuid, 'pending_answers').length === 2
          ? mailsOf(db, uuid)
          : undefined,
      );
      expect(mail.to).toMatch(/<alice@new\.example\.org>$/);
      expect(mail.cc).toMatch(/<sam@new\.example\.org>$/);
      expect(smtp.about(uuid, 'pending_answers').map((m) => m.rcpt)).toEqual([
        ['alice@new.example.org'],
        ['sam@new.example.org'],
      ]);
    } finally {
      await worker.stop();
    }
  });

  // Mutation: the worker setting the new recipients only (as it did): bob got the mail
  // greeting Alice.
  it('is written anew for another person the usage was given to while it waited', async () => {
    const uuid = '01900000-0000-7000-8000-00000000f0c4';
    const { db, worker } = await sending('user-changed', 'alice@example.org', {
      uuid,
      meanwhile: (setEmail, db) => {
        setEmail('bob', 'bob@example.org');
        db.prepare(
          "UPDATE usage_events SET user_id = (SELECT id FROM users WHERE username = 'bob') WHERE uuid = ?",
        ).run(uuid);
      },
    });
    try {
      const [mail] = await waitFor('the mail sent', () =>
        mailsOf(db, uuid)[0]?.status === 'sent' ? mailsOf(db, uuid) : undefined,
      );
      expect(mail.to).toMatch(/<bob@example\.org>$/);
      const [sent] = smtp.about(uuid, 'pending_answers');
      expect(sent?.rcpt).toEqual(['bob@example.org']);
      expect(sent?.body).toContain('Hello bob,');
      expect(sent?.body).not.toContain('Alice');
    } finally {
      await worker.stop();
    }
  });

  // Mutation: the worker writing a mail anew only when its addresses changed: retryMail sets
  // the new person's, and the mail went with the last person's greeting.
  it('is written anew for another person the usage was given to when a failed mail is retried', async () => {
    const uuid = '01900000-0000-7000-8000-00000000f0c5';
    const { db, worker } = await sending('retried-user-changed', 'alice@example.org', {
      uuid,
      meanwhile: (setEmail, db) => {
        // Refused for good before: failed, waiting for an admin's retry.
        db.prepare(
          "UPDATE mail_outbox SET status = 'failed', last_error = 'x' WHERE usage_event_id = (SELECT id FROM usage_events WHERE uuid = ?)",
        ).run(uuid);
        setEmail('bob', 'bob@example.org');
        db.prepare(
          "UPDATE usage_events SET user_id = (SELECT id FROM users WHERE username = 'bob') WHERE uuid = ?",
        ).run(uuid);
      },
    });
    try {
      expect(mailsOf(db, uuid)[0]?.status).toBe('failed');
      const id = db
        .prepare(
          'SELECT m.id FROM mail_outbox m JOIN usage_events e ON e.id = m.usage_event_id WHERE e.uuid = ?',
        )
        .pluck()
        .get(uuid) as number;
      const retried = retryMail(db, id, new Date().toISOString());
      expect(retried.outcome).toBe('queued');
      await waitFor('the mail sent', () =>
        mailsOf(db, uuid)[0]?.status === 'sent' ? true : undefined,
      );
      const [sent] = smtp.about(uuid, 'pending_answers');
      expect(sent?.rcpt).toEqual(['bob@example.org']);
      expect(sent?.body).toContain('Hello bob,');
      expect(sent?.body).not.toContain('Alice');
    } finally {
      await worker.stop();
    }
  });

  it('is failed as having no address when its user lost theirs while it waited', async () => {
    const uuid = '01900000-0000-7000-8000-00000000f0c2';
    const { db, worker } = await sending('address-gone', 'alice@old.example.org', {
      uuid,
      operator: 'alice',
      meanwhile: (setEmail) => setEmail('alice', ''),
    });
    try {
      const [mail] = await waitFor('the mail failed', () =>
        mailsOf(db, uuid)[0]?.status === 'failed' ? mailsOf(db, uuid) : undefined,
      );
      expect(mail.last_error).toBe('the user has no e-mail address');
      expect(smtp.about(uuid, 'pending_answers')).toEqual([]);
    } finally {
      await worker.stop();
    }
  });

  it('is cancelled when its tool asks no post-usage questions any more, and none is queued then', async () => {
    const uuid = '01900000-0000-7000-8000-00000000f0c3';
    const { db, worker } = await sending('no-questions', 'alice@old.example.org', {
      uuid,
      operator: 'alice',
      meanwhile: (_setEmail, db) => {
        db.prepare("UPDATE tools SET post_usage_questions = '[]' WHERE name = 'SEM'").run();
      },
    });
    try {
      const [mail] = await waitFor('the mail cancelled', () =>
        mailsOf(db, uuid)[0]?.status === 'cancelled' ? mailsOf(db, uuid) : undefined,
      );
      expect(mail.last_error).toBe('the tool asks no post-usage questions now');
      expect(smtp.about(uuid, 'pending_answers')).toEqual([]);
      // A usage of it force-ended now gets no notice: its form would ask nothing.
      const later = pendingEvent(db, '01900000-0000-7000-8000-00000000f0c4', 'alice', 'alice');
      expect(db.transaction(() => queuePendingAnswersMail(db, later))()).toBeNull();
    } finally {
      await worker.stop();
    }
  });

  it("fails for good when the user's mailbox is refused for good, and sends no copy", async () => {
    const { db, uuid, worker } = await sending('refused', 'unknown@example.org');
    try {
      const [mail] = await waitFor('the mail failed', () =>
        mailsOf(db, uuid)[0]?.status === 'failed' ? mailsOf(db, uuid) : undefined,
      );
      expect(mail.last_error).toMatch(/550/);
      expect(smtp.about(uuid, 'pending_answers')).toEqual([]);
    } finally {
      await worker.stop();
    }
  });
});

describe('a user without an e-mail address', () => {
  it('records the notice as failed, saying why, and logs a warning', async () => {
    const dir = join(tempDir(), 'server-no-address');
    await prepareServerDir(dir, serverBundle()); // bob has no e-mail address
    const db = openDatabase(join(dir, 'labstation.db'));
    const said: string[] = [];
    const log = pino(
      { level: 'warn', base: undefined },
      { write: (line: string) => said.push(line) },
    );
    const worker = startMailWorker({
      db,
      log,
      dataDir: dir,
      listenUrl: 'http://127.0.0.1:1/',
      env: { LABSTATION_MAIL_POLL_MS: '60000' },
    });
    try {
      const uuid = '01900000-0000-7000-8000-00000000f0b0';
      const event = pendingEvent(db, uuid, 'bob', 'bob');
      said.length = 0; // what the worker said at start (no SMTP set)
      const id = db.transaction(() => queuePendingAnswersMail(db, event))();
      expect(id).toEqual(expect.any(Number));
      expect(
        db
          .prepare('SELECT status, attempts, last_error, "to" FROM mail_outbox WHERE id = ?')
          .get(id),
      ).toEqual({
        status: 'failed',
        attempts: 0,
        last_error: 'the user has no e-mail address',
        to: '',
      });
      // Recorded once only, as any notice.
      expect(db.transaction(() => queuePendingAnswersMail(db, event))()).toBeNull();
      expect(said.map((line) => JSON.parse(line) as Record<string, unknown>)).toEqual([
        expect.objectContaining({
          level: 40,
          user: 'bob',
          usage_event: uuid,
          mail: id,
          msg: 'pending-answers notice not sent: the user has no e-mail address',
        }),
      ]);
    } finally {
      await worker.stop();
      db.close();
    }
  });
});

describe('mail settings read by the worker', () => {
  it('holds a reminder delay set by hand in the database to ten years at most', () => {
    const dir = tempDir();
    const db = openDatabase(join(dir, 'labstation.db'));
    try {
      setSetting(db, 'mail.reminderHours', 1e10);
      expect(
        resolveMailConfig(db, { env: {}, dataDir: dir, listenUrl: 'http://127.0.0.1:1/' })
          .reminderHours,
      ).toBe(87_600);
      setSetting(db, 'mail.reminderHours', 0);
      expect(
        resolveMailConfig(db, { env: {}, dataDir: dir, listenUrl: 'http://127.0.0.1:1/' })
          .reminderHours,
      ).toBeNull();
    } finally {
      db.close();
    }
  });
});

describe('the reminder scheduler (its clock given)', () => {
  it('reminds once, the delay after the notice was sent, and never once answered', async () => {
    const dir = join(tempDir(), 'server-reminders');
    await prepareServerDir(dir, serverBundle());
    const db = openDatabase(join(dir, 'labstation.db'));
    try {
      const config = resolveMailConfig(db, {
        env: { LABSTATION_REMINDER_HOURS: '24' },
        dataDir: dir,
        listenUrl: 'http://127.0.0.1:1/',
      });
      expect(config.reminderHours).toBe(24);
      const idOf = (sql: string): number => db.prepare(sql).pluck().get() as number;
      const alice = idOf("SELECT id FROM users WHERE username = 'alice'");
      const insert = db.prepare(
        `INSERT INTO usage_events (uuid, user_id, operator_id, project_id, tool_id, start, "end",
           post_usage_pending, version, updated_at)
         VALUES (?, ?, ?, ?, ?, '2025-05-01T08:00:00.000Z', '2025-05-01T09:00:00.000Z', 1, 2,
           '2025-05-01T09:00:00.000Z')`,
      );
      const event = (uuid: string): number =>
        Number(
          insert.run(
            uuid,
            alice,
            alice,
            idOf("SELECT id FROM projects WHERE name = 'Cathodes'"),
            idOf("SELECT id FROM tools WHERE name = 'SEM'"),
          ).lastInsertRowid,
        );
      const hour = 3_600_000;
      const queued = Date.parse('2025-05-01T09:00:00.000Z');
      const pending = event('01900000-0000-7000-8000-00000000a001');
      const answered = event('01900000-0000-7000-8000-00000000a002');
      const notice = (id: number): number =>
        db.transaction(() => queuePendingAnswersMail(db, id, new Date(queued).toISOString()))()!;
      const pendingNotice = notice(pending);
      const answeredNotice = notice(answered);
      // The mail server was away for two days: no reminder for a notice not sent yet.
      expect(queueDueReminders(db, config, queued + 48 * hour)).toBe(0);
      const sent = queued + 48 * hour;
      markSent(db, pendingNotice, new Date(sent).toISOString());
      markSent(db, answeredNotice, new Date(sent).toISOString());
      db.prepare('UPDATE usage_events SET post_usage_pending = 0 WHERE id = ?').run(answered);
      // Counted from the sending, not the queueing: not a second before the delay.
      expect(queueDueReminders(db, config, sent + hour)).toBe(0);
      expect(queueDueReminders(db, config, sent + 24 * hour - 1_000)).toBe(0);
      expect(queueDueReminders(db, config, sent + 24 * hour)).toBe(1);
      // One reminder only, and none for the event answered meanwhile.
      expect(queueDueReminders(db, config, sent + 72 * hour)).toBe(0);
      expect(mailsOfUsage(db, pending).map((m) => [m.kind, m.status, m.to])).toEqual([
        ['pending_answers', 'sent', '"Alice Martin" <alice@example.org>'],
        ['pending_reminder', 'queued', '"Alice Martin" <alice@example.org>'],
      ]);
      expect(mailsOfUsage(db, answered).map((m) => m.kind)).toEqual(['pending_answers']);
    } finally {
      db.close();
    }
  });
});

describe('a mail that failed to go (its clock given)', () => {
  it('is due again only when its backoff is over, doubling each time up to the cap', () => {
    const dir = tempDir();
    const db = openDatabase(join(dir, 'labstation.db'));
    try {
      const config = resolveMailConfig(db, {
        env: {
          LABSTATION_MAIL_BACKOFF_BASE_MS: '30000',
          LABSTATION_MAIL_BACKOFF_CAP_MS: '100000',
        },
        dataDir: dir,
        listenUrl: 'http://127.0.0.1:1/',
      });
      expect([1, 2, 3, 4, 30].map((attempts) => backoffMs(attempts, config))).toEqual([
        30_000, 60_000, 100_000, 100_000, 100_000,
      ]);
      const at = (ms: number): string => new Date(ms).toISOString();
      const t0 = Date.parse('2025-05-01T09:00:00.000Z');
      const id = enqueueMail(
        db,
        {
          kind: 'pending_answers',
          usageEventId: null,
          to: 'alice@example.org',
          cc: '',
          subject: 's',
          text: 't',
          html: null,
        },
        at(t0),
      );
      // Due by now, or set before the clock was set back (later than now and the longest
      // backoff): the worker's question.
      const due = (ms: number): ReturnType<typeof nextDueMail> =>
        nextDueMail(db, at(ms), at(ms + config.backoffCapMs));
      expect(due(t0)?.id).toBe(id);
      markAttemptFailed(db, id!, 'ECONNREFUSED', at(t0 + backoffMs(1, config)));
      expect(due(t0)).toBeUndefined();
      expect(due(t0 + 29_999)).toBeUndefined();
      expect(due(t0 + 30_000)).toMatchObject({ id, attempts: 1 });
      // The clock set back a day: it waits no longer than the longest backoff, not a day.
      expect(due(t0 - 86_400_000)).toMatchObject({ id, attempts: 1 });
      expect(due(t0 - 60_000)).toBeUndefined();
    } finally {
      db.close();
    }
  });
});

/**
 * A server data dir (`name`) with the bundle's people; `notice` ends a usage of SEM by `user`
 * (operated by `operator`) with its post-usage answers pending, queues its notice as the server
 * does, and gives that mail.
 */
async function pendingNotices(name: string): Promise<{
  db: ReturnType<typeof openDatabase>;
  alice: number;
  sam: number;
  notice: (uuid: string, user: number, operator: number) => OutboxMail;
}> {
  const dir = join(tempDir(), name);
  await prepareServerDir(dir, serverBundle());
  const db = openDatabase(join(dir, 'labstation.db'));
  const idOf = (sql: string): number => db.prepare(sql).pluck().get() as number;
  const insert = db.prepare(
    `INSERT INTO usage_events (uuid, user_id, operator_id, project_id, tool_id, start, "end",
       post_usage_pending, version, updated_at)
     VALUES (?, ?, ?, ?, ?, '2025-05-01T08:00:00.000Z', '2025-05-01T09:00:00.000Z', 1, 2,
       '2025-05-01T09:00:00.000Z')`,
  );
  const project = idOf("SELECT id FROM projects WHERE name = 'Cathodes'");
  const tool = idOf("SELECT id FROM tools WHERE name = 'SEM'");
  return {
    db,
    alice: idOf("SELECT id FROM users WHERE username = 'alice'"),
    sam: idOf("SELECT id FROM users WHERE username = 'sam'"),
    notice: (uuid, user, operator) => {
      const id = Number(insert.run(uuid, user, operator, project, tool).lastInsertRowid);
      db.transaction(() => queuePendingAnswersMail(db, id))();
      return mailsOfUsage(db, id)[0];
    },
  };
}

describe('the copy to the operator', () => {
  it('goes to an operator who is someone else, not to one with the user’s own address', async () => {
    const { db, alice, sam, notice } = await pendingNotices('server-copy');
    try {
      const ccOf = (uuid: string, operator: number): string => notice(uuid, alice, operator).cc;
      expect(ccOf('01900000-0000-7000-8000-00000000c001', alice)).toBe('');
      expect(ccOf('01900000-0000-7000-8000-00000000c002', sam)).toBe('"sam" <sam@example.org>');
      // sam's mail goes to alice's mailbox (written otherwise): she gets one mail, not two.
      db.prepare("UPDATE users SET email = ' Alice@Example.org ' WHERE id = ?").run(sam);
      expect(ccOf('01900000-0000-7000-8000-00000000c003', sam)).toBe('');
    } finally {
      db.close();
    }
  });
});

describe('a person whose account is turned off', () => {
  // They can no longer log in to answer: the notice asked them to, and went all the same.
  it('is sent no notice: recorded failed, saying why, and sent once the account is on', async () => {
    const { db, alice, sam, notice: noticeOf } = await pendingNotices('server-account-off');
    try {
      const setActive = db.prepare('UPDATE users SET is_active = ? WHERE id = ?');
      setActive.run(0, alice);
      const notice = noticeOf('01900000-0000-7000-8000-00000000e001', alice, sam);
      const usage = notice.usage_event_id!;
      expect(notice).toMatchObject({
        status: 'failed',
        to: '"Alice Martin" <alice@example.org>',
        last_error: ACCOUNT_OFF,
      });
      // Sent again while it is still off: stays failed, saying so.
      const refused = retryMail(db, notice.id, '2025-05-02T00:00:00.000Z');
      expect(refused).toMatchObject({
        outcome: 'account_off',
        message: `mail ${notice.id} not sent: the user's account is turned off; turn it on, then retry`,
      });
      expect(mailsOfUsage(db, usage)[0]).toMatchObject({ status: 'failed' });
      setActive.run(1, alice);
      expect(retryMail(db, notice.id, '2025-05-02T00:00:00.000Z').outcome).toBe('queued');
    } finally {
      db.close();
    }
  });
});

describe('an e-mail address of spaces only', () => {
  it('counts as no address everywhere the mail code asks: notice, copy, retry', async () => {
    const { db, alice, sam, notice } = await pendingNotices('server-blank-address');
    try {
      const setEmail = db.prepare('UPDATE users SET email = ? WHERE id = ?');
      const blank = ' \t  ';
      // The user's address is blank: recorded failed at once, written to nobody.
      setEmail.run(blank, alice);
      const toBlank = notice('01900000-0000-7000-8000-00000000d001', alice, sam);
      expect(toBlank).toMatchObject({ status: 'failed', to: '', last_error: NO_ADDRESS });
      expect(toBlank.cc).toBe('"sam" <sam@example.org>');
      // Sent again while still blank: stays failed, saying so.
      expect(retryMail(db, toBlank.id, '2025-05-02T00:00:00.000Z').outcome).toBe('no_address');
      // The operator's address is blank: no copy.
      setEmail.run('alice@example.org', alice);
      setEmail.run(blank, sam);
      const noCopy = notice('01900000-0000-7000-8000-00000000d002', alice, sam);
      expect(noCopy).toMatchObject({ status: 'queued', cc: '' });
      expect(noCopy.to).toBe('"Alice Martin" <alice@example.org>');
      // The retry of the first mail, alice's address now put right, still copies nobody blank.
      const retried = retryMail(db, toBlank.id, '2025-05-02T00:00:00.000Z');
      expect(retried.outcome).toBe('queued');
      expect(mailsOfUsage(db, toBlank.usage_event_id!)[0]).toMatchObject({
        status: 'queued',
        to: '"Alice Martin" <alice@example.org>',
        cc: '',
      });
    } finally {
      db.close();
    }
  });
});
