/**
 * A server listening on loopback (the default `--host 127.0.0.1`, and the desktop app's server
 * mode without network) answers to loopback names only, as a station does: a page on another
 * site whose DNS name is pointed at 127.0.0.1 is the same site as that name to its browser, so
 * its log-ins passed the Origin check, could read whether a password was right, and, failing,
 * throttled the log-ins of everyone at the address for 15 minutes (http/loopbackHost.ts).
 */
import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { startServer, tempDir, type ServerProcess } from './helpers.js';

const ADMIN = {
  LABSTATION_ADMIN_EMAIL: 'admin@example.org',
  LABSTATION_ADMIN_PASSWORD: 'a long admin password',
};

/** What the server answers, asked with the given headers (fetch() cannot set Host). */
function ask(
  url: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: body === undefined ? 'GET' : 'POST', headers }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const servers: ServerProcess[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});

async function serve(env: NodeJS.ProcessEnv = {}): Promise<ServerProcess> {
  const server = await startServer(tempDir('labstation-server-host-'), { ...ADMIN, ...env });
  servers.push(server);
  return server;
}

describe('a server on loopback', () => {
  it('refuses a page rebound to its address, which then cannot lock anyone out', async () => {
    const server = await serve();
    const port = new URL(server.url).port;
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const login = `${server.url}auth/jwt/login`;
    // More tries than the address's limit of failed log-ins (10 in 15 minutes).
    for (let i = 0; i < 12; i++) {
      const rebound = await ask(
        login,
        { ...form, host: `evil.example:${port}`, origin: `http://evil.example:${port}` },
        `username=admin%40example.org&password=guess${i}`,
      );
      expect(rebound.status).toBe(403);
      expect(JSON.parse(rebound.body)).toEqual({
        detail: 'This server answers on its loopback address only.',
      });
    }
    expect((await ask(`${server.url}health`, { host: 'evil.example' })).status).toBe(403);
    // Its own names still get in, and the admin's log-in was not throttled.
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]) {
      expect((await ask(`${server.url}health`, { host })).status, host).toBe(200);
    }
    const own = await ask(
      login,
      { ...form, host: `127.0.0.1:${port}`, origin: `http://127.0.0.1:${port}` },
      'username=admin%40example.org&password=a+long+admin+password',
    );
    expect(own.status, own.body).toBe(200);
  });

  it('answers to its public address, and leaves the names to a trusted proxy', async () => {
    const named = await serve({ LABSTATION_PUBLIC_URL: 'https://labstation.example.org/' });
    // Its name in any letter case, with no port or its scheme's own.
    for (const host of [
      'labstation.example.org',
      'LabStation.Example.org',
      'labstation.example.org:443',
    ]) {
      expect((await ask(`${named.url}health`, { host })).status, host).toBe(200);
    }
    expect((await ask(`${named.url}health`, { host: 'labstation.example.org:8443' })).status).toBe(
      403,
    );
    expect((await ask(`${named.url}health`, { host: 'evil.example' })).status).toBe(403);
    // Behind a proxy, the Host it forwards is whatever name it serves the site under.
    const proxied = await serve({ LABSTATION_TRUST_PROXY: 'loopback' });
    expect((await ask(`${proxied.url}health`, { host: 'evil.example' })).status).toBe(200);
  });
});
