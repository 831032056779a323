import type { Db } from '../db/open.js';
import { EMAIL_PATTERN, EMAIL_RULE, lineProblem, passwordProblem } from '../../../shared/text.js';
import { AppError, fieldError } from '../util/errors.js';
import { newUuid, nowIso } from '../util/ids.js';
import { hashSecret } from '../util/pin.js';
import type { Role } from './auth.js';
import { randomSecret, sha256 } from './secrets.js';

export const ROLES: readonly Role[] = ['admin', 'staff', 'user'];

/**
 * People log on at stations with a username or a badge, so each must name one person: a badge
 * may not be another's badge or username, nor a username another's badge.
 */
export type Clash = { path: string[]; message: string };

/** The username and badge must each be free, of names and badges both. */
export function logonNameClashes(
  db: Db,
  id: number | null,
  username: string,
  badge: string | null,
): Clash[] {
  const other = (sql: string, value: string): string | undefined =>
    db
      .prepare(sql)
      .pluck()
      .get(value, id ?? -1) as string | undefined;
  const problems: Clash[] = [];
  const clash = (field: string, message: string): void => {
    problems.push({ path: [field], message });
  };
  const byName = other(
    'SELECT username FROM users WHERE username = ? COLLATE NOCASE AND id <> ?',
    username,
  );
  // Log-on looks usernames up without regard to case, so a badge may not equal one in any case.
  const nameIsBadge = other(
    'SELECT username FROM users WHERE badge_number = ? COLLATE NOCASE AND id <> ?',
    username,
  );
  if (byName) clash('username', `${username} is taken`);
  else if (nameIsBadge) clash('username', `${username} is the badge number of ${nameIsBadge}`);
  if (badge !== null) {
    const badgeOwner = other(
      'SELECT username FROM users WHERE badge_number = ? AND id <> ?',
      badge,
    );
    const badgeIsName = other(
      'SELECT username FROM users WHERE username = ? COLLATE NOCASE AND id <> ?',
      badge,
    );
    if (badgeOwner) clash('badge_number', `${badge} belongs to ${badgeOwner}`);
    else if (badgeIsName) clash('badge_number', `${badge} is the username of ${badgeIsName}`);
  }
  return problems;
}

export function checkPassword(password: string, field = 'password'): void {
  const problem = passwordProblem(password);
  if (problem !== null) throw new AppError('validation_failed', `${field}: ${problem}`);
}

export interface NewAccount {
  email: string;
  password: string;
  role?: Role | undefined;
  username?: string | undefined;
}

/** Creates a person who can log in to the server (argon2id password hash). */
export async function createAccount(
  db: Db,
  input: NewAccount,
): Promise<{ id: number; username: string; email: string }> {
  const email = input.email.trim();
  if (!EMAIL_PATTERN.test(email)) {
    throw new AppError(
      'validation_failed',
      `email: ${JSON.stringify(email)} is not an e-mail address (${EMAIL_RULE.replace('must be ', '')})`,
    );
  }
  checkPassword(input.password);
  const role = input.role ?? 'user';
  if (!ROLES.includes(role))
    throw new AppError('validation_failed', `role: must be one of ${ROLES.join(', ')}`);
  const username = (input.username ?? email.split('@')[0] ?? email).trim();
  if (!username) throw new AppError('validation_failed', 'username: must not be empty');
  for (const [field, value] of [
    ['email', email],
    ['username', username],
  ] as const) {
    const problem = lineProblem(value);
    if (problem !== null) throw new AppError('validation_failed', `${field}: ${problem}`);
  }
  // As the admin page checks a person: log-on at a station looks a login up as a username
  // first, in any case, then as a badge.
  const [clash] = logonNameClashes(db, null, username, null);
  if (clash) throw new AppError('conflict', `${clash.path[0]}: ${clash.message}`);
  const emailTaken = db
    .prepare("SELECT 1 FROM users WHERE email <> '' AND email = ? COLLATE NOCASE")
    .get(email);
  if (emailTaken) throw new AppError('conflict', `email: ${email} is taken`);
  const passwordHash = await hashSecret(input.password);
  const now = nowIso();
  const id = Number(
    db
      .prepare(
        `INSERT INTO users (uuid, username, email, password_hash, role, is_staff, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(newUuid(), username, email, passwordHash, role, role === 'user' ? 0 : 1, now, now)
      .lastInsertRowid,
  );
  return { id, username, email };
}

export function findAccountByEmail(db: Db, email: string): { id: number; email: string } {
  const row = db
    .prepare("SELECT id, email FROM users WHERE email = ? COLLATE NOCASE AND email <> ''")
    .get(email.trim()) as { id: number; email: string } | undefined;
  if (!row) throw new AppError('not_found', `user: no account with e-mail ${email}`);
  return row;
}

/**
 * Registers a station (a service account, usually bound to the tool it runs); the key is
 * returned once and only its hash is kept. `tool` is a tool's id or name, or null.
 */
export function createStationAccount(
  db: Db,
  input: { name: string; tool: number | string | null; description?: string },
): { id: number; key: string } {
  const name = input.name.trim();
  if (!name) throw new AppError('validation_failed', 'name: must not be empty');
  let toolId: number | null = null;
  if (input.tool !== null) {
    const toolRow = db
      .prepare(`SELECT id FROM tools WHERE ${typeof input.tool === 'number' ? 'id' : 'name'} = ?`)
      .get(input.tool) as { id: number } | undefined;
    if (!toolRow) {
      const what =
        typeof input.tool === 'number'
          ? `with id ${input.tool}`
          : `named ${JSON.stringify(input.tool)}`;
      throw fieldError('tool', `no tool ${what}`, 'not_found');
    }
    toolId = toolRow.id;
  }
  if (db.prepare('SELECT 1 FROM stations WHERE name = ?').get(name)) {
    throw fieldError('name', `a station named ${JSON.stringify(name)} exists`, 'conflict');
  }
  const key = randomSecret(32);
  const id = Number(
    db
      .prepare(
        `INSERT INTO stations (uuid, name, description, tool_id, key_hash, created_at)
         VALUES (?, ?, ?, ?, ?, ?)`,
      )
      .run(newUuid(), name, input.description ?? '', toolId, sha256(key), nowIso()).lastInsertRowid,
  );
  return { id, key };
}
