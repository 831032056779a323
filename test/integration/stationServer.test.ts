/**
 * The station's loopback listener in the test process (http/stationServer.ts, app.inject): what
 * its /rpc carrier and the desktop's IPC entry (both Station.call) refuse before any schema, and
 * the methods its paths answer, the UI's files included.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStationServer } from '../../electron/core/http/stationServer.js';
import type { Station } from '../../electron/core/station/station.js';
import { facilityBundle } from '../fixtures/facility.js';
import { tempDir } from './helpers.js';
import { expectCode, openStation } from './stationFixture.js';

const TOKEN = 'station-server-test-token-0123456789abcdef';
const RULE = 'not well-formed Unicode (lone surrogate)';

let station: Station;
let app: FastifyInstance;

beforeAll(async () => {
  station = await openStation(facilityBundle(), () => Date.parse('2026-11-20T09:00:00Z'));
  const rendererDir = tempDir('labstation-station-ui-');
  mkdirSync(join(rendererDir, 'assets'));
  writeFileSync(join(rendererDir, 'index.html'), '<!doctype html><title>Labstation</title>');
  writeFileSync(join(rendererDir, 'assets', 'app.js'), 'console.log(1);');
  writeFileSync(join(rendererDir, 'bench.html'), '<!doctype html>');
  app = await createStationServer({ station, token: TOKEN, rendererDir });
  await app.ready();
});

afterAll(async () => {
  await app.close();
  station.close();
});

describe('text that is not well-formed Unicode', () => {
  it('is refused by a call through either carrier, naming where, keys too', async () => {
    // The IPC entry (electron/main.ts handleCall) is Station.call.
    const ipc = await expectCode(station.call('users.list', { tool: 'x\ud800' }), 'bad_request');
    expect(ipc.message).toBe(`users.list: tool: ${RULE}`);
    expect(ipc.details).toEqual({ problems: [`tool: ${RULE}`] });
    const nested = await expectCode(
      station.call('session.logon', { login: 'ok', pin: '1234', extra: [{ '\udc00': 1 }] }),
      'bad_request',
    );
    expect(nested.message).toBe(`session.logon: extra[0].\ufffd: ${RULE}`);
    // The HTTP carrier, the contract's body.
    const res = await app.inject({
      method: 'POST',
      url: '/rpc/users.list',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      payload: '{"tool":"\\udfff"}',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      code: 'bad_request',
      message: `users.list: tool: ${RULE}`,
      details: { problems: [`tool: ${RULE}`] },
    });
  });
});

describe('methods', () => {
  it('answers another method on the UI files, / too, 405 with Allow, as on every other path', async () => {
    expect((await app.inject({ method: 'GET', url: '/' })).statusCode).toBe(200);
    for (const url of ['/', '/index.html', '/assets/app.js', '/rpc/users.list']) {
      for (const method of ['OPTIONS', 'DELETE'] as const) {
        const res = await app.inject({ method, url });
        expect(res.statusCode, `${method} ${url}`).toBe(405);
        expect(res.headers.allow, url).toBe(url.startsWith('/rpc/') ? 'POST' : 'GET, HEAD');
        expect(res.json()).toMatchObject({ code: 'bad_request' });
      }
    }
    // What GET finds nothing at stays 404: a missing file, the bench page, a folder's name.
    for (const url of ['/missing.js', '/bench.html', '/assets', '/assets/']) {
      expect((await app.inject({ method: 'OPTIONS', url })).statusCode, url).toBe(404);
      expect((await app.inject({ method: 'GET', url })).statusCode, url).toBe(404);
    }
  });
});
