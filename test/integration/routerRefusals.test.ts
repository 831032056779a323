/**
 * Requests that Fastify's router refuses before any route is found (a `%` that starts no
 * escape, a route parameter over its length limit) are answered as the listener answers every
 * other request: its security headers, its Host rule, its own error body (http/routerRefusals.ts).
 * Fastify's default answer skipped all three.
 */
import { request, type IncomingHttpHeaders } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { SECURITY_HEADERS } from '../../electron/core/http/securityHeaders.js';
import { startServer, startStation, tempDir } from './helpers.js';

interface Answer {
  status: number | undefined;
  headers: IncomingHttpHeaders;
  body: unknown;
}

/** Asks `base` for the raw `path` (sent as written), with the given Host. */
function ask(base: string, path: string, host: string, method = 'GET'): Promise<Answer> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ hostname, port, path, method, headers: { host } }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () =>
        resolve({
          status: res.statusCode,
          headers: res.headers,
          body: JSON.parse(text) as unknown,
        }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(stops.splice(0).map((stop) => stop()));
});

const LONG_NAME = `/rpc/${'a'.repeat(120)}`;

// Mutation: the listeners without frameworkErrors (Fastify's own 400/414, no headers, any Host).
describe('a request the router cannot route', () => {
  it('is answered by a station with its headers, its Host rule and its error body', async () => {
    const station = await startStation(tempDir(), {}, ['--demo']);
    stops.push(() => station.stop());
    const own = new URL(station.url).host;
    for (const [path, status] of [
      ['/%', 400],
      ['/assets/%E0%A4%A', 400],
      [LONG_NAME, 414],
    ] as const) {
      const answer = await ask(station.url, path, own, path === LONG_NAME ? 'POST' : 'GET');
      expect(answer.status, path).toBe(status);
      expect(answer.headers, path).toMatchObject(SECURITY_HEADERS);
      expect(answer.body, path).toEqual({
        code: 'bad_request',
        message: expect.any(String) as string,
      });
      const rebound = await ask(station.url, path, 'evil.example');
      expect({ status: rebound.status, body: rebound.body }, path).toEqual({
        status: 403,
        body: { code: 'forbidden', message: 'this station answers on loopback only' },
      });
      expect(rebound.headers, path).toMatchObject(SECURITY_HEADERS);
    }
  }, 30_000);

  it('is answered by a server with its headers, its Host rule and its error body', async () => {
    const server = await startServer(tempDir(), {
      LABSTATION_ADMIN_EMAIL: 'admin@example.org',
      LABSTATION_ADMIN_PASSWORD: 'a long admin password',
    });
    stops.push(() => server.stop());
    const own = new URL(server.url).host;
    const answer = await ask(server.url, '/%', own);
    expect(answer.status).toBe(400);
    expect(answer.headers).toMatchObject(SECURITY_HEADERS);
    expect(answer.body).toEqual({ detail: expect.any(String) as string });
    const rebound = await ask(server.url, '/%', 'evil.example');
    expect({ status: rebound.status, body: rebound.body }).toEqual({
      status: 403,
      body: { detail: 'This server answers on its loopback address only.' },
    });
  }, 30_000);
});
