/**
 * The role matrix over every route the server registers: each is called with no credentials,
 * as a regular user without the instrument grant, as one with it, as staff, as an admin and
 * with a station key, and must answer what its security says. The routes come from the app
 * itself (fastify's onRoute), so a route added later is in the matrix without anyone listing it.
 */
import { join } from 'node:path';
import type { FastifyInstance, HTTPMethods } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverApiSchemas } from '../../shared/api.js';
import { openDatabase, type Db } from '../../electron/core/db/open.js';
import { createStationAccount } from '../../electron/core/server/accounts.js';
import { createApiToken } from '../../electron/core/server/auth.js';
import { createServerApp } from '../../electron/core/server/app.js';
import { ApiDocs, type Security } from '../../electron/core/server/openapi/registry.js';
import { ingestBatch } from '../../electron/core/server/sync/ingest.js';
import { newUuid } from '../../electron/core/util/ids.js';
import { createLogger } from '../../electron/core/util/log.js';
import type { PushRecord } from '../../electron/core/sync/protocol.js';
import { tempDir } from './helpers.js';

const T0 = '2026-01-01T00:00:00.000Z';
type Who = 'nobody' | 'stranger' | 'granted' | 'staff' | 'admin' | 'station';
const WHO: Who[] = ['nobody', 'stranger', 'granted', 'staff', 'admin', 'station'];

let db: Db;
let app: FastifyInstance;
const docs = new ApiDocs();
const routes: { method: string; url: string }[] = [];
const auth: Record<Who, string | null> = {
  nobody: null,
  stranger: null,
  granted: null,
  staff: null,
  admin: null,
  station: null,
};
/** Path parameters: ids of records that exist, so a refusal cannot hide behind a 404. */
const ids: Record<string, number> = {};

function seed(): void {
  const user = db.prepare(
    `INSERT INTO users (id, uuid, username, email, first_name, last_name, role, is_staff,
       is_active, created_at, updated_at) VALUES (?, ?, ?, ?, '', '', ?, ?, 1, ?, ?)`,
  );
  user.run(1, newUuid(), 'admin', 'admin@example.org', 'admin', 1, T0, T0);
  user.run(2, newUuid(), 'granted', 'granted@example.org', 'user', 0, T0, T0);
  user.run(3, newUuid(), 'stranger', 'stranger@example.org', 'user', 0, T0, T0);
  user.run(4, newUuid(), 'staff', 'staff@example.org', 'staff', 1, T0, T0);
  db.prepare(
    `INSERT INTO tools (id, uuid, name, category, operational, visible, shutdown, created_at,
       updated_at) VALUES (1, ?, 'TEM', '', 1, 1, 0, ?, ?)`,
  ).run(newUuid(), T0, T0);
  auth.admin = `Token ${createApiToken(db, 1).token}`;
  auth.granted = `Token ${createApiToken(db, 2).token}`;
  auth.stranger = `Token ${createApiToken(db, 3).token}`;
  auth.staff = `Token ${createApiToken(db, 4).token}`;
  const account = createStationAccount(db, { name: 'tem-pc', tool: 1 });
  auth.station = `Station ${account.key}`;
  const now = new Date().toISOString();
  db.prepare(
    `INSERT INTO storage_locations (id, uuid, name, type, base_path, created_at, updated_at)
     VALUES (1, ?, 'archive', 'local', '/mnt/archive', ?, ?)`,
  ).run(newUuid(), now, now);
  const instrumentUuid = newUuid();
  db.prepare(
    `INSERT INTO instruments (id, uuid, name, tool_id, station_id, storage_location_id,
       destination_template, created_at, updated_at)
     VALUES (1, ?, 'camera', 1, ?, 1, '{filename}', ?, ?)`,
  ).run(instrumentUuid, account.id, now, now);
  db.prepare(
    `INSERT INTO harvest_schedules (id, uuid, instrument_id, cron, station_id, created_at,
       updated_at) VALUES (1, ?, 1, '0 3 * * *', ?, ?, ?)`,
  ).run(newUuid(), account.id, now, now);
  db.prepare(
    `INSERT INTO harvest_hooks (id, uuid, name, "trigger", kind, created_at, updated_at)
     VALUES (1, ?, 'info', 'post_transfer', 'file_info', ?, ?)`,
  ).run(newUuid(), now, now);
  db.prepare(
    'INSERT INTO user_instrument_access (instrument_id, user_id, granted_at) VALUES (1, 2, ?)',
  ).run(now);
  const fileUuid = newUuid();
  const transferUuid = newUuid();
  const records: PushRecord[] = [
    {
      id: 1,
      kind: 'harvest_file',
      uuid: fileUuid,
      payload: {
        uuid: fileUuid,
        instrument_uuid: instrumentUuid,
        instrument: 'camera',
        persistent_id: 'ark:99999/fk4bcd3',
        persistent_id_type: 'ark',
        source_path: '/data/a.tif',
        relative_path: 'a.tif',
        filename: 'a.tif',
        size: 3,
        mtime_ms: 1,
        xxhash: 'ab',
        hash_algorithm: 'xxh3-128',
        first_discovered_at: now,
        metadata_: {},
        state: 'done',
        updated_at: now,
      },
    },
    {
      id: 2,
      kind: 'harvest_transfer',
      uuid: transferUuid,
      payload: {
        uuid: transferUuid,
        file_uuid: fileUuid,
        status: 'completed',
        destination_path: '/mnt/archive/a.tif',
        bytes_transferred: 3,
        dest_checksum: 'ab',
        checksum_verified: true,
        started_at: now,
        completed_at: now,
        error: '',
        note: '',
      },
    },
  ];
  const result = ingestBatch(db, { id: account.id, uuid: '', name: 'tem-pc', tool_id: 1 }, records);
  expect(result.error).toBeNull();
  Object.assign(ids, {
    instruments: 1,
    'storage-locations': 1,
    'service-accounts': account.id,
    schedules: 1,
    hooks: 1,
    files: db.prepare('SELECT id FROM harvest_files').pluck().get() as number,
    transfers: db.prepare('SELECT id FROM harvest_transfers').pluck().get() as number,
    users: 1,
    tools: 1,
    projects: 1,
    reservations: 1,
    usage_events: 1,
  });
}

beforeAll(async () => {
  db = openDatabase(join(tempDir('labstation-matrix-'), 'server.db'));
  db.prepare("INSERT INTO settings (key, value) VALUES ('mode', '\"server\"')").run();
  seed();
  app = await createServerApp({
    db,
    log: createLogger('silent'),
    jwtSecret: 'role-matrix-test-secret-0123456789',
    timeZone: () => 'UTC',
    docs,
    onRoute: (route) => {
      for (const method of [route.method].flat()) {
        if (method !== 'HEAD') routes.push({ method, url: route.url });
      }
    },
  });
  await app.ready();
});

afterAll(async () => {
  await app.close();
  db.close();
});

/** A concrete URL for an OpenAPI path: ids of existing records, the granted user, a file. */
function concrete(path: string): string {
  const resource = /^\/api\/([a-z_-]+)\//.exec(path)?.[1] ?? '';
  return path
    .replace('{id}', String(ids[resource] ?? 1))
    .replace('{user_id}', '2')
    .replace('{name}', 'admin.facility')
    .replace('{file}', 'swagger-ui.css');
}

/**
 * What a principal must get. Mutating calls by those allowed are sent without a body or for a
 * record that is not there, so they answer 4xx without changing anything the next call needs.
 */
function expected(security: Security, path: string, method: string, who: Who): number[] | 'ok' {
  const refusedUser = who === 'nobody' || who === 'station' ? 401 : null;
  switch (security) {
    case 'none':
      return 'ok';
    case 'station':
      return who === 'station' ? 'ok' : [401];
    case 'admin':
      if (refusedUser) return [refusedUser];
      return who === 'admin' ? 'ok' : [403];
    case 'staff':
      if (refusedUser) return [refusedUser];
      return who === 'admin' || who === 'staff' ? 'ok' : [403];
    case 'user': {
      if (refusedUser) return [refusedUser];
      if (path === '/rpc/{name}') return who === 'admin' ? 'ok' : [403];
      // A record of an instrument not granted does not exist for that user.
      const detail = /^\/api\/(files|transfers)\/\{id\}$/.test(path);
      if (detail && (who === 'stranger' || who === 'staff')) return [404];
      return method === 'GET' ? [200] : 'ok';
    }
  }
}

describe('role matrix', () => {
  it('documents every registered route with its security', () => {
    const documented = new Set(docs.operations.map((o) => `${o.method} ${o.path}`));
    const missing = routes
      .filter((r) => r.url !== '/*')
      .map((r) => `${r.method} ${r.url.replace(/:(\w+)/g, '{$1}')}`)
      .filter((key) => !documented.has(key));
    expect(missing).toEqual([]);
  });

  it('answers each principal as the route’s security says', async () => {
    const failures: string[] = [];
    // Reads first, then changes, deletions last: no call removes what a later one needs.
    const order = { GET: 0, POST: 1, PATCH: 1, PUT: 1, HEAD: 0, DELETE: 2 } as const;
    const operations = [...docs.operations].sort((a, b) => order[a.method] - order[b.method]);
    let call = 0;
    for (const op of operations) {
      for (const who of WHO) {
        let url = concrete(op.path);
        const mutating = op.method !== 'GET' && op.method !== 'HEAD';
        // An allowed deletion aims at a record that is not there (404): nothing is lost.
        if (op.method === 'DELETE' && who === 'admin') url = url.replace(/\/(\d+)$/, '/424242');
        const res = await app.inject({
          method: op.method as HTTPMethods,
          url,
          headers: auth[who] ? { authorization: auth[who] } : {},
          ...(mutating ? { payload: {} } : {}),
          // Refused credentials are throttled per address: each call comes from its own.
          remoteAddress: `10.0.${Math.floor(call / 250)}.${(call++ % 250) + 1}`,
        });
        const want = expected(op.security, op.path, op.method, who);
        const ok =
          want === 'ok'
            ? res.statusCode < 500 && res.statusCode !== 401 && res.statusCode !== 403
            : want.includes(res.statusCode);
        if (!ok) {
          failures.push(
            `${who} ${op.method} ${url}: ${res.statusCode} (want ${String(want)}) ${res.body.slice(0, 120)}`,
          );
        }
      }
    }
    expect(failures).toEqual([]);
  });

  it('answers every call of the web page’s /rpc as its access says: 401 without a login, 403 for those not allowed', async () => {
    // Written out, not read from serverApiAccess: a call made open to everyone logged in must
    // be named here on purpose.
    const forEveryone = new Set([
      'account.me',
      'usage.mine',
      'usage.pendingMine',
      'usage.pendingForm',
      'usage.completePendingServer',
      'files.list',
      'files.get',
      'files.instruments',
      'reservations.book',
      'reservations.cancel',
      'reservations.forTool',
      'reservations.questions',
      'reservations.calendar',
      'reservations.mine',
      'reservations.targets',
    ]);
    // Likewise: calls for staff and admins, refused to everyone else.
    const forStaff = new Set([
      'usage.recent',
      'usage.tools',
      'usage.validateServer',
      'usage.clearShutdownServer',
    ]);
    const failures: string[] = [];
    let call = 0;
    for (const name of Object.keys(serverApiSchemas)) {
      for (const who of WHO) {
        const res = await app.inject({
          method: 'POST',
          url: `/rpc/${name}`,
          headers: auth[who] ? { authorization: auth[who] } : {},
          // Arguments that fit no call: an allowed caller gets 400, never a change.
          payload: { 'not an argument': true },
          remoteAddress: `10.1.${Math.floor(call / 250)}.${(call++ % 250) + 1}`,
        });
        const want =
          who === 'nobody' || who === 'station'
            ? 401
            : who === 'admin' || forEveryone.has(name) || (who === 'staff' && forStaff.has(name))
              ? 400
              : 403;
        if (res.statusCode !== want) {
          failures.push(
            `${who} ${name}: ${res.statusCode} (want ${want}) ${res.body.slice(0, 120)}`,
          );
        }
      }
    }
    expect(failures).toEqual([]);
  });

  it('lets a regular user see only granted files and transfers, counted only within the grant', async () => {
    const as = async (who: Who, url: string) =>
      (await app.inject({ method: 'GET', url, headers: { authorization: auth[who]! } })).json<{
        total: number;
      }>();
    for (const url of ['/api/files', '/api/transfers', '/api/files?instrument_id=1']) {
      expect((await as('granted', url)).total, url).toBe(1);
      expect((await as('stranger', url)).total, url).toBe(0);
      expect((await as('admin', url)).total, url).toBe(1);
    }
  });
});
