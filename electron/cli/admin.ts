/**
 * A server's administration from the command line: its people, API tokens and stations
 * (`admin`), and its mail outbox (`mail`).
 */
import { refuseEmptyDatabase, waitForFirstFill } from './firstFill.js';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Db, OpenOptions } from '../core/db/open.js';
import { upgradeOnlyIfIdle } from '../core/harvest/lock.js';
import type { Role } from '../core/server/auth.js';
import { AppError } from '../core/util/errors.js';
import { need, oneField, UsageError } from './args.js';

export async function admin(argv: string[]): Promise<number> {
  const [what, verb, ...rest] = argv;
  if (verb !== 'create' || !['user', 'token', 'station'].includes(what ?? '')) {
    throw new UsageError('admin takes: user create, token create, station create');
  }
  const { values } = parseArgs({
    args: rest,
    options: {
      data: { type: 'string' },
      email: { type: 'string' },
      password: { type: 'string' },
      role: { type: 'string' },
      username: { type: 'string' },
      user: { type: 'string' },
      name: { type: 'string' },
      tool: { type: 'string' },
    },
  });
  const { openServerData } = await import('../core/server/dataDir.js');
  const { createAccount, createStationAccount, findAccountByEmail, ROLES } =
    await import('../core/server/accounts.js');
  const db = openServerDataDir(need(values.data, '--data'), openServerData);
  try {
    if (what === 'user') {
      const role = values.role ?? 'user';
      if (!ROLES.includes(role as Role))
        throw new UsageError(`--role must be one of ${ROLES.join(', ')}`);
      const created = await createAccount(db, {
        email: need(values.email, '--email'),
        password: need(values.password, '--password'),
        role: role as Role,
        username: values.username,
      });
      process.stdout.write(`created ${role} ${created.username} <${created.email}>\n`);
    } else if (what === 'token') {
      const { createToken } = await import('../core/server/admin/credentials.js');
      const account = findAccountByEmail(db, need(values.user, '--user'));
      // As the admin page makes one: not for someone turned off (it would work again once
      // they are turned back on, which brings no other token back).
      const { token } = createToken(db, {
        user: account.id,
        name: 'created with labstation admin token create',
      });
      process.stdout.write(
        `API token for ${account.email} (shown once; use as "Authorization: Token ..."):\n${token}\n`,
      );
    } else {
      const name = need(values.name, '--name');
      const { key } = createStationAccount(db, { name, tool: need(values.tool, '--tool') });
      process.stdout.write(`station ${name.trim()} registered (the key is shown once):\n${key}\n`);
    }
    return 0;
  } finally {
    db.close();
  }
}

/**
 * mail: a server's mail outbox for its admin (the same as the admin page's E-mail section).
 * `retry` queues failed mails again, their recipients read again from the people's records; a
 * running server sends them at its next poll (seconds). Exit 1 when a mail asked for was not
 * queued again (none such, not failed, its person still without an address), one line each.
 */
export async function mail(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub !== 'list' && sub !== 'retry') throw new UsageError('mail takes list or retry');
  const { values, positionals } = parseArgs({
    args: rest,
    options: {
      data: { type: 'string' },
      status: { type: 'string' },
      json: { type: 'boolean' },
      'all-failed': { type: 'boolean' },
    },
    allowPositionals: sub === 'retry',
  });
  const { MAIL_STATUSES } = await import('../../shared/adminApi.js');
  const status = values.status as (typeof MAIL_STATUSES)[number] | undefined;
  if (sub === 'list') {
    if (status !== undefined && !MAIL_STATUSES.includes(status)) {
      throw new UsageError(`--status must be one of ${MAIL_STATUSES.join(', ')}`);
    }
  } else {
    if (values.status !== undefined || values.json) {
      throw new UsageError('mail retry takes --data DIR and mail ids, or --all-failed');
    }
    if (positionals.length > 0 && values['all-failed']) {
      throw new UsageError('mail retry takes mail ids (from mail list) or --all-failed, not both');
    }
    if (positionals.length === 0 && !values['all-failed']) {
      throw new UsageError('mail retry needs mail ids (from mail list) or --all-failed');
    }
  }
  const given = positionals.map((text) => {
    if (!/^\d{1,15}$/.test(text) || Number(text) === 0) {
      throw new UsageError(`${JSON.stringify(text)} is not a mail id (a whole number)`);
    }
    return Number(text);
  });
  // A mail named twice (`mail retry 1 1`, `mail retry 1 01`) is queued again once.
  const ids = [...new Set(given)];
  const { openServerData } = await import('../core/server/dataDir.js');
  const { listMails, retryFailedMails, retryMail } = await import('../core/mail/admin.js');
  const { nowIso } = await import('../core/util/ids.js');
  const db = openServerDataDir(need(values.data, '--data'), openServerData);
  try {
    if (sub === 'list') {
      const mails = listMails(db, { status });
      if (values.json) process.stdout.write(`${JSON.stringify(mails, null, 2)}\n`);
      else {
        for (const m of mails) {
          process.stdout.write(
            `${m.id}\t${m.status}\t${m.kind}\t${m.user ?? '-'}\t${oneField(m.to || '-')}\t` +
              `${m.attempts}\t${m.created_at}${m.last_error ? `\t${oneField(m.last_error)}` : ''}\n`,
          );
        }
      }
      return 0;
    }
    const done = values['all-failed']
      ? retryFailedMails(db, nowIso())
      : ids.map((id) => retryMail(db, id, nowIso()));
    if (done.length === 0) process.stdout.write('no failed mail\n');
    let refused = 0;
    for (const r of done) {
      const ok = r.outcome === 'queued' || r.outcome === 'cancelled';
      if (!ok) refused += 1;
      (ok ? process.stdout : process.stderr).write(`${r.message}\n`);
    }
    return refused > 0 ? 1 : 0;
  } finally {
    db.close();
  }
}

/** An existing server data dir's database: a command that reads it never makes one. */
function openServerDataDir(dataDir: string, open: (dir: string, options: OpenOptions) => Db): Db {
  waitForFirstFill(dataDir);
  if (!existsSync(join(dataDir, 'labstation.db'))) {
    throw new AppError(
      'not_found',
      `${dataDir} holds no Labstation data (no labstation.db); \`labstation serve --data ${dataDir}\` ` +
        'or `labstation import` makes a server data dir',
    );
  }
  refuseEmptyDatabase(dataDir);
  return open(dataDir, { beforeUpgrade: upgradeOnlyIfIdle(dataDir) });
}
