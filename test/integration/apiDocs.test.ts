/**
 * The API docs of the real server app: every route it registers is in /openapi.json with its
 * method and path, every operation has examples that fit its schemas, the documented answers are
 * what the server sends, the document is well formed and the same every time, and /docs and
 * /openapi.json answer without credentials.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../electron/core/db/open.js';
import { openServerData } from '../../electron/core/server/dataDir.js';
import { createAccount } from '../../electron/core/server/accounts.js';
import { createServerApp } from '../../electron/core/server/app.js';
import { createApiToken } from '../../electron/core/server/auth.js';
import {
  buildOpenApiDocument,
  type OpenApiDocument,
} from '../../electron/core/server/openapi/document.js';
import { ApiDocs, openApiPath } from '../../electron/core/server/openapi/registry.js';
import { importBundle } from '../../electron/core/station/facility.js';
import { createLogger } from '../../electron/core/util/log.js';
import { facilityBundle } from '../fixtures/facility.js';
import { tempDir } from './helpers.js';
import { insertUsage } from './nemo/fixture.js';

interface Route {
  method: string;
  url: string;
}

const JWT_SECRET = 'api-docs-test-secret-0123456789abcdef';
let db: Db;
let app: FastifyInstance;
let docs: ApiDocs;
let token: string;
const routes: Route[] = [];
let document: OpenApiDocument;

async function serverApp(
  into: ApiDocs,
  onRoute?: (route: Route) => void,
): Promise<FastifyInstance> {
  const made = await createServerApp({
    db,
    log: createLogger('silent'),
    jwtSecret: JWT_SECRET,
    timeZone: () => 'America/New_York',
    docs: into,
    ...(onRoute
      ? {
          onRoute: (route) => {
            const methods = Array.isArray(route.method) ? route.method : [route.method];
            for (const method of methods) onRoute({ method, url: route.url });
          },
        }
      : {}),
  });
  await made.ready();
  return made;
}

beforeAll(async () => {
  db = openServerData(join(tempDir('labstation-docs-'), 'server'));
  const bundle = facilityBundle();
  delete bundle.station;
  await importBundle(db, bundle);
  const admin = await createAccount(db, {
    email: 'ada@example.org',
    password: 'admin password 1',
    role: 'admin',
  });
  token = createApiToken(db, admin.id).token;
  insertUsage(db, {
    id: 1,
    user: 1,
    tool: 1,
    start: '2024-01-05T14:00:00.000Z',
    end: '2024-01-05T15:00:00.250Z',
    run: JSON.stringify({ data_consent: 'Agree' }),
  });
  db.prepare(
    `INSERT INTO reservations (id, uuid, user_id, creator_id, project_id, tool_id, area_id, start,
       "end", cancelled, question_data, created_at, updated_at)
     VALUES (1, 'r-1', 1, 1, 1, 1, NULL, ?, ?, 0, '', ?, ?)`,
  ).run(
    '2024-01-05T13:30:00.000Z',
    '2024-01-05T15:30:00.000Z',
    '2024-01-01T00:00:00.000Z',
    '2024-01-01T00:00:00.000Z',
  );
  docs = new ApiDocs();
  app = await serverApp(docs, (route) => routes.push(route));
  const res = await app.inject({ method: 'GET', url: '/openapi.json' });
  expect(res.statusCode, res.body).toBe(200);
  document = res.json<OpenApiDocument>();
});

afterAll(async () => {
  await app?.close();
  db?.close();
});

function operationsOf(doc: OpenApiDocument): { method: string; path: string }[] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.keys(item).map((method) => ({ method: method.toUpperCase(), path })),
  );
}

describe('coverage', () => {
  it('describes every registered route with the same method and path', () => {
    expect(routes.length).toBeGreaterThan(20);
    const registered = new Set(routes.map((r) => `${r.method} ${r.url}`));
    const missing = routes
      .filter(
        (route) =>
          // fastify answers HEAD for every GET route itself (exposeHeadRoutes): the GET's docs
          // describe it.
          !(route.method === 'HEAD' && registered.has(`GET ${route.url}`)) &&
          // @fastify/static's wildcard serves the built UI's files, whose names change with
          // every build; OpenAPI paths cannot say "any path". `GET /` describes the UI.
          route.url !== '/*',
      )
      .filter((route) => !document.paths[openApiPath(route.url)]?.[route.method.toLowerCase()])
      .map((route) => `${route.method} ${route.url}`);
    expect(missing).toEqual([]);
  });

  it('describes no route that does not exist', () => {
    const registered = new Set(routes.map((r) => `${r.method} ${openApiPath(r.url)}`));
    const invented = operationsOf(document)
      .map(({ method, path }) => `${method} ${path}`)
      // Without a built UI, `GET /` is a route of its own; with one, the static wildcard.
      .filter((op) => !registered.has(op) && !(op === 'GET /' && registered.has('GET /*')));
    expect(invented).toEqual([]);
  });

  it('covers both API families, the sync and rpc routes, login, health and the docs', () => {
    const ops = new Set(operationsOf(document).map(({ method, path }) => `${method} ${path}`));
    for (const resource of ['users', 'tools', 'projects', 'reservations', 'usage_events']) {
      expect(ops).toContain(`GET /api/${resource}/`);
      expect(ops).toContain(`GET /api/${resource}/{id}/`);
    }
    for (const op of [
      'GET /api/instruments',
      'POST /api/instruments',
      'GET /health',
      'POST /auth/jwt/login',
      'POST /sync/push',
      'GET /sync/changes',
      'POST /rpc/{name}',
      'GET /openapi.json',
      'GET /docs',
    ]) {
      expect(ops).toContain(op);
    }
    expect(document.paths['/sync/push'].post.tags).toEqual(['Station sync']);
    expect(document.paths['/sync/push'].post.security).toEqual([{ stationKey: [] }]);
    expect(document.paths['/rpc/{name}'].post.tags).toEqual(['Web UI carrier']);
  });
});

describe('examples', () => {
  it('gives every operation a response example, and every request body an example', () => {
    const lacking: string[] = [];
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, op] of Object.entries(item)) {
        const name = `${method.toUpperCase()} ${path}`;
        const responseExamples = Object.values(op.responses).flatMap((response) =>
          Object.values(response.content ?? {}).filter((media) => media.example !== undefined),
        );
        if (responseExamples.length === 0) lacking.push(`${name}: no response example`);
        for (const [type, media] of Object.entries(op.requestBody?.content ?? {})) {
          if (media.example === undefined) lacking.push(`${name}: no ${type} body example`);
        }
      }
    }
    expect(lacking).toEqual([]);
  });

  it('fit the schemas they illustrate', () => {
    const misfits: string[] = [];
    for (const op of docs.operations) {
      const name = `${op.method} ${op.path}`;
      if (op.body && op.bodyExample !== undefined) {
        const parsed = op.body.safeParse(op.bodyExample);
        if (!parsed.success) misfits.push(`${name} body: ${parsed.error.message}`);
      }
      for (const [status, response] of Object.entries(op.responses)) {
        if (!response.schema || response.example === undefined) continue;
        const parsed = response.schema.safeParse(response.example);
        if (!parsed.success) misfits.push(`${name} ${status}: ${parsed.error.message}`);
      }
    }
    expect(misfits).toEqual([]);
  });
});

describe('the documented answers', () => {
  it('are what the server sends to the GET operations', async () => {
    const checked: string[] = [];
    const wrong: string[] = [];
    for (const op of docs.operations) {
      if (op.method !== 'GET' || op.security === 'station') continue;
      const names = Object.keys(op.params?.shape ?? {});
      if (names.some((name) => name !== 'id')) continue;
      const url = op.path.replace('{id}', '1');
      const res = await app.inject({
        method: 'GET',
        url,
        headers: op.security === 'none' ? {} : { authorization: `Token ${token}` },
      });
      const response = op.responses[res.statusCode];
      if (!response) {
        wrong.push(`GET ${url}: ${res.statusCode} is not documented`);
        continue;
      }
      if (!response.schema || response.contentType) continue;
      checked.push(url);
      const body: unknown = res.json();
      const parsed = response.schema.safeParse(body);
      if (!parsed.success) wrong.push(`GET ${url}: ${parsed.error.message}`);
      // Schemas drop what they do not name: a field the docs leave out shows here.
      else if (JSON.stringify(parsed.data) !== JSON.stringify(body)) {
        wrong.push(`GET ${url}: fields not in the docs: ${JSON.stringify(body)}`);
      }
    }
    expect(wrong).toEqual([]);
    expect(checked).toEqual(expect.arrayContaining(['/api/usage_events/1/', '/api/users/']));
  });
});

describe('the document', () => {
  it('is OpenAPI 3.1 with its info, tags and security schemes', () => {
    expect(document.openapi).toBe('3.1.0');
    expect(document.info.title).toBe('Labstation server API');
    expect(typeof document.info.version).toBe('string');
    const tags = document.tags.map((tag) => tag.name);
    expect(new Set(tags).size).toBe(tags.length);
    expect(Object.keys(document.components.securitySchemes).sort()).toEqual([
      'apiToken',
      'bearer',
      'stationKey',
    ]);
    const problems: string[] = [];
    const operationIds = new Set<string>();
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, op] of Object.entries(item)) {
        const name = `${method.toUpperCase()} ${path}`;
        if (!tags.includes(op.tags[0])) problems.push(`${name}: undeclared tag ${op.tags[0]}`);
        if (operationIds.has(op.operationId)) problems.push(`${name}: repeated operationId`);
        operationIds.add(op.operationId);
        for (const requirement of op.security) {
          for (const scheme of Object.keys(requirement)) {
            if (!(scheme in document.components.securitySchemes)) {
              problems.push(`${name}: unknown security scheme ${scheme}`);
            }
          }
        }
        for (const status of Object.keys(op.responses)) {
          if (!/^[1-5]\d\d$/.test(status)) problems.push(`${name}: status ${status}`);
        }
        if (Object.keys(op.responses).length === 0) problems.push(`${name}: no responses`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('declares every path parameter, and only those, as required path parameters', () => {
    const problems: string[] = [];
    for (const [path, item] of Object.entries(document.paths)) {
      const templated = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]).sort();
      for (const [method, op] of Object.entries(item)) {
        const inPath = (op.parameters ?? []).filter((p) => p.in === 'path');
        const declared = inPath.map((p) => p.name).sort();
        if (JSON.stringify(declared) !== JSON.stringify(templated)) {
          problems.push(`${method.toUpperCase()} ${path}: declares [${declared.join(', ')}]`);
        }
        if (inPath.some((p) => !p.required)) problems.push(`${method} ${path}: optional path`);
        const seen = (op.parameters ?? []).map((p) => `${p.in} ${p.name}`);
        if (new Set(seen).size !== seen.length) problems.push(`${method} ${path}: repeated`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('types the harvest API numbers as the server reads them, and lists the hook kinds', () => {
    const param = (path: string, method: string, name: string) =>
      document.paths[path]?.[method]?.parameters?.find((p) => p.name === name)?.schema;
    // Declared text, though only whole numbers are taken: clients made from the docs sent text.
    expect(param('/api/instruments/{id}', 'get', 'id')).toMatchObject({ type: 'integer' });
    for (const name of ['id', 'user_id']) {
      expect(param('/api/instruments/{id}/access/{user_id}', 'delete', name)).toMatchObject({
        type: 'integer',
      });
    }
    expect(param('/api/files', 'get', 'instrument_id')).toMatchObject({ type: 'integer' });
    expect(param('/api/transfers', 'get', 'file_id')).toMatchObject({ type: 'integer' });
    expect(param('/api/hooks', 'get', 'size')).toMatchObject({
      type: 'integer',
      minimum: 1,
      maximum: 1000,
    });
    expect(param('/api/files', 'get', 'page')).toMatchObject({ type: 'integer', minimum: 1 });
    const hook = JSON.stringify(document.paths['/api/hooks']?.post?.requestBody);
    const kinds = JSON.stringify(document.components?.schemas ?? {});
    expect(hook.includes('"enum":["skip"') || kinds.includes('"enum":["skip"')).toBe(true);
    // Nothing refers to a hook or a schedule: their DELETE has no 409.
    expect(document.paths['/api/hooks/{id}']?.delete?.responses?.['409']).toBeUndefined();
    expect(document.paths['/api/schedules/{id}']?.delete?.responses?.['409']).toBeUndefined();
    expect(document.paths['/api/instruments/{id}']?.delete?.responses?.['409']).toBeDefined();
  });

  it('resolves every $ref, and keeps no JSON Schema leftovers of its own', () => {
    const unresolved: string[] = [];
    const leftovers: string[] = [];
    const walk = (node: unknown, at: string): void => {
      if (Array.isArray(node)) return node.forEach((item, i) => walk(item, `${at}/${i}`));
      if (node === null || typeof node !== 'object') return;
      for (const [key, value] of Object.entries(node)) {
        if (key === '$ref' && typeof value === 'string' && resolvePointer(value) === undefined) {
          unresolved.push(`${at}: ${value}`);
        }
        if (key === '$defs' || key === '$schema') leftovers.push(`${at}/${key}`);
        walk(value, `${at}/${key}`);
      }
    };
    walk(document, '#');
    expect(unresolved).toEqual([]);
    expect(leftovers).toEqual([]);
    const names = Object.keys(document.components.schemas);
    expect(names.length).toBeGreaterThan(0);
    expect(names.filter((name) => !/^[A-Za-z0-9._-]+$/.test(name))).toEqual([]);
  });

  it('is the same for a second server built in the same process', async () => {
    const again = new ApiDocs();
    const other = await serverApp(again);
    try {
      const res = await other.inject({ method: 'GET', url: '/openapi.json' });
      expect(res.body).toBe(JSON.stringify(document));
      expect(JSON.stringify(buildOpenApiDocument(again))).toBe(res.body);
    } finally {
      await other.close();
    }
  });
});

function resolvePointer(ref: string): unknown {
  if (!ref.startsWith('#/')) return undefined;
  let node: unknown = document;
  for (const raw of ref.slice(2).split('/')) {
    const key = decodeURIComponent(raw).replaceAll('~1', '/').replaceAll('~0', '~');
    if (node === null || typeof node !== 'object' || !Object.hasOwn(node, key)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

describe('access', () => {
  it('answers /docs, its files and /openapi.json without credentials; the API asks for them', async () => {
    const page = await app.inject({ method: 'GET', url: '/docs' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    const csp = String(page.headers['content-security-policy']);
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    expect(page.body).not.toMatch(/<script>|<script [^>]*>[^<\s]/);
    expect(page.body).not.toMatch(/<style|style="|https?:\/\//);

    for (const src of page.body.matchAll(/(?:src|href)="(docs\/assets\/[^"]+)"/g)) {
      const asset = await app.inject({ method: 'GET', url: `/${src[1]}` });
      expect(asset.statusCode, src[1]).toBe(200);
      expect(asset.body.length).toBeGreaterThan(100);
    }
    const bundle = await app.inject({ method: 'GET', url: '/docs/assets/swagger-ui-bundle.js' });
    expect(bundle.headers['content-type']).toMatch(/^text\/javascript/);
    const etag = String(bundle.headers.etag);
    const unchanged = await app.inject({
      method: 'GET',
      url: '/docs/assets/swagger-ui-bundle.js',
      headers: { 'if-none-match': etag },
    });
    expect(unchanged.statusCode).toBe(304);
    expect((await app.inject({ method: 'GET', url: '/docs/assets/index.html' })).statusCode).toBe(
      404,
    );
    expect(
      (await app.inject({ method: 'GET', url: '/docs/assets/..%2Fpackage.json' })).statusCode,
    ).toBe(404);

    const json = await app.inject({ method: 'GET', url: '/openapi.json' });
    expect(json.statusCode).toBe(200);
    expect(json.headers['content-type']).toMatch(/^application\/json/);
    expect((await app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);

    const users = await app.inject({ method: 'GET', url: '/api/users/' });
    expect(users.statusCode).toBe(401);
    expect(users.json()).toEqual({ detail: 'Authentication credentials were not provided.' });

    // The docs with a trailing slash: sent to /docs, whose asset paths are relative to it.
    const slash = await app.inject({ method: 'GET', url: '/docs/?x=1' });
    expect(slash.statusCode).toBe(307);
    expect(slash.headers.location).toBe('/docs?x=1');
  });

  it('documents the 422 of every harvest API path whose id is not a whole number', async () => {
    const missing: string[] = [];
    for (const op of docs.operations) {
      if (!op.path.startsWith('/api/') || op.path.endsWith('/') || !op.path.includes('{')) continue;
      if (!op.responses[422]) missing.push(`${op.method} ${op.path}`);
      // ...and it is what the server answers.
      const url = op.path.replace(/\{[^}]+\}/g, 'x');
      const answer = await app.inject({
        method: op.method as 'GET',
        url,
        headers: { authorization: `Token ${token}` },
      });
      expect(answer.statusCode, `${op.method} ${url}`).toBe(422);
    }
    expect(missing).toEqual([]);
  });

  it('answers a method a path has no route for with 405 and the methods it has', async () => {
    const cases: [string, string, string][] = [
      ['POST', '/api/users/', 'GET, HEAD'],
      ['DELETE', '/api/usage_events/7/', 'GET, HEAD'],
      ['PUT', '/api/instruments', 'GET, HEAD, POST'],
      ['POST', '/api/instruments/3', 'DELETE, GET, HEAD, PATCH'],
      ['DELETE', '/health', 'GET, HEAD'],
      ['GET', '/auth/jwt/login', 'POST'],
    ];
    for (const [method, url, allow] of cases) {
      const answer = await app.inject({ method: method as 'GET', url });
      expect(answer.statusCode, `${method} ${url}`).toBe(405);
      expect(answer.headers.allow, `${method} ${url}`).toBe(allow);
      expect(answer.json()).toEqual({ detail: `Method "${method}" not allowed.` });
    }
    // A path that is nowhere stays 404, whatever the method (the UI's catch-all aside).
    for (const method of ['GET', 'POST'] as const) {
      const nowhere = await app.inject({ method, url: '/api/nothing-here/' });
      expect(nowhere.statusCode, method).toBe(404);
    }
  });

  it("answers another method on the web page's files, / too, 405 with Allow: GET, HEAD", async () => {
    const rendererDir = tempDir('labstation-docs-ui-');
    mkdirSync(join(rendererDir, 'assets'));
    writeFileSync(join(rendererDir, 'index.html'), '<!doctype html><title>Labstation</title>');
    writeFileSync(join(rendererDir, 'assets', 'app.js'), 'console.log(1);');
    writeFileSync(join(rendererDir, 'assets', 'app.js.map'), '{}');
    const withUi = await createServerApp({
      db,
      log: createLogger('silent'),
      jwtSecret: JWT_SECRET,
      timeZone: () => 'UTC',
      rendererDir,
    });
    await withUi.ready();
    try {
      expect((await withUi.inject({ method: 'GET', url: '/' })).statusCode).toBe(200);
      for (const url of ['/', '/index.html', '/assets/app.js']) {
        for (const method of ['OPTIONS', 'POST'] as const) {
          const answer = await withUi.inject({ method, url });
          expect(answer.statusCode, `${method} ${url}`).toBe(405);
          expect(answer.headers.allow, url).toBe('GET, HEAD');
          expect(answer.json()).toEqual({ detail: `Method "${method}" not allowed.` });
        }
      }
      // What GET finds nothing at stays 404: a missing file, a source map (not served here).
      for (const url of ['/missing.js', '/assets/app.js.map']) {
        expect((await withUi.inject({ method: 'GET', url })).statusCode, url).toBe(404);
        expect((await withUi.inject({ method: 'OPTIONS', url })).statusCode, url).toBe(404);
      }
    } finally {
      await withUi.close();
    }
  });
});
