/**
 * Server mode as its users meet it: `labstation serve`, the admin commands, login, both
 * authentication schemes, and the role matrix on the NEMO-compatible API.
 */
import { existsSync, readdirSync } from 'node:fs';
import { request } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { signJwt } from '../../electron/core/server/secrets.js';
import { facilityBundle } from '../fixtures/facility.js';
import {
  createStationKey,
  runCli,
  startServer,
  tempDir,
  writeJson,
  type ServerProcess,
} from './helpers.js';

const ADMIN = { email: 'admin@example.org', password: 'correct horse battery' };
let dataDir: string;
let server: ServerProcess;

function lastLine(text: string): string {
  return text.trim().split('\n').pop()!;
}

async function login(email: string, password: string): Promise<Response> {
  return fetch(`${server.url}auth/jwt/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ username: email, password }).toString(),
  });
}

/** An admin (root), a staff member with a password (kim) and one without (lee), into `dir`. */
async function importThreePeople(dir: string): Promise<void> {
  const bundle = {
    users: [
      { username: 'root', email: 'root@example.org', password: 'root password 1', role: 'admin' },
      { username: 'kim', email: 'kim@example.org', password: 'kim password 12', is_staff: true },
      { username: 'lee', is_staff: true },
    ],
  };
  expect(
    (await runCli(['import', '--data', dir, writeJson(tempDir(), 'p.json', bundle)])).code,
  ).toBe(0);
}

async function get(
  path: string,
  authorization?: string,
): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${server.url}${path}`, {
    headers: authorization ? { authorization } : {},
  });
  return { status: res.status, body: await res.json() };
}

beforeAll(async () => {
  dataDir = join(tempDir(), 'server');
  const server_bundle = { ...facilityBundle() } as Record<string, unknown>;
  delete server_bundle.station;
  const users = server_bundle.users as Record<string, unknown>[];
  users[2] = { ...users[2], email: 'sam@example.org', password: 'staff password 1', role: 'staff' };
  users[0] = { ...users[0], email: 'alice@example.org', password: 'alice password 1' };
  const imported = await runCli([
    'import',
    '--data',
    dataDir,
    writeJson(tempDir(), 'b.json', server_bundle),
  ]);
  expect(imported.stderr).toBe('');
  expect(imported.code).toBe(0);
  server = await startServer(dataDir, {
    LABSTATION_ADMIN_EMAIL: ADMIN.email,
    LABSTATION_ADMIN_PASSWORD: ADMIN.password,
  });
});

afterAll(async () => {
  await server?.stop();
});

describe('labstation serve', () => {
  it('answers /health, and makes the first admin from the environment', async () => {
    expect(await get('health')).toEqual({ status: 200, body: { status: 'ok', role: 'server' } });
    const res = await login(ADMIN.email, ADMIN.password);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { access_token: string; token_type: string };
    expect(body.token_type).toBe('bearer');
    expect(body.access_token.split('.')).toHaveLength(3);
  });

  it('answers a path with an empty segment 404 like any unknown path, also where the web page is served', async () => {
    const page = await fetch(server.url);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<div id="root">');
    for (const path of ['//health', '/api//usage_events/', '/foo//bar', '/assets//x.js']) {
      expect(await get(path.slice(1)), path).toEqual({
        status: 404,
        body: { detail: 'Not found.' },
      });
    }
  });

  it('login: bad credentials 400 LOGIN_BAD_CREDENTIALS, missing fields 422 naming them', async () => {
    const bad = await login(ADMIN.email, 'wrong password');
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ detail: 'LOGIN_BAD_CREDENTIALS' });
    const unknown = await login('nobody@example.org', 'whatever 123');
    expect(await unknown.json()).toEqual({ detail: 'LOGIN_BAD_CREDENTIALS' });
    const missing = await fetch(`${server.url}auth/jwt/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'username=x',
    });
    expect(missing.status).toBe(422);
    expect(await missing.json()).toEqual({
      detail: [{ loc: ['body', 'password'], msg: 'Field required', type: 'missing' }],
    });
    // Open to anyone: it reads a log-in form's worth (64 KiB), not the 8 MiB of other routes.
    const large = await fetch(`${server.url}auth/jwt/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: ADMIN.email, password: 'x'.repeat(100 * 1024) }),
    });
    expect(large.status).toBe(413);
  });

  it('reads a JSON body with no Content-Type, or as application/*+json, as FastAPI does; a log-in form sent as multipart', async () => {
    const jwt = (
      (await (await login(ADMIN.email, ADMIN.password)).json()) as { access_token: string }
    ).access_token;
    // As Python's http.client or `requests.post(url, data=json.dumps(...))` send it: no header
    // (fetch would add text/plain).
    const send = (
      method: string,
      path: string,
      body: string,
      contentType?: string,
    ): Promise<{ status: number; body: Record<string, unknown> }> =>
      new Promise((resolve, reject) => {
        const headers: Record<string, string> = {
          authorization: `Bearer ${jwt}`,
          'content-length': String(Buffer.byteLength(body)),
        };
        if (contentType !== undefined) headers['content-type'] = contentType;
        const req = request(new URL(path, server.url), { method, headers }, (res) => {
          let text = '';
          res.on('data', (d: Buffer) => (text += d.toString()));
          res.on('end', () =>
            resolve({
              status: res.statusCode!,
              body: (text ? JSON.parse(text) : {}) as Record<string, unknown>,
            }),
          );
        });
        req.on('error', reject);
        req.end(body);
      });
    const made = await send(
      'POST',
      '/api/storage-locations',
      JSON.stringify({ name: 'no header', type: 'local', base_path: '/mnt/no-header' }),
    );
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect(made.body).toMatchObject({ name: 'no header', base_path: '/mnt/no-header' });
    const patched = await send(
      'PATCH',
      `/api/storage-locations/${String(made.body.id)}`,
      JSON.stringify({ base_path: '/mnt/merged' }),
      'application/merge-patch+json; charset=utf-8',
    );
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body).toMatchObject({ name: 'no header', base_path: '/mnt/merged' });
    // Not JSON without a header: FastAPI's 422 json_invalid. Another type: its text, which is
    // not the object the route takes (422 model_type), not Fastify's 415.
    const broken = await send('POST', '/api/storage-locations', '{"name": ');
    expect(broken.status).toBe(422);
    expect((broken.body.detail as object[])[0]).toMatchObject({
      loc: ['body'],
      type: 'json_invalid',
    });
    const xml = await send('POST', '/api/storage-locations', '<name>x</name>', 'application/xml');
    expect(xml.status).toBe(422);
    expect((xml.body.detail as object[])[0]).toMatchObject({ loc: ['body'], type: 'model_type' });
    // A Content-Type that is no media type, as Python's e-mail parser reads it: empty is none
    // (JSON), anything else text/plain.
    const empty = await send(
      'POST',
      '/api/storage-locations',
      JSON.stringify({ name: 'empty header', type: 'local', base_path: '/mnt/empty-header' }),
      '',
    );
    expect(empty.status, JSON.stringify(empty.body)).toBe(201);
    const bare = await send('POST', '/api/storage-locations', '{}', 'json');
    expect(bare.status).toBe(422);
    expect((bare.body.detail as object[])[0]).toMatchObject({ loc: ['body'], type: 'model_type' });
    // No route, or none for the method: 404 and 405 as before any body is read; a DELETE's
    // stray body is not read at all.
    expect((await send('POST', '/api/nowhere', 'garbage')).status).toBe(404);
    expect((await send('POST', '/nowhere', '<x/>', 'application/xml')).status).toBe(404);
    expect((await send('POST', '/health', '<x/>', 'application/xml')).status).toBe(405);
    // Said to be JSON, and not JSON, all the same.
    const notJson = 'application/json';
    expect((await send('POST', '/api/nowhere', '{bad', notJson)).status).toBe(404);
    expect((await send('PUT', '/api/storage-locations/1', '{bad', notJson)).status).toBe(405);
    expect((await send('DELETE', '/api/storage-locations/99999', '{bad', notJson)).status).toBe(
      404,
    );
    expect(
      (
        await send(
          'DELETE',
          '/api/storage-locations/99999',
          'a=%ZZ',
          'application/x-www-form-urlencoded',
        )
      ).status,
    ).toBe(404);
    const gone = await send('DELETE', `/api/storage-locations/${String(empty.body.id)}`, 'garbage');
    expect(gone.status, JSON.stringify(gone.body)).toBe(204);
    const short = await send(
      'POST',
      '/api/storage-locations',
      JSON.stringify({ name: 'short', type: 'local', base_path: '/mnt/short' }),
    );
    const goneToo = await send(
      'DELETE',
      `/api/storage-locations/${String(short.body.id)}`,
      '{bad',
      notJson,
    );
    expect(goneToo.status, JSON.stringify(goneToo.body)).toBe(204);
    // The web page's calls keep their own rule: JSON or plain text only.
    const rpc = await send('POST', '/rpc/session.current', '<x/>', 'application/xml');
    expect(rpc.status).toBe(415);
    const put = await send('PUT', '/rpc/session.current', '<x/>', 'application/xml');
    expect(put.status).toBe(405);

    // fastapi-users' log-in form, as `curl -F username=... -F password=...` sends it.
    const multipart = (fields: Record<string, string>) => {
      const form = new FormData();
      for (const [k, v] of Object.entries(fields)) form.append(k, v);
      return fetch(`${server.url}auth/jwt/login`, { method: 'POST', body: form });
    };
    const good = await multipart({ username: ADMIN.email, password: ADMIN.password });
    expect(good.status).toBe(200);
    expect(await good.json()).toMatchObject({ token_type: 'bearer' });
    const wrong = await multipart({ username: ADMIN.email, password: 'not the password' });
    expect(wrong.status).toBe(400);
    expect(await wrong.json()).toEqual({ detail: 'LOGIN_BAD_CREDENTIALS' });
    const half = await multipart({ username: ADMIN.email });
    expect(half.status).toBe(422);
    expect(await half.json()).toEqual({
      detail: [{ loc: ['body', 'password'], msg: 'Field required', type: 'missing' }],
    });
    // A name need not be quoted (RFC 7578 follows MIME's parameter syntax).
    const unquoted = await fetch(`${server.url}auth/jwt/login`, {
      method: 'POST',
      headers: { 'content-type': 'multipart/form-data; boundary=XYZ' },
      body:
        '--XYZ\r\nContent-Disposition: form-data; name=username\r\n\r\n' +
        `${ADMIN.email}\r\n--XYZ\r\nContent-Disposition: form-data; name="password"\r\n\r\n` +
        `${ADMIN.password}\r\n--XYZ--\r\n`,
    });
    expect(unquoted.status).toBe(200);
    const torn = await fetch(`${server.url}auth/jwt/login`, {
      method: 'POST',
      headers: { 'content-type': 'multipart/form-data; boundary=XYZ' },
      body: '--XYZ\r\nContent-Disposition: form-data; name="username"\r\n\r\nx',
    });
    expect(torn.status).toBe(400);
    expect(await torn.json()).toEqual({ detail: 'There was an error parsing the body' });
  });

  it('login: an account without a password cannot log in, whatever password is sent', async () => {
    // Imported without `password` (a station's people, staff among them): no server login.
    // The password checked when there is none is a decoy; its secret must not open the account.
    const bundle = { users: [{ username: 'noor', email: 'noor@example.org', is_staff: true }] };
    const imported = await runCli([
      'import',
      '--data',
      dataDir,
      writeJson(tempDir(), 'n.json', bundle),
    ]);
    expect(imported.code).toBe(0);
    for (const password of ['decoy-pin', 'a long password', 'x']) {
      const res = await login('noor@example.org', password);
      expect(res.status, password).toBe(400);
      expect(await res.json()).toEqual({ detail: 'LOGIN_BAD_CREDENTIALS' });
    }
  });

  it('role matrix on the NEMO API, with JWT and API tokens', async () => {
    const jwt = async (email: string, password: string): Promise<string> =>
      `Bearer ${((await (await login(email, password)).json()) as { access_token: string }).access_token}`;
    const adminJwt = await jwt(ADMIN.email, ADMIN.password);
    const staffJwt = await jwt('sam@example.org', 'staff password 1');
    const userJwt = await jwt('alice@example.org', 'alice password 1');

    const made = await runCli([
      'admin',
      'token',
      'create',
      '--data',
      dataDir,
      '--user',
      'sam@example.org',
    ]);
    expect(made.code).toBe(0);
    const staffToken = `Token ${lastLine(made.stdout)}`;
    const userToken = `Token ${lastLine((await runCli(['admin', 'token', 'create', '--data', dataDir, '--user', 'alice@example.org'])).stdout)}`;

    for (const path of [
      'api/usage_events/',
      'api/users/',
      'api/tools/',
      'api/projects/',
      'api/reservations/',
    ]) {
      expect(await get(path), path).toEqual({
        status: 401,
        body: { detail: 'Authentication credentials were not provided.' },
      });
      expect(await get(path, 'Token not-a-real-token'), path).toEqual({
        status: 401,
        body: { detail: 'Invalid token.' },
      });
      expect((await get(path, 'Bearer a.b.c')).status, path).toBe(401);
      // Without its trailing slash: sent to it (Django's APPEND_SLASH), before credentials.
      const bare = await fetch(`${server.url}${path.slice(0, -1)}?page_size=2`, {
        redirect: 'manual',
      });
      expect(bare.status, path).toBe(301);
      expect(bare.headers.get('location')).toBe(`/${path}?page_size=2`);
      const record = await fetch(`${server.url}${path}1`, { redirect: 'manual' });
      expect(record.status, path).toBe(301);
      expect(record.headers.get('location')).toBe(`/${path}1/`);
      // The schemes that would do, as DRF names Token in its 401.
      const challenge = await fetch(`${server.url}${path}`);
      expect(challenge.headers.get('www-authenticate')).toBe('Token, Bearer');
      for (const auth of [userJwt, userToken]) {
        expect(await get(path, auth), path).toEqual({
          status: 403,
          body: { detail: 'You do not have permission to perform this action.' },
        });
      }
      for (const auth of [adminJwt, staffJwt, staffToken]) {
        expect((await get(path, auth)).status, path).toBe(200);
      }
    }
    const users = (await get('api/users/', staffToken)).body as {
      results: Record<string, unknown>[];
    };
    expect(JSON.stringify(users)).not.toMatch(/argon2|pin_hash|password/);
  });

  it('logout ends the JWT it is called with, at once; other logins go on', async () => {
    const jwtOf = async (): Promise<string> =>
      `Bearer ${((await (await login('alice@example.org', 'alice password 1')).json()) as { access_token: string }).access_token}`;
    const logout = (auth?: string): Promise<Response> =>
      fetch(`${server.url}auth/jwt/logout`, {
        method: 'POST',
        headers: auth ? { authorization: auth } : {},
      });
    const me = async (auth: string): Promise<number> =>
      (
        await fetch(`${server.url}rpc/account.me`, {
          method: 'POST',
          headers: { authorization: auth, 'content-type': 'application/json' },
          body: '{}',
        })
      ).status;
    const first = await jwtOf();
    const second = await jwtOf();
    expect(first).not.toBe(second);
    expect(await me(first)).toBe(200);
    const out = await logout(first);
    expect(out.status).toBe(204);
    // Ended everywhere (the web page's /rpc and the APIs), though not expired.
    expect(await me(first)).toBe(401);
    expect(
      (await fetch(`${server.url}api/files`, { headers: { authorization: first } })).status,
    ).toBe(401);
    expect((await logout(first)).status).toBe(401);
    // The person's other login (another browser) goes on.
    expect(await me(second)).toBe(200);
    expect((await logout()).status).toBe(401);
    // An API token is not a login to end here.
    const token = `Token ${lastLine((await runCli(['admin', 'token', 'create', '--data', dataDir, '--user', 'alice@example.org'])).stdout)}`;
    const refused = await logout(token);
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { detail: string }).detail).toMatch(
      /^Authorization: log out with the JWT/,
    );
    expect(await me(token)).toBe(200);
    // A login made before tokens had an id (jti) is ended as well.
    const db = new Database(join(dataDir, 'labstation.db'), { readonly: true });
    let old: string;
    try {
      const secret = JSON.parse(
        db
          .prepare("SELECT value FROM settings WHERE key = 'server.jwtSecret'")
          .pluck()
          .get() as string,
      ) as string;
      const alice = db
        .prepare("SELECT uuid, credentials_version FROM users WHERE username = 'alice'")
        .get() as { uuid: string; credentials_version: number };
      const now = Math.floor(Date.now() / 1000);
      old = `Bearer ${signJwt(secret, { sub: alice.uuid, role: 'user', cv: alice.credentials_version, iat: now, exp: now + 3600 })}`;
    } finally {
      db.close();
    }
    expect(await me(old)).toBe(200);
    expect((await logout(old)).status).toBe(204);
    expect(await me(old)).toBe(401);
    expect(await me(second)).toBe(200);
  });
});

describe('labstation admin', () => {
  it('creates users, refusing weak passwords and taken e-mails with the field named', async () => {
    const createUser = (args: string[]) =>
      runCli(['admin', 'user', 'create', '--data', dataDir, ...args]);
    const ok = await createUser([
      '--email',
      'eve@example.org',
      '--password',
      'a long password',
      '--role',
      'staff',
    ]);
    expect(ok.code).toBe(0);
    expect((await login('eve@example.org', 'a long password')).status).toBe(200);
    const weak = await createUser(['--email', 'x@example.org', '--password', 'short']);
    expect(weak.code).toBe(1);
    expect(weak.stderr).toMatch(/password: must be at least 10 characters/);
    const taken = await createUser([
      '--email',
      'eve@example.org',
      '--password',
      'another password',
      '--username',
      'eve2',
    ]);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toMatch(/email: eve@example.org is taken/);
    const role = await createUser([
      '--email',
      'y@example.org',
      '--password',
      'a long password',
      '--role',
      'root',
    ]);
    expect(role.code).toBe(2);
    const tab = await createUser([
      '--email',
      'tab@example.org',
      '--password',
      'a long password',
      '--username',
      'tab\tname',
    ]);
    expect(tab.code).toBe(1);
    expect(tab.stderr).toBe('username: must not hold control characters (NUL, tab, line break)\n');
    // As the admin page: a username in another case is taken, and a badge is no username
    // (a station looks a login up as a username first: alice's badge stopped working).
    const upper = ['--email', 'a2@example.org', '--password', 'a long password'];
    const other = await createUser([...upper, '--username', 'ALICE']);
    expect(other.stderr).toBe('username: ALICE is taken\n');
    const badge = await createUser([...upper, '--username', '100200']);
    expect(badge.code).toBe(1);
    expect(badge.stderr).toBe('username: 100200 is the badge number of alice\n');
  });

  it('makes no API token for someone turned off', async () => {
    const made = await runCli(
      ['admin', 'user', 'create', '--data', dataDir, '--email', 'off@example.org'].concat([
        '--password',
        'a long password',
      ]),
    );
    expect(made.code).toBe(0);
    const db = new Database(join(dataDir, 'labstation.db'));
    db.prepare("UPDATE users SET is_active = 0 WHERE email = 'off@example.org'").run();
    db.close();
    const token = await runCli([
      'admin',
      'token',
      'create',
      '--data',
      dataDir,
      '--user',
      'off@example.org',
    ]);
    expect(token.code).toBe(1);
    expect(token.stderr).toBe('user: off is deactivated; a token for them would not work\n');
  });

  it('registers a station for a tool and prints its key on the last line', async () => {
    const made = await runCli([
      'admin',
      'station',
      'create',
      '--data',
      dataDir,
      '--name',
      'sem-pc',
      '--tool',
      'SEM',
    ]);
    expect(made.code).toBe(0);
    expect(lastLine(made.stdout)).toMatch(/^[A-Za-z0-9_-]{40,}$/);
    const again = await runCli([
      'admin',
      'station',
      'create',
      '--data',
      dataDir,
      '--name',
      'sem-pc',
      '--tool',
      'SEM',
    ]);
    expect(again.code).toBe(1);
    const noTool = await runCli([
      'admin',
      'station',
      'create',
      '--data',
      dataDir,
      '--name',
      'x',
      '--tool',
      'Nope',
    ]);
    expect(noTool.stderr).toMatch(/tool: no tool named "Nope"/);
  });

  it('refuses a time zone that is not an IANA name, naming the field', async () => {
    const result = await runCli([
      'serve',
      '--data',
      join(tempDir(), 'tz'),
      '--time-zone',
      'Mars/Olympus',
    ]);
    // A bad flag value is wrong usage (exit 2, as a bad --port), named by its flag.
    expect(result.code).toBe(2);
    expect(result.stderr.split('\n')[0]).toBe(
      'labstation: --time-zone: "Mars/Olympus" is not an IANA time zone name (e.g. Europe/Zurich)',
    );
    // From the environment, the variable is named.
    const fromEnv = await runCli(['serve', '--data', join(tempDir(), 'tz')], {
      LABSTATION_TIME_ZONE: 'Mars/Olympus',
    });
    expect(fromEnv.code).toBe(1);
    expect(fromEnv.stderr).toBe(
      'LABSTATION_TIME_ZONE: "Mars/Olympus" is not an IANA time zone name (e.g. Europe/Zurich)\n',
    );
  });

  it('refuses a data dir that holds nothing, and a refused start leaves a new one as it was', async () => {
    const root = tempDir();
    const missing = join(root, 'typo');
    const admin = await runCli([
      'admin',
      'user',
      'create',
      '--data',
      missing,
      '--email',
      'a@example.org',
      '--password',
      'a long password',
    ]);
    expect(admin.code).toBe(1);
    expect(admin.stderr).toBe(
      `${missing} holds no Labstation data (no labstation.db); \`labstation serve --data ${missing}\` or \`labstation import\` makes a server data dir\n`,
    );
    expect(existsSync(missing)).toBe(false);
    // A port in use, a host that does not resolve: one line each, and no data dir left.
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = (busy.address() as AddressInfo).port;
    try {
      for (const [args, line] of [
        [
          ['serve', '--data', join(root, 'sv'), '--port', String(port)],
          `labstation: port ${port} is in use by another program; choose another with --port\n`,
        ],
        [
          ['serve', '--data', join(root, 'sv'), '--host', '999.1.1.1', '--port', '0'],
          'labstation: cannot listen on 999.1.1.1: ENOTFOUND; check --host\n',
        ],
        [
          ['station', '--data', join(root, 'st'), '--demo', '--port', String(port)],
          `labstation: port ${port} is in use by another program; choose another with --port\n`,
        ],
      ] as const) {
        const refused = await runCli([...args]);
        expect(refused.stderr, args.join(' ')).toBe(line);
        expect(refused.code).toBe(1);
      }
    } finally {
      busy.close();
    }
    expect(readdirSync(root)).toEqual([]);

    // One server per data dir: a second is refused before it touches anything.
    const second = await runCli(['serve', '--data', dataDir, '--port', '0']);
    expect(second.code).toBe(1);
    expect(second.stderr).toBe(
      `another Labstation station or server runs on ${dataDir}; stop it first (one per data dir)\n`,
    );
    expect((await fetch(`${server.url}health`)).status).toBe(200);
  });

  it('keeps station and server data apart', async () => {
    const refused = await runCli(['station', '--data', dataDir]);
    expect(refused.code).toBe(1);
    // The running server holds its data dir; stopped, its mode refuses (holds a server's data).
    expect(refused.stderr).toMatch(
      /another Labstation station or server runs on|holds a server's data/,
    );
    const stationBundle = writeJson(tempDir(), 's.json', facilityBundle());
    const importStation = await runCli(['import', '--data', dataDir, stationBundle]);
    expect(importStation.code).toBe(1);
    expect(importStation.stderr).toMatch(/station: this data dir belongs to a server/);
  });
});

describe('login throttling', () => {
  it('refuses a log-in sent from another site, which then counts for nothing', async () => {
    const from = async (origin: string, password: string): Promise<number> =>
      (
        await fetch(`${server.url}auth/jwt/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', origin },
          body: new URLSearchParams({ username: 'sam@example.org', password }).toString(),
        })
      ).status;
    for (let i = 0; i < 12; i++) expect(await from('https://evil.example', `wrong ${i}`)).toBe(403);
    expect(await from('null', 'staff password 1')).toBe(403);
    // Its own page logs in; the address was not locked by the other site's tries.
    expect(await from(new URL(server.url).origin, 'staff password 1')).toBe(200);
  });

  it('refuses an address after ten failed logins in a row', async () => {
    let last = 0;
    for (let i = 0; i < 11; i++) last = (await login('sam@example.org', `wrong ${i}`)).status;
    expect(last).toBe(429);
    const stillRefused = await login('sam@example.org', 'staff password 1');
    expect(stillRefused.status).toBe(429);
    expect(stillRefused.headers.get('retry-after')).toMatch(/^\d+$/);
  });
});

describe('admins from the environment and from bundles; throttling of bad credentials', () => {
  let dir: string;
  let own: ServerProcess;

  beforeAll(async () => {
    dir = join(tempDir(), 'server2');
    // People imported before the first start, one of them an admin.
    await importThreePeople(dir);
    own = await startServer(dir, {
      LABSTATION_ADMIN_EMAIL: 'boss@example.org',
      LABSTATION_ADMIN_PASSWORD: 'boss password 1',
    });
  });

  afterAll(async () => {
    await own?.stop();
  });

  const ownLogin = (email: string, password: string): Promise<Response> =>
    fetch(`${own.url}auth/jwt/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ username: email, password }).toString(),
    });

  it('makes the admin of LABSTATION_ADMIN_EMAIL although an imported admin exists', async () => {
    expect((await ownLogin('boss@example.org', 'boss password 1')).status).toBe(200);
    expect((await ownLogin('root@example.org', 'root password 1')).status).toBe(200);
  });

  it('keeps an admin an admin when a bundle names no role; staff follows the role', async () => {
    const again = writeJson(tempDir(), 'b.json', {
      users: [
        { username: 'root' },
        { username: 'kim', is_staff: false },
        { username: 'lee', first_name: 'Lee' },
      ],
    });
    expect((await runCli(['import', '--data', dir, again])).code).toBe(0);
    const token = lastLine(
      (await runCli(['admin', 'token', 'create', '--data', dir, '--user', 'root@example.org']))
        .stdout,
    );
    const res = await fetch(`${own.url}api/users/?ordering=username`, {
      headers: { authorization: `Token ${token}` },
    });
    expect(res.status).toBe(200);
    const users = ((await res.json()) as { results: { username: string; is_staff: boolean }[] })
      .results;
    expect(users.map((u) => [u.username, u.is_staff])).toEqual([
      ['boss', true],
      ['kim', false],
      ['lee', true],
      ['root', true],
    ]);
  });

  // Mutation: ensureEnvAdmin making the admin as createAccount names it (the start failed with
  // "username: lee is taken", and "password: ..." named a field nobody typed).
  it('makes the admin of LABSTATION_ADMIN_EMAIL under a free name, and names the variable at fault', async () => {
    const other = join(tempDir(), 'server3');
    await importThreePeople(other);
    const short = await runCli(['serve', '--data', other, '--port', '0'], {
      LABSTATION_ADMIN_EMAIL: 'lee@elsewhere.org',
      LABSTATION_ADMIN_PASSWORD: 'short',
    });
    expect(short.code).toBe(1);
    expect(short.stderr).toContain('LABSTATION_ADMIN_PASSWORD: must be at least 10 characters');
    const taken = await startServer(other, {
      LABSTATION_ADMIN_EMAIL: 'lee@elsewhere.org',
      LABSTATION_ADMIN_PASSWORD: 'lee password 12',
    });
    try {
      const res = await fetch(`${taken.url}auth/jwt/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          username: 'lee@elsewhere.org',
          password: 'lee password 12',
        }).toString(),
      });
      expect(res.status).toBe(200);
    } finally {
      await taken.stop();
    }
    const db = new Database(join(other, 'labstation.db'), { readonly: true });
    try {
      expect(
        db.prepare("SELECT username, role FROM users WHERE email = 'lee@elsewhere.org'").get(),
      ).toEqual({ username: 'lee2', role: 'admin' });
    } finally {
      db.close();
    }
  });

  it('does not make the admin of LABSTATION_ADMIN_EMAIL again after its e-mail changed', async () => {
    const jwt = (
      (await (await ownLogin('boss@example.org', 'boss password 1')).json()) as {
        access_token: string;
      }
    ).access_token;
    const rpc = (name: string, args: unknown): Promise<Response> =>
      fetch(`${own.url}rpc/${name}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${jwt}` },
        body: JSON.stringify(args),
      });
    const facility = (await (await rpc('admin.facility', {})).json()) as {
      users: { id: number; username: string }[];
    };
    const boss = facility.users.find((u) => u.username === 'boss')!;
    const renamed = await rpc('admin.users.save', {
      id: boss.id,
      username: 'boss',
      email: 'chief@example.org',
      first_name: '',
      last_name: '',
      badge_number: '',
      role: 'admin',
      is_active: true,
      projects: [],
      qualified_tools: [],
    });
    expect(renamed.status).toBe(200);
    await own.stop();
    own = await startServer(dir, {
      LABSTATION_ADMIN_EMAIL: 'boss@example.org',
      LABSTATION_ADMIN_PASSWORD: 'boss password 1',
    });
    expect((await ownLogin('boss@example.org', 'boss password 1')).status).toBe(400);
    expect((await ownLogin('chief@example.org', 'boss password 1')).status).toBe(200);
  });

  it('throttles bad API tokens, station keys or rpc logins per address; valid ones still get in', async () => {
    // Valid credentials of each kind, made before the address is throttled.
    const tool = writeJson(tempDir(), 'tool.json', {
      tools: [{ name: 'Press', pre_usage_questions: [], post_usage_questions: [] }],
    });
    expect((await runCli(['import', '--data', dir, tool])).code).toBe(0);
    const token = lastLine(
      (await runCli(['admin', 'token', 'create', '--data', dir, '--user', 'root@example.org']))
        .stdout,
    );
    const key = await createStationKey(dir, 'press-pc', 'Press');
    const jwt = (
      (await (await ownLogin('root@example.org', 'root password 1')).json()) as {
        access_token: string;
      }
    ).access_token;

    const statuses = async (url: string, init: RequestInit): Promise<number[]> => {
      const seen: number[] = [];
      for (let i = 0; i < 21; i++) seen.push((await fetch(url, init)).status);
      return seen;
    };
    const api = await statuses(`${own.url}api/users/`, {
      headers: { authorization: 'Token wrong-token' },
    });
    expect(api.slice(0, 20).every((s) => s === 401)).toBe(true);
    expect(api[20]).toBe(429);
    // The forwarded address is not believed without LABSTATION_TRUST_PROXY.
    const forwarded = await fetch(`${own.url}api/users/`, {
      headers: { authorization: 'Token wrong-token', 'x-forwarded-for': '203.0.113.9' },
    });
    expect(forwarded.status).toBe(429);
    expect(forwarded.headers.get('retry-after')).toMatch(/^\d+$/);
    // A client with a valid token behind the same address (a proxy, a NAT) is not locked out.
    const good = await fetch(`${own.url}api/users/`, {
      headers: { authorization: `Token ${token}` },
    });
    expect(good.status).toBe(200);

    const sync = await statuses(`${own.url}sync/changes?cursor=0`, {
      headers: { authorization: 'Station wrong-key' },
    });
    expect(sync.slice(0, 20).every((s) => s === 401)).toBe(true);
    expect(sync[20]).toBe(429);
    const throttled = await fetch(`${own.url}sync/changes?cursor=0`, {
      headers: { authorization: 'Station wrong-key' },
    });
    expect(((await throttled.json()) as { detail: string }).detail).toMatch(
      /^Request was throttled: too many wrong station keys from this address\. A station whose key was replaced needs the new one/,
    );
    const station = await fetch(`${own.url}sync/changes?cursor=0`, {
      headers: { authorization: `Station ${key}` },
    });
    expect(station.status).toBe(200);

    const rpc = await statuses(`${own.url}rpc/account.me`, {
      method: 'POST',
      headers: { authorization: 'Bearer not.a.jwt', 'content-type': 'application/json' },
      body: '{}',
    });
    expect(rpc.slice(0, 20).every((s) => s === 401)).toBe(true);
    expect(rpc[20]).toBe(429);
    const me = await fetch(`${own.url}rpc/account.me`, {
      method: 'POST',
      headers: { authorization: `Bearer ${jwt}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(me.status).toBe(200);
  });
  it('ends the logins made before a password change or a deactivation', async () => {
    const jwtOf = async (password: string): Promise<string> => {
      const res = await ownLogin('kim@example.org', password);
      expect(res.status).toBe(200);
      return ((await res.json()) as { access_token: string }).access_token;
    };
    const me = async (jwt: string): Promise<number> =>
      (
        await fetch(`${own.url}rpc/account.me`, {
          method: 'POST',
          headers: { authorization: `Bearer ${jwt}`, 'content-type': 'application/json' },
          body: '{}',
        })
      ).status;
    const before = await jwtOf('kim password 12');
    expect(await me(before)).toBe(200);
    const reset = writeJson(tempDir(), 'pw.json', {
      users: [{ username: 'kim', password: 'kim password 13' }],
    });
    expect((await runCli(['import', '--data', dir, reset])).code).toBe(0);
    // Refused (401; 429 once the address is throttled for bad credentials, as it is here).
    expect([401, 429]).toContain(await me(before));
    const after = await jwtOf('kim password 13');
    expect(await me(after)).toBe(200);
    // Turned off, then on again: the logins made before stay ended.
    const db = new Database(join(dir, 'labstation.db'));
    try {
      db.prepare("UPDATE users SET is_active = 0 WHERE username = 'kim'").run();
      db.prepare("UPDATE users SET is_active = 1 WHERE username = 'kim'").run();
    } finally {
      db.close();
    }
    expect([401, 429]).toContain(await me(after));
    expect(await me(await jwtOf('kim password 13'))).toBe(200);
  });
});

describe('behind a reverse proxy (LABSTATION_TRUST_PROXY, LABSTATION_PUBLIC_URL)', () => {
  let dir: string;
  let proxied: ServerProcess | undefined;

  beforeAll(async () => {
    dir = join(tempDir(), 'proxied');
    await importThreePeople(dir);
  });

  afterEach(async () => {
    await proxied?.stop();
    proxied = undefined;
  });

  const loginVia = (client: string, password: string): Promise<Response> =>
    fetch(`${proxied!.url}auth/jwt/login`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-forwarded-for': client,
      },
      body: new URLSearchParams({ username: 'kim@example.org', password }).toString(),
    });

  it('throttles the client a trusted proxy names, not the proxy', async () => {
    proxied = await startServer(dir, { LABSTATION_TRUST_PROXY: '127.0.0.1, ::1' });
    let last = 0;
    for (let i = 0; i < 11; i++) last = (await loginVia('203.0.113.7', `wrong ${i}`)).status;
    expect(last).toBe(429);
    // Another client behind the same proxy logs in.
    expect((await loginVia('203.0.113.8', 'kim password 12')).status).toBe(200);
    expect((await loginVia('203.0.113.7', 'kim password 12')).status).toBe(429);
  });

  it('holds an account that many addresses failed on, but not where it logs in from', async () => {
    proxied = await startServer(dir, { LABSTATION_TRUST_PROXY: '127.0.0.1, ::1' });
    expect((await loginVia('203.0.113.50', 'kim password 12')).status).toBe(200);
    // Thirty addresses, one wrong password each: none reaches its own limit of ten.
    for (let i = 1; i <= 30; i++) {
      expect((await loginVia(`198.51.100.${i}`, `wrong ${i}`)).status).toBe(400);
    }
    const held = await loginVia('198.51.100.31', 'kim password 12');
    expect(held.status).toBe(429);
    expect(await held.json()).toEqual({ detail: 'Request was throttled.' });
    expect(Number(held.headers.get('retry-after'))).toBeGreaterThan(800);
    // Its owner, where they logged in before, still gets in; another account anywhere does.
    expect((await loginVia('203.0.113.50', 'kim password 12')).status).toBe(200);
    const root = await fetch(`${proxied.url}auth/jwt/login`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-forwarded-for': '198.51.100.31',
      },
      body: new URLSearchParams({ username: 'root@example.org', password: 'root password 1' }),
    });
    expect(root.status).toBe(200);
    expect(proxied.stderr()).toContain('log-ins to an account held');
  });

  it('throttles an IPv6 client by its /64, whichever address of it each try comes from', async () => {
    proxied = await startServer(dir, { LABSTATION_TRUST_PROXY: '127.0.0.1, ::1' });
    // A host picks addresses in its /64 at will (privacy addresses): a new one for every try.
    let last = 0;
    for (let i = 0; i < 11; i++) {
      last = (await loginVia(`2001:db8:7:1::${(i + 1).toString(16)}`, `wrong ${i}`)).status;
    }
    expect(last).toBe(429);
    expect((await loginVia('2001:db8:7:1:ffff:1:2:3', 'kim password 12')).status).toBe(429);
    // Another network logs in; an IPv4 client written IPv4-mapped is that IPv4 address.
    expect((await loginVia('2001:db8:7:2::1', 'kim password 12')).status).toBe(200);
    for (let i = 0; i < 10; i++) await loginVia('198.51.100.9', `wrong ${i}`);
    expect((await loginVia('::ffff:198.51.100.9', 'kim password 12')).status).toBe(429);
  });

  it("builds page links from the public URL, else from a trusted proxy's forwarded scheme and host", async () => {
    const token = lastLine(
      (await runCli(['admin', 'token', 'create', '--data', dir, '--user', 'root@example.org']))
        .stdout,
    );
    const next = async (headers: Record<string, string>): Promise<string> => {
      const res = await fetch(`${proxied!.url}api/users/?page_size=1&ordering=username`, {
        headers: { authorization: `Token ${token}`, ...headers },
      });
      expect(res.status).toBe(200);
      return ((await res.json()) as { next: string }).next;
    };
    const forwarded = {
      'x-forwarded-proto': 'https',
      'x-forwarded-host': 'labstation.example.org',
    };

    proxied = await startServer(dir, {
      LABSTATION_PUBLIC_URL: 'https://labstation.example.org/lab/',
    });
    expect(await next(forwarded)).toBe(
      'https://labstation.example.org/lab/api/users/?ordering=username&page=2&page_size=1',
    );
    await proxied.stop();

    proxied = await startServer(dir, { LABSTATION_TRUST_PROXY: 'loopback' });
    expect(await next(forwarded)).toBe(
      'https://labstation.example.org/api/users/?ordering=username&page=2&page_size=1',
    );
    await proxied.stop();

    // Nothing configured: the forwarded headers are not believed.
    proxied = await startServer(dir);
    expect(await next(forwarded)).toBe(
      `${proxied.url}api/users/?ordering=username&page=2&page_size=1`,
    );
  });

  it('refuses to start with a proxy or public URL it cannot use, naming the variable', async () => {
    const proxy = await runCli(['serve', '--data', dir, '--port', '0'], {
      LABSTATION_TRUST_PROXY: '127.0.0.1,proxy.example.org',
    });
    expect(proxy.code).toBe(1);
    expect(proxy.stderr).toMatch(
      /LABSTATION_TRUST_PROXY: "proxy\.example\.org" is not an IP address, a network/,
    );
    const url = await runCli(['serve', '--data', dir, '--port', '0'], {
      LABSTATION_PUBLIC_URL: 'labstation.example.org',
    });
    expect(url.code).toBe(1);
    expect(url.stderr).toMatch(/LABSTATION_PUBLIC_URL: "labstation\.example\.org" is not an http/);
    const smtp = await runCli(['serve', '--data', dir, '--port', '0'], {
      LABSTATION_SMTP_URL: 'mail.example.org:587',
    });
    expect(smtp.code).toBe(1);
    expect(smtp.stderr).toMatch(
      /LABSTATION_SMTP_URL: "mail\.example\.org:587" is not an smtp:\/\/ or smtps:\/\/ address/,
    );
    // The password is never printed.
    const secret = await runCli(['serve', '--data', dir, '--port', '0'], {
      LABSTATION_SMTP_URL: 'http://user:hunter2@mail.example.org/',
    });
    expect(secret.code).toBe(1);
    expect(secret.stderr).not.toContain('hunter2');
    const from = await runCli(['serve', '--data', dir, '--port', '0'], {
      LABSTATION_MAIL_FROM: 'Labstation',
    });
    expect(from.code).toBe(1);
    expect(from.stderr).toMatch(/LABSTATION_MAIL_FROM: "Labstation" is not an e-mail address/);
    // Hours with a unit, or below zero, are not taken for the default or for "no reminder".
    for (const hours of ['24h', '-1', '1e9']) {
      const reminder = await runCli(['serve', '--data', dir, '--port', '0'], {
        LABSTATION_REMINDER_HOURS: hours,
      });
      expect(reminder.code).toBe(1);
      expect(reminder.stderr).toContain(
        `LABSTATION_REMINDER_HOURS: "${hours}" is not a number of hours from 0 (no reminder) to 87600`,
      );
    }
  });
});
