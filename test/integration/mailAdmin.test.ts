/**
 * An admin sends failed mail again, with real processes: a `labstation serve` pointed at a
 * real SMTP server on loopback (test/fixtures/smtp-sink.js, which refuses every "unknown@"
 * mailbox for good), `labstation mail list|retry` on its data dir while it runs, and the same
 * through the admin calls of its web page (POST /rpc/admin.mail.*).
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { facilityBundle } from '../fixtures/facility.js';
import {
  createStationKey,
  loginJwt,
  runCli,
  serverRequest,
  startServer,
  tempDir,
  waitFor,
  writeJson,
  type ServerProcess,
} from './helpers.js';
import { TestSmtp } from './smtpSink.js';

const ADMIN = { email: 'admin@example.org', password: 'admin password 1' };
const SAM = { email: 'sam@example.org', password: 'staff password 1' };

const smtp = new TestSmtp();
let dir: string;
let server: ServerProcess;
let db: Database.Database;
let key: string;

interface Mail {
  id: number;
  status: string;
  kind: string;
  user: string;
  to: string;
  attempts: number;
  last_error: string | null;
  usage_event: string;
}

beforeAll(async () => {
  await smtp.start(0);
  dir = join(tempDir(), 'server');
  const bundle = facilityBundle();
  delete bundle.station;
  const users = bundle.users as Record<string, unknown>[];
  // alice's mailbox is one the SMTP server refuses for good; bob has no address at all.
  users[0] = { ...users[0], email: 'unknown@example.org' };
  users[2] = { ...users[2], email: SAM.email, password: SAM.password, role: 'staff' };
  const imported = await runCli(['import', '--data', dir, writeJson(tempDir(), 'b.json', bundle)]);
  expect(imported.code, imported.stderr).toBe(0);
  key = await createStationKey(dir, 's1', 'SEM');
  server = await startServer(dir, {
    LABSTATION_ADMIN_EMAIL: ADMIN.email,
    LABSTATION_ADMIN_PASSWORD: ADMIN.password,
    LABSTATION_SMTP_URL: `smtp://labstation:s3cret@127.0.0.1:${smtp.port}`,
    LABSTATION_MAIL_POLL_MS: '200',
    LABSTATION_MAIL_BACKOFF_BASE_MS: '100',
    LABSTATION_MAIL_BACKOFF_CAP_MS: '200',
    LABSTATION_MAIL_MAX_ATTEMPTS: '2',
  });
  db = new Database(join(dir, 'labstation.db'));
}, 60_000);

afterAll(async () => {
  db?.close();
  await server?.stop();
  await smtp.stop();
});

/** A station pushes a force-ended usage of `user` with its post-usage answers pending. */
async function pendingUsage(user: string, uuid: string, day: number): Promise<void> {
  const uuidOf = (sql: string): string => db.prepare(sql).pluck().get() as string;
  const sam = uuidOf("SELECT uuid FROM users WHERE username = 'sam'");
  const payload = {
    uuid,
    user_uuid: uuidOf(`SELECT uuid FROM users WHERE username = '${user}'`),
    operator_uuid: uuidOf(`SELECT uuid FROM users WHERE username = '${user}'`),
    project_uuid: uuidOf("SELECT uuid FROM projects WHERE name = 'Cathodes'"),
    tool_uuid: uuidOf("SELECT uuid FROM tools WHERE name = 'SEM'"),
    force_ended_by_uuid: sam,
    start: `2025-05-0${day}T08:00:00.000Z`,
    end: `2025-05-0${day}T09:00:00.000Z`,
    validated: 0,
    remote_work: 0,
    pre_run_data: '{}',
    run_data: '',
    post_usage_pending: 1,
    reminder_due: 1,
    version: 2,
  };
  const res = await fetch(`${server.url}sync/push`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Station ${key}` },
    body: JSON.stringify({ records: [{ id: day, kind: 'usage_event', uuid, payload }] }),
  });
  expect(await res.json()).toEqual({ acked: [day], stale: [], error: null });
}

async function mailList(...args: string[]): Promise<Mail[]> {
  const listed = await runCli(['mail', 'list', '--data', dir, '--json', ...args]);
  expect(listed.code, listed.stderr).toBe(0);
  return JSON.parse(listed.stdout) as Mail[];
}

const ALICE_USAGE = '01900000-0000-7000-8000-00000000a001';
const BOB_USAGE = '01900000-0000-7000-8000-00000000b001';
const ALICE_LATER = '01900000-0000-7000-8000-00000000a002';

describe('labstation mail', () => {
  it('lists the failed mails with why, and sends one again once its address is put right', async () => {
    await pendingUsage('alice', ALICE_USAGE, 1);
    await pendingUsage('bob', BOB_USAGE, 2);
    const failed = await waitFor('both notices failed for good', async () => {
      const mails = await mailList('--status', 'failed');
      return mails.length === 2 ? mails : undefined;
    });
    expect(failed.map((m) => [m.user, m.usage_event, m.kind])).toEqual([
      ['bob', BOB_USAGE, 'pending_answers'],
      ['alice', ALICE_USAGE, 'pending_answers'],
    ]);
    const [bob, alice] = failed;
    expect(bob).toMatchObject({
      to: '',
      attempts: 0,
      last_error: 'the user has no e-mail address',
    });
    expect(alice).toMatchObject({ to: '"Alice Martin" <unknown@example.org>', attempts: 2 });
    expect(alice.last_error).toMatch(/550/);
    // The text form: one line per mail, the reason last.
    const text = await runCli(['mail', 'list', '--data', dir, '--status', 'failed']);
    expect(text.stdout.trim().split('\n')).toEqual([
      `${bob.id}\tfailed\tpending_answers\tbob\t-\t0\t${(bob as unknown as { created_at: string }).created_at}\tthe user has no e-mail address`,
      expect.stringMatching(
        new RegExp(
          `^${alice.id}\tfailed\tpending_answers\talice\t"Alice Martin" <unknown@example.org>\t2\t.*550`,
        ),
      ),
    ]);
    expect(await mailList('--status', 'sent')).toEqual([]);

    // The admin puts alice's address right and sends her notice again: it goes to the new one.
    db.prepare("UPDATE users SET email = 'alice@example.org' WHERE username = 'alice'").run();
    // Named twice, it is queued again once (the second was refused, exit 1: "is queued").
    const retried = await runCli([
      'mail',
      'retry',
      '--data',
      dir,
      String(alice.id),
      `0${alice.id}`,
    ]);
    expect(retried).toMatchObject({ code: 0, stderr: '' });
    expect(retried.stdout).toBe(
      `mail ${alice.id} queued again, to "Alice Martin" <alice@example.org>\n`,
    );
    const [sent] = await waitFor('the notice sent again', () =>
      smtp.about(ALICE_USAGE, 'pending_answers').length
        ? smtp.about(ALICE_USAGE, 'pending_answers')
        : undefined,
    );
    expect(sent.rcpt).toEqual(['alice@example.org']);
    await waitFor('the mail marked sent', async () =>
      (await mailList('--status', 'sent')).some((m) => m.id === alice.id) ? true : undefined,
    );

    // Not failed, not there, no address: refused, one line each, exit 1.
    const refused = await runCli([
      'mail',
      'retry',
      '--data',
      dir,
      String(alice.id),
      '999',
      String(bob.id),
    ]);
    expect(refused.code).toBe(1);
    expect(refused.stderr.split('\n')).toEqual([
      `mail ${alice.id} is sent, not failed`,
      'there is no mail 999',
      `mail ${bob.id} not sent: the user has no e-mail address; give them one, then retry`,
      '',
    ]);
    const all = await runCli(['mail', 'retry', '--data', dir, '--all-failed']);
    expect(all.code).toBe(1);
    expect(all.stderr).toContain(`mail ${bob.id} not sent: the user has no e-mail address`);
    expect((await mailList('--status', 'failed')).map((m) => m.id)).toEqual([bob.id]);
  }, 60_000);

  it('refuses wrong usage with exit 2, and a folder without data with exit 1', async () => {
    for (const [args, says] of [
      [['mail', 'retry', '--data', dir], /needs mail ids \(from mail list\) or --all-failed$/m],
      [['mail', 'retry', '--data', dir, '1', '--all-failed'], /or --all-failed, not both$/m],
      [['mail', 'retry', '--data', dir, 'x'], /./],
      [['mail', 'list', '--data', dir, '--status', 'lost'], /./],
      [['mail', 'send', '--data', dir], /./],
    ] as const) {
      const res = await runCli([...args]);
      expect(res.code, args.join(' ')).toBe(2);
      expect(res.stderr, args.join(' ')).toMatch(says);
    }
    const empty = await runCli(['mail', 'list', '--data', join(tempDir(), 'none')]);
    expect(empty.code).toBe(1);
    expect(empty.stderr).toMatch(/holds no Labstation data/);
  }, 30_000);
});

describe('the admin calls of the web page', () => {
  it('list and send failed mail again for admins only', async () => {
    const adminJwt = await loginJwt(server.url, ADMIN);
    const staffJwt = await loginJwt(server.url, SAM);
    for (const [name, args] of [
      ['admin.mail.list', { status: 'failed' }],
      ['admin.mail.retry', { id: 1 }],
    ] as const) {
      const staff = await serverRequest(server.url, staffJwt, 'POST', `/rpc/${name}`, args);
      expect(staff.status, name).toBe(403);
      const res = await fetch(`${server.url}rpc/${name}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(args),
      });
      expect(res.status, name).toBe(401);
    }
    // Another notice of alice's fails for good: her address is refused again.
    db.prepare("UPDATE users SET email = 'unknown@example.org' WHERE username = 'alice'").run();
    await pendingUsage('alice', ALICE_LATER, 3);
    const failed = await waitFor('the notice failed', async () => {
      const res = await serverRequest(server.url, adminJwt, 'POST', '/rpc/admin.mail.list', {
        status: 'failed',
      });
      expect(res.status).toBe(200);
      const mails = res.body.mails as Mail[];
      return mails.find((m) => m.usage_event === ALICE_LATER);
    });
    expect(failed.last_error).toMatch(/550/);
    db.prepare("UPDATE users SET email = 'alice@example.org' WHERE username = 'alice'").run();
    const retried = await serverRequest(server.url, adminJwt, 'POST', '/rpc/admin.mail.retry', {
      id: failed.id,
    });
    expect(retried.status).toBe(200);
    expect(retried.body.mail).toMatchObject({
      id: failed.id,
      status: 'queued',
      attempts: 0,
      to: '"Alice Martin" <alice@example.org>',
    });
    await waitFor('the notice sent again', () =>
      smtp.about(ALICE_LATER, 'pending_answers').length ? true : undefined,
    );
    // A mail that is not failed is refused with the reason.
    const again = await serverRequest(server.url, adminJwt, 'POST', '/rpc/admin.mail.retry', {
      id: failed.id,
    });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ code: 'conflict' });
    const missing = await serverRequest(server.url, adminJwt, 'POST', '/rpc/admin.mail.retry', {
      id: 999,
    });
    expect(missing).toMatchObject({ status: 404, body: { code: 'not_found' } });
  }, 60_000);
});
