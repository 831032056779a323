/**
 * Changes made through the harvest management API reach the station they concern: after each,
 * that station's delta since its cursor carries its harvest configuration again, as it is now
 * (a location or hook disabled, a hook deleted, an instrument or schedule moved away). Real
 * SQLite file and the real server app (app.inject); the delta read as the sync route reads it.
 */
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../../electron/core/db/open.js';
import { createApiToken } from '../../electron/core/server/auth.js';
import { createServerApp } from '../../electron/core/server/app.js';
import {
  facilityDelta,
  latestChange,
  type StationAccount,
} from '../../electron/core/server/sync/export.js';
import type { SyncHarvest } from '../../electron/core/sync/protocol.js';
import { createLogger } from '../../electron/core/util/log.js';
import { tempDir } from './helpers.js';

const T0 = '2026-01-01T00:00:00.000Z';
let db: Db;
let app: FastifyInstance;
let token = '';
const ids = { a: 0, b: 0, location: 0, instrumentA: 0, instrumentB: 0 };

async function api(method: 'POST' | 'PATCH' | 'DELETE', url: string, body?: object) {
  const res = await app.inject({
    method,
    url,
    headers: { authorization: `Token ${token}` },
    ...(body === undefined ? {} : { payload: body }),
  });
  expect(res.statusCode, res.body).toBeLessThan(300);
  return res.body ? res.json<{ id: number }>() : null;
}

const station = (id: number): StationAccount =>
  db.prepare('SELECT id, uuid, name, tool_id FROM stations WHERE id = ?').get(id) as StationAccount;

/** The harvest part of station `id`'s delta for the change `change` makes, or undefined. */
async function harvestAfter(id: number, change: () => Promise<unknown>) {
  const cursor = latestChange(db);
  await change();
  return facilityDelta(db, station(id), cursor).harvest;
}

const uuids = (list: { uuid: string }[] | undefined) => (list ?? []).map((r) => r.uuid);

beforeAll(async () => {
  db = openDatabase(join(tempDir('labstation-sync-harvest-notify-'), 'server.db'));
  db.exec(`INSERT INTO settings (key, value) VALUES ('mode', '"server"');
    INSERT INTO users (id, uuid, username, email, role, is_staff, created_at, updated_at)
      VALUES (1, 'u-admin', 'admin', 'admin@example.org', 'admin', 1, '${T0}', '${T0}');
    INSERT INTO tools (id, uuid, name, created_at, updated_at)
      VALUES (1, 't-sem', 'SEM', '${T0}', '${T0}');`);
  token = createApiToken(db, 1).token;
  app = await createServerApp({
    db,
    log: createLogger('silent'),
    jwtSecret: 'sync-harvest-notify-secret-0123456789',
    timeZone: () => 'UTC',
  });
  await app.ready();
  ids.a = (await api('POST', '/api/service-accounts', { name: 'sem-a' }))!.id;
  ids.b = (await api('POST', '/api/service-accounts', { name: 'sem-b' }))!.id;
  ids.location = (await api('POST', '/api/storage-locations', {
    name: 'store',
    type: 'local',
    base_path: '/mnt/store',
  }))!.id;
  const instrument = async (name: string, account: number) =>
    (await api('POST', '/api/instruments', {
      name,
      tool_id: 1,
      service_account_id: account,
      watch: [{ path: `/data/${name}` }],
      storage_location_id: ids.location,
    }))!.id;
  ids.instrumentA = await instrument('camera-a', ids.a);
  ids.instrumentB = await instrument('camera-b', ids.b);
});

afterAll(async () => {
  await app.close();
  db.close();
});

describe('a harvest change reaches the station it concerns', () => {
  it('a storage location disabled', async () => {
    // Not the one its instruments store in (refused while they run on it): one a redirect hook
    // of camera-a names, which its station is given too (the hook off: a location is not
    // turned off under an enabled redirect to it either).
    const spare = (await api('POST', '/api/storage-locations', {
      name: 'spare',
      type: 'local',
      base_path: '/mnt/spare',
    }))!.id;
    const hook = (await api('POST', '/api/hooks', {
      name: 'raw-aside',
      trigger: 'pre_transfer',
      kind: 'redirect',
      config: { glob: '*.raw', storage_location: 'spare' },
      instrument_id: ids.instrumentA,
      enabled: false,
    }))!.id;
    const harvest = await harvestAfter(ids.a, () =>
      api('PATCH', `/api/storage-locations/${spare}`, { enabled: false }),
    );
    expect(harvest?.storage_locations).toMatchObject([
      { name: 'store', enabled: true },
      { name: 'spare', enabled: false },
    ]);
    await api('DELETE', `/api/hooks/${hook}`);
    await api('DELETE', `/api/storage-locations/${spare}`);
  });

  it('a hook disabled, then deleted', async () => {
    const hook = (await api('POST', '/api/hooks', {
      name: 'info',
      trigger: 'post_transfer',
      kind: 'file_info',
      instrument_id: ids.instrumentA,
    }))!.id;
    const disabled = await harvestAfter(ids.a, () =>
      api('PATCH', `/api/hooks/${hook}`, { enabled: false }),
    );
    expect(disabled?.hooks).toMatchObject([{ name: 'info', enabled: false }]);
    const deleted = await harvestAfter(ids.a, () => api('DELETE', `/api/hooks/${hook}`));
    expect(deleted?.hooks).toEqual([]);
  });

  it('a schedule moved to an instrument of another station leaves the first', async () => {
    const schedule = (await api('POST', '/api/schedules', {
      instrument_id: ids.instrumentA,
      cron: '0 3 * * *',
    }))!.id;
    const left: SyncHarvest | undefined = await harvestAfter(ids.a, () =>
      api('PATCH', `/api/schedules/${schedule}`, { instrument_id: ids.instrumentB }),
    );
    expect(left).toBeDefined();
    expect(left?.schedules).toEqual([]);
    expect(facilityDelta(db, station(ids.b), 0).harvest?.schedules).toHaveLength(1);
  });

  it('an instrument given to another station leaves the first', async () => {
    const before = uuids(facilityDelta(db, station(ids.a), 0).harvest?.instruments);
    expect(before).toHaveLength(1);
    const left = await harvestAfter(ids.a, () =>
      api('PATCH', `/api/instruments/${ids.instrumentA}`, { service_account_id: ids.b }),
    );
    expect(left).toBeDefined();
    expect(uuids(left?.instruments)).toEqual([]);
  });
});
