/**
 * An instrument given a disabled storage location, over HTTP as an admin's client sends it to a
 * `labstation serve` on loopback: its station would fail every file it finds there ("storage
 * location ... is disabled", not retried by itself), so an enabled instrument with a service
 * account is refused it (422 naming storage_location_id), as it is refused no location at all;
 * a disabled instrument, or one no station runs, may wait for the location. From the other
 * side, the location is not disabled under the enabled instruments that stations run on it.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { facilityBundle } from '../fixtures/facility.js';
import {
  loginJwt,
  runCli,
  serverRequest,
  startServer,
  tempDir,
  writeJson,
  type HttpReply,
  type ServerProcess,
} from './helpers.js';

const ADMIN = { email: 'admin@example.org', password: 'admin password 1' };

let server: ServerProcess;
let adminJwt: string;
let semId: number;
let accountId: number;
let disabledId: number;
let enabledId: number;

const api = (method: string, path: string, body?: unknown): Promise<HttpReply> =>
  serverRequest(server.url, adminJwt, method, path, body);

async function made(path: string, body: unknown): Promise<number> {
  const res = await api('POST', path, body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return Number(res.body.id);
}

/** The 422 an enabled instrument with a service account gets for the disabled location. */
function refusedForDisabled(res: HttpReply): void {
  expect(res.status, JSON.stringify(res.body)).toBe(422);
  expect(res.body.detail).toEqual([
    {
      loc: ['body', 'storage_location_id'],
      msg:
        `storage location ${disabledId} (off-store) is disabled; an enabled instrument with a ` +
        'service account needs an enabled one, or every file its station finds fails there',
      type: 'needed_by_station',
    },
  ]);
}

beforeAll(async () => {
  const root = tempDir('labstation-instrument-location-');
  const serverDir = join(root, 'server');
  const bundle = facilityBundle();
  delete bundle.station;
  const imported = await runCli(['import', '--data', serverDir, writeJson(root, 'b.json', bundle)]);
  expect(imported.stderr).toBe('');
  server = await startServer(serverDir, {
    LABSTATION_ADMIN_EMAIL: ADMIN.email,
    LABSTATION_ADMIN_PASSWORD: ADMIN.password,
  });
  adminJwt = await loginJwt(server.url, ADMIN);
  const db = new Database(join(serverDir, 'labstation.db'), { readonly: true });
  semId = db.prepare("SELECT id FROM tools WHERE name = 'SEM'").pluck().get() as number;
  db.close();
  accountId = await made('/api/service-accounts', { name: 'sem-pc' });
  disabledId = await made('/api/storage-locations', {
    name: 'off-store',
    type: 'local',
    base_path: '/mnt/off',
    enabled: false,
  });
  enabledId = await made('/api/storage-locations', {
    name: 'on-store',
    type: 'local',
    base_path: '/mnt/on',
  });
}, 60_000);

afterAll(async () => {
  await server?.stop();
});

describe('an instrument given a disabled storage location', () => {
  const instrument = (name: string, fields: Record<string, unknown> = {}) => ({
    name,
    tool_id: semId,
    service_account_id: accountId,
    watch: [{ path: '/data' }],
    storage_location_id: disabledId,
    ...fields,
  });

  it('created enabled with a service account: 422 naming storage_location_id, nothing made', async () => {
    refusedForDisabled(await api('POST', '/api/instruments', instrument('refused-cam')));
    const list = await api('GET', '/api/instruments?page=1&size=100');
    const names = (list.body.items as { name: string }[]).map((i) => i.name);
    expect(names).not.toContain('refused-cam');
  });

  it('updated to use it, or enabled on it: 422 naming storage_location_id, nothing changed', async () => {
    const id = await made(
      '/api/instruments',
      instrument('moved-cam', { storage_location_id: enabledId }),
    );
    refusedForDisabled(
      await api('PATCH', `/api/instruments/${id}`, { storage_location_id: disabledId }),
    );
    expect((await api('GET', `/api/instruments/${id}`)).body).toMatchObject({
      storage_location_id: enabledId,
      enabled: true,
    });

    // Disabled, it may wait for the location; enabled there, it is refused again.
    const waiting = await api('PATCH', `/api/instruments/${id}`, {
      storage_location_id: disabledId,
      enabled: false,
    });
    expect(waiting.status, JSON.stringify(waiting.body)).toBe(200);
    refusedForDisabled(await api('PATCH', `/api/instruments/${id}`, { enabled: true }));
    expect((await api('GET', `/api/instruments/${id}`)).body).toMatchObject({
      storage_location_id: disabledId,
      enabled: false,
    });
  });

  it('disabled, or run by no station, it may wait; once the location is enabled it runs', async () => {
    const off = await made('/api/instruments', instrument('off-cam', { enabled: false }));
    const unrun = await made(
      '/api/instruments',
      instrument('unrun-cam', { service_account_id: null }),
    );
    expect((await api('GET', `/api/instruments/${unrun}`)).body).toMatchObject({
      storage_location_id: disabledId,
      enabled: true,
    });
    expect(
      (await api('PATCH', `/api/storage-locations/${disabledId}`, { enabled: true })).status,
    ).toBe(200);
    try {
      const on = await api('PATCH', `/api/instruments/${off}`, { enabled: true });
      expect(on.status, JSON.stringify(on.body)).toBe(200);
      expect(on.body).toMatchObject({ storage_location_id: disabledId, enabled: true });
    } finally {
      await api('PATCH', `/api/instruments/${off}`, { enabled: false });
      const back = await api('PATCH', `/api/storage-locations/${disabledId}`, { enabled: false });
      expect(back.status, JSON.stringify(back.body)).toBe(200);
    }
  });
});

describe('a storage location disabled under the instruments that use it', () => {
  // Mutation: the location's save without the check (200; its instruments' stations then failed
  // every file there, and a save of any other field of theirs was refused over the location).
  it('is refused (409, naming them) while enabled instruments with a service account use it', async () => {
    const store = await made('/api/storage-locations', {
      name: 'busy-store',
      type: 'local',
      base_path: '/mnt/busy',
    });
    const fields = {
      tool_id: semId,
      watch: [{ path: '/data' }],
      storage_location_id: store,
    };
    const cams = [
      await made('/api/instruments', { name: 'z-cam', service_account_id: accountId, ...fields }),
      await made('/api/instruments', { name: 'a-cam', service_account_id: accountId, ...fields }),
    ];
    // Neither a disabled instrument nor one no station runs is in the way.
    await made('/api/instruments', {
      name: 'idle-cam',
      service_account_id: accountId,
      enabled: false,
      ...fields,
    });
    await made('/api/instruments', { name: 'free-cam', service_account_id: null, ...fields });

    const refused = await api('PATCH', `/api/storage-locations/${store}`, { enabled: false });
    expect(refused.status, JSON.stringify(refused.body)).toBe(409);
    expect(refused.body).toEqual({
      detail:
        `storage location ${store} is used by enabled instruments a-cam, z-cam, which their ` +
        'stations run: every file found there would fail; move them to another location or ' +
        'disable them first',
    });
    expect((await api('GET', `/api/storage-locations/${store}`)).body).toMatchObject({
      enabled: true,
    });

    // One moved, one disabled: the location may be disabled now.
    const moved = await api('PATCH', `/api/instruments/${cams[0]}`, {
      storage_location_id: enabledId,
    });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    const oneLeft = await api('PATCH', `/api/storage-locations/${store}`, { enabled: false });
    expect(oneLeft.body.detail).toBe(
      `storage location ${store} is used by enabled instrument a-cam, which its station runs: ` +
        'every file found there would fail; move it to another location or disable it first',
    );
    expect((await api('PATCH', `/api/instruments/${cams[1]}`, { enabled: false })).status).toBe(
      200,
    );
    const done = await api('PATCH', `/api/storage-locations/${store}`, { enabled: false });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body).toMatchObject({ enabled: false });
  });
});
