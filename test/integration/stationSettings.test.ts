/**
 * A station's link to its server, set by staff in the station's settings (`settings.*` calls on
 * the station's HTTP carrier), kept in the data dir across restarts.
 */
import { join } from 'node:path';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newUuid } from '../../electron/core/util/ids.js';
import { forwardTo, startHttpProxy } from './httpForward.js';
import { facilityBundle, goodPreAnswers } from '../fixtures/facility.js';
import {
  runCli,
  startServer,
  startStation,
  tempDir,
  writeJson,
  createStationKey,
  type ServerProcess,
  type StationProcess,
  waitFor,
} from './helpers.js';

const FAST = { LABSTATION_SYNC_BACKOFF_CAP_MS: '1000' };
let server: ServerProcess;
let serverDb: Database.Database;
let key: string;
let afmKey: string;
let serverDir: string;
let stationDir: string;
let station: StationProcess | undefined;

async function call(
  name: string,
  args: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await station!.rpc(name, args);
  return { status: res.status, body: res.body as Record<string, unknown> };
}

beforeAll(async () => {
  serverDir = join(tempDir(), 'server');
  const bundle = facilityBundle();
  delete bundle.station;
  expect(
    (await runCli(['import', '--data', serverDir, writeJson(tempDir(), 's.json', bundle)])).code,
  ).toBe(0);
  key = await createStationKey(serverDir, 'sem', 'SEM');
  // Another station, of the AFM, that runs an instrument already.
  afmKey = await createStationKey(serverDir, 'afm', 'AFM');
  const writable = new Database(join(serverDir, 'labstation.db'));
  try {
    const at = new Date().toISOString();
    const storage = writable
      .prepare(
        `INSERT INTO storage_locations (uuid, name, type, base_path, created_at, updated_at)
         VALUES (?, 'afm-store', 'local', ?, ?, ?)`,
      )
      .run(newUuid(), tempDir(), at, at).lastInsertRowid;
    writable
      .prepare(
        `INSERT INTO instruments (uuid, name, tool_id, station_id, watch, storage_location_id,
           destination_template, created_at, updated_at)
         VALUES (?, 'afm-camera', (SELECT id FROM tools WHERE name = 'AFM'),
           (SELECT id FROM stations WHERE name = 'afm'), ?, ?, '{relative_path}', ?, ?)`,
      )
      .run(
        newUuid(),
        JSON.stringify([{ path: tempDir(), include: [], exclude: [] }]),
        storage,
        at,
        at,
      );
  } finally {
    writable.close();
  }
  server = await startServer(serverDir);
  serverDb = new Database(join(serverDir, 'labstation.db'), { readonly: true });

  // A station that ran standalone until now.
  stationDir = join(tempDir(), 'station');
  expect(
    (
      await runCli([
        'import',
        '--data',
        stationDir,
        writeJson(tempDir(), 'b.json', facilityBundle()),
      ])
    ).code,
  ).toBe(0);
  station = await startStation(stationDir, FAST);
}, 30_000);

afterAll(async () => {
  await station?.stop();
  serverDb?.close();
  await server?.stop();
});

describe('station settings', () => {
  it('are for staff only', async () => {
    expect((await call('settings.get', {})).status).toBe(401);
    await call('session.logon', { login: 'alice', pin: '1234' });
    for (const [name, args] of [
      ['settings.get', {}],
      ['settings.setSync', { server: server.url, key }],
      ['settings.setDesktopMode', { mode: 'server' }],
    ] as const) {
      const res = await call(name, args);
      expect(res.status, name).toBe(403);
      expect(res.body.code).toBe('forbidden');
    }
    await call('session.logoff', {});
  });

  it('refuse a bad address or a key the server does not know, naming the field', async () => {
    await call('session.logon', { login: 'sam', pin: '9999' });
    expect((await call('settings.get', {})).body).toEqual({
      sync: { server: null, keySet: false },
      desktop: null,
    });
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ server: 'ftp://server/', key }, 'server', /http:\/\/ or https:\/\//],
      [{ server: 'not an address', key }, 'server', /must be an address/],
      [{ server: server.url }, 'key', /is needed/],
      [{ server: server.url, key: 'wrong-key' }, 'key', /does not accept this key/],
    ];
    // Something else answering there: a web server with a page for every path, or a redirect.
    // The page was taken, and the key sent to it at every retry.
    const others: Server[] = [];
    for (const answer of [
      (res: ServerResponse) => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<html><body>Welcome</body></html>');
      },
      (res: ServerResponse) => {
        res.writeHead(301, { location: 'https://example.org/' });
        res.end();
      },
    ]) {
      const other = createServer((_req, res) => answer(res));
      await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
      others.push(other);
      const at = `http://127.0.0.1:${(other.address() as AddressInfo).port}/`;
      cases.push([{ server: at, key }, 'server', /not a Labstation server|a redirect/]);
    }
    for (const [args, field, message] of cases) {
      const res = await call('settings.setSync', args);
      expect(res.status, JSON.stringify(args)).toBe(422);
      expect(res.body).toMatchObject({
        code: 'validation_failed',
        details: { problems: [{ path: [field] }] },
      });
      expect(res.body.message).toMatch(message);
    }
    for (const other of others) other.close();
    expect((await call('sync.status', {})).body).toMatchObject({ configured: false });
    const desktop = await call('settings.setDesktopMode', { mode: 'server' });
    expect(desktop.status).toBe(400);
    expect(desktop.body.message).toMatch(/only the desktop app/);
  });

  it('connect the station to its server, which then gets its usage; kept across a restart', async () => {
    const set = await call('settings.setSync', { server: server.url.replace(/\/$/, ''), key });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body).toMatchObject({ configured: true });
    expect((await call('settings.get', {})).body).toEqual({
      sync: { server: server.url, keySet: true },
      desktop: null,
    });
    await call('session.logoff', {});

    await call('session.logon', { login: 'alice', pin: '1234' });
    const enabled = await call('toolControl.enable', {
      tool: 'SEM',
      project: 'Cathodes',
      answers: goodPreAnswers,
    });
    expect(enabled.status).toBe(200);
    const uuid = (enabled.body.usage as { uuid: string }).uuid;
    await waitFor('the usage on the server', () =>
      serverDb.prepare('SELECT 1 FROM usage_events WHERE uuid = ?').get(uuid) ? true : undefined,
    );
    await call('toolControl.disable', { tool: 'SEM', answers: { problem: 'No' } });

    // Restarted without --server and --key: the data dir remembers them.
    await station!.stop();
    station = await startStation(stationDir, FAST);
    await waitFor('the restarted station online', async () => {
      const status = (await call('sync.status', {})).body;
      return status.configured === true && status.online === true ? true : undefined;
    });
    await call('session.logon', { login: 'sam', pin: '9999' });
    expect((await call('toolControl.validate', { usage: uuid })).status).toBe(200);
    await waitFor('the validation on the server', () =>
      serverDb.prepare('SELECT validated FROM usage_events WHERE uuid = ?').pluck().get(uuid) === 1
        ? true
        : undefined,
    );
    expect(
      serverDb.prepare('SELECT "end" FROM usage_events WHERE uuid = ?').pluck().get(uuid),
    ).not.toBeNull();

    // Another address needs its own key: the stored one is not sent elsewhere.
    const elsewhere = await call('settings.setSync', { server: 'http://127.0.0.1:9/' });
    expect(elsewhere.status).toBe(422);
    expect(elsewhere.body.message).toMatch(/^key: is needed/);
    expect((await call('settings.get', {})).body).toMatchObject({ sync: { server: server.url } });

    // Another station's key on the same server: that station's whole configuration comes,
    // its instrument made before among it. Only what changed since the last pull came before,
    // and the instrument never did.
    const switched = await call('settings.setSync', { server: server.url, key: afmKey });
    expect(switched.status, JSON.stringify(switched.body)).toBe(200);
    const stationDb = new Database(join(stationDir, 'labstation.db'), { readonly: true });
    try {
      await waitFor("the AFM station's instrument", () =>
        stationDb.prepare("SELECT 1 FROM instruments WHERE name = 'afm-camera'").get()
          ? true
          : undefined,
      );
    } finally {
      stationDb.close();
    }

    // Staff disconnect it: a standalone station again.
    const off = await call('settings.setSync', { server: '' });
    expect(off.body).toMatchObject({ configured: false });
    expect((await call('settings.get', {})).body).toMatchObject({
      sync: { server: null, keySet: false },
    });
  }, 60_000);
});

describe('--server and --key at each start', () => {
  // A service started with the README's command line, the link changed by staff in Settings
  // since: the same flags at the next start put the old link back, without a word, and the
  // records made meanwhile went to the old server.
  it('the same flags again leave the link staff set in Settings since, and say so', async () => {
    const dir = join(tempDir(), 'station-flags');
    expect(
      (await runCli(['import', '--data', dir, writeJson(tempDir(), 'b.json', facilityBundle())]))
        .code,
    ).toBe(0);
    const flagsKey = await createStationKey(serverDir, 'sem-flags', 'SEM');
    const flags = ['--server', server.url, '--key', flagsKey];
    let flagged = await startStation(dir, FAST, flags);
    try {
      await flagged.rpc('session.logon', { login: 'sam', pin: '9999' });
      expect((await flagged.rpc('settings.get', {})).body).toMatchObject({
        sync: { server: server.url, keySet: true },
      });
      // Staff disconnect it in Settings.
      expect((await flagged.rpc('settings.setSync', { server: '' })).status).toBe(200);
      await flagged.stop();

      flagged = await startStation(dir, FAST, flags);
      await flagged.rpc('session.logon', { login: 'sam', pin: '9999' });
      expect((await flagged.rpc('settings.get', {})).body).toMatchObject({
        sync: { server: null, keySet: false },
      });
      expect(flagged.stderr()).toContain('the link set in Settings since is kept');
    } finally {
      await flagged.stop();
    }
  }, 60_000);
});

describe('the last sync time', () => {
  // Kept in memory only: a station started again while its server was away said "never
  // synced", and so did the status line at every restart until the server answered.
  it('is kept across a restart, and forgotten with the link', async () => {
    const dir = join(tempDir(), 'station-last-sync');
    expect(
      (await runCli(['import', '--data', dir, writeJson(tempDir(), 'b.json', facilityBundle())]))
        .code,
    ).toBe(0);
    const linkKey = await createStationKey(serverDir, 'sem-last-sync', 'SEM');
    const proxy = await startHttpProxy(forwardTo(new URL(server.url)));
    let linked = await startStation(dir, FAST, ['--server', proxy.url, '--key', linkKey]);
    try {
      const status = async (): Promise<Record<string, unknown>> =>
        (await linked.rpc('sync.status', {})).body as Record<string, unknown>;
      const synced = await waitFor('a sync', async () => {
        const s = await status();
        return s.online === true && typeof s.lastSyncAt === 'string' ? s.lastSyncAt : undefined;
      });
      await linked.stop();
      // The server away (its proxy closed): started again, the station still knows when.
      await proxy.close();
      linked = await startStation(dir, FAST);
      const away = await status();
      expect(away.online).toBe(false);
      expect(away.lastSyncAt).toBe(synced);

      // Disconnected by staff: no last sync of a link it no longer has.
      await linked.rpc('session.logon', { login: 'sam', pin: '9999' });
      expect((await linked.rpc('settings.setSync', { server: '' })).status).toBe(200);
      expect((await status()).lastSyncAt).toBeNull();
    } finally {
      await linked.stop();
    }
  }, 60_000);
});
