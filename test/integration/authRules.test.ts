/**
 * The server's credentials, each rule on its own, on a real SQLite file and a real fastify
 * instance (app.inject) whose clock the test sets: a JWT's signature and expiry, a logout
 * that stays in force while others log out, an API token found by its whole value and stored
 * only as its hash, an account turned off, the windows of the throttling of log-ins and of bad
 * credentials, a station turned off, accounts' passwords and e-mails, and the revoking of one
 * instrument grant.
 */
import { join } from 'node:path';
import type { FastifyInstance, HTTPMethods } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../../electron/core/db/open.js';
import { createAccount, createStationAccount } from '../../electron/core/server/accounts.js';
import { createApiToken } from '../../electron/core/server/auth.js';
import { createServerApp } from '../../electron/core/server/app.js';
import { sha256, signJwt } from '../../electron/core/server/secrets.js';
import { newUuid } from '../../electron/core/util/ids.js';
import { createLogger } from '../../electron/core/util/log.js';
import { INSTALL_HEADER, KEY_IN_USE, PREVIOUS_HEADER } from '../../electron/core/sync/identity.js';
import { tempDir } from './helpers.js';

const SECRET = 'auth-rules-test-secret-0123456789';
const LIFETIME_SECONDS = 3600;
const PASSWORD = 'user password 12';
let now = Date.parse('2026-06-01T08:00:00Z');
let db: Db;
let app: FastifyInstance;
let userId: number;
let userUuid: string;
/** Each call from an address of its own, so that no test meets another's throttling. */
let calls = 0;
const nextAddress = (): string => `10.7.${Math.floor(calls / 250)}.${(calls++ % 250) + 1}`;

beforeAll(async () => {
  db = openDatabase(join(tempDir('labstation-auth-rules-'), 'server.db'));
  db.prepare("INSERT INTO settings (key, value) VALUES ('mode', '\"server\"')").run();
  userId = (await createAccount(db, { email: 'uma@example.org', password: PASSWORD })).id;
  userUuid = db.prepare('SELECT uuid FROM users WHERE id = ?').pluck().get(userId) as string;
  app = await createServerApp({
    db,
    log: createLogger('silent'),
    jwtSecret: SECRET,
    timeZone: () => 'UTC',
    jwtLifetimeSeconds: LIFETIME_SECONDS,
    clock: () => now,
  });
  await app.ready();
});

afterAll(async () => {
  await app.close();
  db.close();
});

async function call(
  method: HTTPMethods,
  url: string,
  authorization?: string,
  remoteAddress = nextAddress(),
): Promise<{ status: number; body: unknown }> {
  const res = await app.inject({
    method,
    url,
    headers: authorization ? { authorization } : {},
    remoteAddress,
  });
  return { status: res.statusCode, body: res.body ? res.json<unknown>() : null };
}

async function login(
  password: string,
  remoteAddress = nextAddress(),
  username = 'uma@example.org',
) {
  const res = await app.inject({
    method: 'POST',
    url: '/auth/jwt/login',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ username, password }).toString(),
    remoteAddress,
  });
  return {
    status: res.statusCode,
    body: res.json<{ access_token?: string; detail?: unknown }>(),
  };
}

async function jwt(): Promise<string> {
  const res = await login(PASSWORD);
  expect(res.status).toBe(200);
  return `Bearer ${res.body.access_token!}`;
}

const INVALID = { status: 401, body: { detail: 'Invalid token.' } };

describe('a JWT', () => {
  it('lets its holder in until its expiry, and not from then on', async () => {
    const start = now;
    try {
      const token = await jwt();
      expect((await call('GET', '/api/files', token)).status).toBe(200);
      now = start + (LIFETIME_SECONDS - 1) * 1000;
      expect((await call('GET', '/api/files', token)).status).toBe(200);
      now = start + LIFETIME_SECONDS * 1000;
      expect(await call('GET', '/api/files', token)).toEqual(INVALID);
    } finally {
      now = start;
    }
  });

  it('is refused when not signed with the server’s secret, whatever it claims', async () => {
    const seconds = Math.floor(now / 1000);
    const claims = { sub: userUuid, role: 'user', cv: 0, iat: seconds, exp: seconds + 600 };
    // The same claims signed with the server's secret get in: only the signature differs.
    expect((await call('GET', '/api/files', `Bearer ${signJwt(SECRET, claims)}`)).status).toBe(200);
    const forged = signJwt('another-secret-of-the-same-length', claims);
    expect(await call('GET', '/api/files', `Bearer ${forged}`)).toEqual(INVALID);
    // Another token's signature, of the same length, on these claims.
    const other = signJwt(SECRET, { ...claims, exp: seconds + 601 }).split('.')[2];
    const [head, payload] = signJwt(SECRET, claims).split('.');
    expect(await call('GET', '/api/files', `Bearer ${head}.${payload}.${other}`)).toEqual(INVALID);
  });

  it('logged out of stays ended while others log out after it', async () => {
    const first = await jwt();
    const second = await jwt();
    expect((await call('POST', '/auth/jwt/logout', first)).status).toBe(204);
    expect(await call('GET', '/api/files', first)).toEqual(INVALID);
    // The second logout forgets the ended tokens past their expiry, and only those.
    expect((await call('POST', '/auth/jwt/logout', second)).status).toBe(204);
    expect(await call('GET', '/api/files', first)).toEqual(INVALID);
    expect(await call('GET', '/api/files', second)).toEqual(INVALID);
  });
});

describe('an API token', () => {
  it('is kept only as its SHA-256, and only the whole token lets its holder in', async () => {
    const { id, token } = createApiToken(db, userId, 'script');
    // 30 random bytes, URL-safe: not to be guessed.
    expect(token).toMatch(/^[A-Za-z0-9_-]{40}$/);
    expect((await call('GET', '/api/files', `Token ${token}`)).status).toBe(200);
    const row = db.prepare('SELECT * FROM api_tokens WHERE id = ?').get(id) as Record<
      string,
      unknown
    >;
    expect(row.token_hash).toBe(sha256(token));
    expect(JSON.stringify(row)).not.toContain(token);
    // Its first characters (the prefix the admin page shows) with the rest another's.
    const other = createApiToken(db, userId).token;
    const sameStart = `${token.slice(0, 6)}${other.slice(6)}`;
    expect(await call('GET', '/api/files', `Token ${sameStart}`)).toEqual(INVALID);
    const lastChanged = `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`;
    expect(await call('GET', '/api/files', `Token ${lastChanged}`)).toEqual(INVALID);
  });

  it('of an account turned off does not let it in', async () => {
    const { id } = await createAccount(db, { email: 'off@example.org', password: PASSWORD });
    db.prepare('UPDATE users SET is_active = 0 WHERE id = ?').run(id);
    // Turning an account off deletes its tokens (migration); one made for it since is refused.
    const { token } = createApiToken(db, id);
    expect(await call('GET', '/api/files', `Token ${token}`)).toEqual(INVALID);
    // Nor does it log in, with the right password.
    expect(await login(PASSWORD, nextAddress(), 'off@example.org')).toEqual({
      status: 400,
      body: { detail: 'LOGIN_BAD_CREDENTIALS' },
    });
  });
});

describe('accounts', () => {
  it('refuses a password shorter than ten characters', async () => {
    await expect(
      createAccount(db, { email: 'nine@example.org', password: '123456789' }),
    ).rejects.toThrow('password: must be at least 10 characters');
    await createAccount(db, { email: 'ten@example.org', password: '1234567890' });
  });

  it('refuses a second account with an e-mail address taken in another letter case', async () => {
    // Log-in finds an account by its e-mail in any letter case: two would be one log-in.
    await expect(
      createAccount(db, { email: 'UMA@Example.org', password: PASSWORD, username: 'uma2' }),
    ).rejects.toThrow('email: UMA@Example.org is taken');
    expect((await login(PASSWORD, nextAddress(), 'Uma@EXAMPLE.org')).status).toBe(200);
  });
});

describe('throttling', () => {
  it('locks an address out of logging in for 15 minutes after ten failures', async () => {
    const start = now;
    const address = '10.8.0.1';
    try {
      for (let i = 0; i < 10; i++) {
        expect((await login(`wrong ${i}`, address)).body).toEqual({
          detail: 'LOGIN_BAD_CREDENTIALS',
        });
      }
      expect((await login(PASSWORD, address)).status).toBe(429);
      now = start + 15 * 60_000 - 1;
      expect((await login(PASSWORD, address)).status).toBe(429);
      now = start + 15 * 60_000;
      expect((await login(PASSWORD, address)).status).toBe(200);
    } finally {
      now = start;
    }
  });

  it('holds log-ins sent at once to the same ten failures; right ones all get in', async () => {
    // Each try holds a place while its password is hashed, and one without a place waits for
    // one: a burst is not all checked before the first of it has failed.
    const burst = await Promise.all(
      Array.from({ length: 30 }, (_, i) => login(`wrong ${i}`, '10.8.0.3')),
    );
    const statuses = burst.map((res) => res.status);
    expect(statuses.filter((status) => status === 400)).toHaveLength(10);
    expect(statuses.filter((status) => status === 429)).toHaveLength(20);
    expect((await login(PASSWORD, '10.8.0.3')).status).toBe(429);
    // People behind one address (a NAT) logging in at once: more than ten, none refused.
    const together = await Promise.all(
      Array.from({ length: 14 }, () => login(PASSWORD, '10.8.0.4')),
    );
    expect(together.map((res) => res.status)).toEqual(Array<number>(14).fill(200));
    // A right password among wrong ones gets in and is not counted; the wrong ones stop at ten.
    const mixed = await Promise.all([
      login(PASSWORD, '10.8.0.5'),
      ...Array.from({ length: 12 }, (_, i) => login(`wrong ${i}`, '10.8.0.5')),
    ]);
    expect(mixed[0]?.status).toBe(200);
    expect(mixed.filter((res) => res.status === 400)).toHaveLength(10);
    expect(mixed.filter((res) => res.status === 429)).toHaveLength(2);
    expect((await login(PASSWORD, '10.8.0.5')).status).toBe(429);
  });

  it('refuses an address for a minute after twenty bad API credentials', async () => {
    const start = now;
    const address = '10.8.0.2';
    try {
      for (let i = 0; i < 20; i++) {
        expect(await call('GET', '/api/files', `Token wrong-${i}`, address)).toEqual(INVALID);
      }
      expect((await call('GET', '/api/files', 'Token wrong', address)).status).toBe(429);
      now = start + 60_000 - 1;
      expect((await call('GET', '/api/files', 'Bearer a.b.c', address)).status).toBe(429);
      now = start + 60_000;
      expect(await call('GET', '/api/files', 'Token wrong', address)).toEqual(INVALID);
    } finally {
      now = start;
    }
  });
});

describe('a station key', () => {
  it('of a station turned off lets it in nowhere, also where nothing reads the station again', async () => {
    const { id, key } = createStationAccount(db, { name: 'off-pc', tool: null });
    // 32 random bytes, URL-safe: not to be guessed.
    expect(key).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const history = `/sync/harvest/history?instrument=${newUuid()}`;
    // (An instrument the server does not know has no history: an empty page.)
    expect((await call('GET', history, `Station ${key}`)).status).toBe(200);
    db.prepare('UPDATE stations SET enabled = 0 WHERE id = ?').run(id);
    const off = { status: 401, body: { detail: 'This station is disabled.' } };
    expect(await call('GET', history, `Station ${key}`)).toEqual(off);
    expect(await call('GET', '/sync/changes?cursor=0', `Station ${key}`)).toEqual(off);
  });

  it('held by one Labstation is taken at once only by one naming that one as its id before', async () => {
    const { key } = createStationAccount(db, { name: 'held-pc', tool: null });
    const as = async (install: string, previous?: string) => {
      const res = await app.inject({
        method: 'GET',
        url: '/sync/changes?cursor=0',
        headers: {
          authorization: `Station ${key}`,
          [INSTALL_HEADER]: install,
          ...(previous ? { [PREVIOUS_HEADER]: previous } : {}),
        },
        remoteAddress: nextAddress(),
      });
      return { status: res.statusCode, code: res.json<{ code?: string }>().code };
    };
    const holder = newUuid();
    expect((await as(holder)).status).toBe(200);
    // Another data dir, naming a previous id that is not the holder's: refused.
    expect(await as(newUuid(), newUuid())).toEqual({ status: 409, code: KEY_IN_USE });
    // The holder's data dir on a new machine (restored there): takes the key.
    const restored = newUuid();
    expect((await as(restored, holder)).status).toBe(200);
    expect(await as(holder)).toEqual({ status: 409, code: KEY_IN_USE });
  });
});

describe('instrument grants', () => {
  it('revoking a user’s grant of one instrument leaves their grants of the others', async () => {
    const { id: adminId } = await createAccount(db, {
      email: 'ada@example.org',
      password: PASSWORD,
      role: 'admin',
    });
    const admin = `Token ${createApiToken(db, adminId).token}`;
    const at = new Date(now).toISOString();
    db.prepare(
      `INSERT INTO tools (uuid, name, category, operational, visible, shutdown, created_at,
         updated_at) VALUES (?, 'Grant tool', '', 1, 1, 0, ?, ?)`,
    ).run(newUuid(), at, at);
    const toolId = db.prepare("SELECT id FROM tools WHERE name = 'Grant tool'").pluck().get();
    const instruments = ['grant-a', 'grant-b'].map((name) => {
      db.prepare(
        `INSERT INTO instruments (uuid, name, tool_id, destination_template, created_at,
           updated_at) VALUES (?, ?, ?, '{filename}', ?, ?)`,
      ).run(newUuid(), name, toolId, at, at);
      return db.prepare('SELECT id FROM instruments WHERE name = ?').pluck().get(name) as number;
    });
    for (const instrument of instruments) {
      const res = await app.inject({
        method: 'POST',
        url: `/api/instruments/${instrument}/access`,
        headers: { authorization: admin },
        payload: { user_id: userId },
      });
      expect(res.statusCode).toBe(201);
    }
    const [first, second] = instruments as [number, number];
    expect((await call('DELETE', `/api/instruments/${first}/access/${userId}`, admin)).status).toBe(
      204,
    );
    expect((await call('GET', `/api/instruments/${first}/access`, admin)).body).toEqual([]);
    expect((await call('GET', `/api/instruments/${second}/access`, admin)).body).toEqual([
      { user_id: userId, granted_at: at },
    ]);
  });
});
