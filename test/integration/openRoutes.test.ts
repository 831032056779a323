/**
 * DESIGN.md: every server route is authenticated except login, health and docs. The routes are
 * collected from fastify itself (the app's onRoute hook, added before any route), not from the
 * API docs, and each method and path is called with no credentials: all must answer 401 but
 * the few written out in OPEN below, each with its reason. A route added later without a guard,
 * or one whose guard is dropped while its docs still say it has one, fails here.
 *
 * Not routes, and so not here: the not-found handler's answers before any credentials are read
 * (a NEMO path without its trailing slash redirected, a harvest path with one redirected, 405
 * naming a path's methods, 404), none of which reads a record.
 */
import { join } from 'node:path';
import type { FastifyInstance, HTTPMethods } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../../electron/core/db/open.js';
import { createServerApp } from '../../electron/core/server/app.js';
import { newUuid } from '../../electron/core/util/ids.js';
import { createLogger } from '../../electron/core/util/log.js';
import { tempDir } from './helpers.js';

/** The routes open to anyone, as `METHOD /path` in fastify's spelling, and why. */
const OPEN: Record<string, string> = {
  'GET /health': 'health check, for load balancers and monitors',
  'HEAD /health': 'health check',
  'POST /auth/jwt/login': 'login: how a caller gets credentials',
  'GET /openapi.json': 'docs: the OpenAPI document of the API',
  'HEAD /openapi.json': 'docs',
  'GET /docs': 'docs: the interactive API docs page',
  'HEAD /docs': 'docs',
  'GET /docs/assets/:file': "docs: the docs page's scripts and styles (a fixed list of names)",
  'HEAD /docs/assets/:file': 'docs',
  // Which of the two the server has depends on whether the renderer is built (web/ui.ts).
  'GET /': 'static UI: the "UI is not built" notice, when dist/renderer is not built',
  'HEAD /': 'static UI',
  'GET /*': 'static UI: the built renderer (index.html and assets, no records); it logs in',
  'HEAD /*': 'static UI',
};
/** Entries of OPEN that one build of the server has and another has not. */
const UI_ENTRIES = ['GET /', 'HEAD /', 'GET /*', 'HEAD /*'];

/** Path parameters: ids such as records would have (nothing is stored: every table is empty). */
function concrete(url: string): string {
  const id = url.startsWith('/sync/') ? newUuid() : '1';
  return url
    .replace(':id', id)
    .replace(':user_id', '1')
    .replace(':name', 'account.me')
    .replace(':file', 'swagger-ui.css')
    .replace('*', 'index.html');
}

let db: Db;
let app: FastifyInstance;
const routes: { method: HTTPMethods; url: string }[] = [];

beforeAll(async () => {
  db = openDatabase(join(tempDir('labstation-open-routes-'), 'server.db'));
  db.prepare("INSERT INTO settings (key, value) VALUES ('mode', '\"server\"')").run();
  app = await createServerApp({
    db,
    log: createLogger('silent'),
    jwtSecret: 'open-routes-test-secret-0123456789',
    timeZone: () => 'UTC',
    onRoute: (route) => {
      for (const method of [route.method].flat()) routes.push({ method, url: route.url });
    },
  });
  await app.ready();
});

afterAll(async () => {
  await app.close();
  db.close();
});

describe('routes without credentials', () => {
  it('are all collected from the app', () => {
    const keys = routes.map((r) => `${r.method} ${r.url}`);
    // A sample of every module's routes: the hook saw them all, not only the first ones.
    for (const key of [
      'GET /api/usage_events/:id/',
      'DELETE /api/instruments/:id/access/:user_id',
      'GET /api/transfers/:id',
      'POST /sync/push',
      'PATCH /sync/uploads/:id',
      'POST /rpc/:name',
      'GET /docs',
    ]) {
      expect(keys).toContain(key);
    }
    // Every entry of the allow-list is a route of the app (the UI's, one of its two forms).
    const stale = Object.keys(OPEN).filter((k) => !UI_ENTRIES.includes(k) && !keys.includes(k));
    expect(stale).toEqual([]);
    expect(keys.includes('GET /') || keys.includes('GET /*')).toBe(true);
  });

  it('answer 401 on every route but login, health, docs and the static UI', async () => {
    const failures: string[] = [];
    let call = 0;
    for (const { method, url } of routes) {
      const key = `${method} ${url}`;
      const res = await app.inject({
        method,
        url: concrete(url),
        // A body of the right type, as a caller would send: a route without a guard answers
        // its own 400 or 422 to it, not 401.
        ...(method === 'GET' || method === 'HEAD' ? {} : { payload: {} }),
        remoteAddress: `10.9.${Math.floor(call / 250)}.${(call++ % 250) + 1}`,
      });
      if (key in OPEN) {
        // Open on purpose: it must really be (a guard added there locks clients out).
        if (res.statusCode === 401 || res.statusCode === 403 || res.statusCode >= 500) {
          failures.push(`${key}: ${res.statusCode}, open on purpose (${OPEN[key]})`);
        }
      } else if (res.statusCode !== 401) {
        failures.push(`${key}: ${res.statusCode} (want 401) ${res.body.slice(0, 120)}`);
      }
    }
    expect(failures).toEqual([]);
  });
});
