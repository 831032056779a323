/**
 * A station's data dir restored from a backup (sync/restored.ts): the files it harvested after
 * the backup keep their records and ARKs (fetched from the server before the harvest looks at
 * them), instead of being recorded again under new ones. A real `labstation serve` and
 * `labstation station` on loopback, the backup a copy of the stopped station's data dir.
 */
import { cpSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { facilityBundle } from '../fixtures/facility.js';
import {
  createStationKey,
  creator,
  loginJwt,
  runCli,
  startServer,
  startStation,
  tempDir,
  waitFor,
  writeJson,
  type ServerProcess,
  type StationProcess,
} from './helpers.js';

const ADMIN = { email: 'admin@example.org', password: 'admin password 1' };

let root: string;
let serverDir: string;
let server: ServerProcess;
let serverDb: Database.Database;
let station: StationProcess | undefined;

interface FileRecord {
  uuid: string;
  filename: string;
  persistent_id: string;
  state: string;
}

async function stationFiles(dir: string): Promise<FileRecord[]> {
  const out = await runCli(['files', '--data', dir, '--json']);
  expect(out.code, out.stderr).toBe(0);
  return JSON.parse(out.stdout) as FileRecord[];
}

function serverFiles(): { uuid: string; filename: string; persistent_id: string }[] {
  return serverDb
    .prepare('SELECT uuid, filename, persistent_id FROM harvest_files ORDER BY filename, id')
    .all() as { uuid: string; filename: string; persistent_id: string }[];
}

async function start(
  dir: string,
  args: string[] = [],
  env: NodeJS.ProcessEnv = {},
): Promise<StationProcess> {
  station = await startStation(dir, { LABSTATION_SYNC_BACKOFF_CAP_MS: '1000', ...env }, args);
  return station;
}

async function stop(): Promise<void> {
  await station?.stop();
  station = undefined;
}

/** Waits until the station has pushed everything it recorded. */
async function pushed(st: StationProcess): Promise<void> {
  await waitFor('the outbox sent', async () => {
    const s = (await st.rpc('sync.status', {})).body as { online: boolean; waiting: number };
    return s.online && s.waiting === 0 ? true : undefined;
  });
}

beforeAll(async () => {
  root = tempDir('labstation-restored-');
  serverDir = join(root, 'server');
  const bundle = facilityBundle();
  delete bundle.station;
  const imported = await runCli(['import', '--data', serverDir, writeJson(root, 'b.json', bundle)]);
  expect(imported.code, imported.stderr).toBe(0);
  server = await startServer(serverDir, {
    LABSTATION_ADMIN_EMAIL: ADMIN.email,
    LABSTATION_ADMIN_PASSWORD: ADMIN.password,
  });
  serverDb = new Database(join(serverDir, 'labstation.db'), { readonly: true });
}, 60_000);

afterAll(async () => {
  await stop();
  serverDb?.close();
  await server?.stop();
});

describe('a station data dir restored from a backup', () => {
  it('keeps the records and ARKs of the files it harvested after the backup; what it records next is new', async () => {
    const watch = join(root, 'acquisition');
    const archive = join(root, 'archive');
    mkdirSync(watch);
    mkdirSync(archive);
    const jwt = await loginJwt(server.url, ADMIN);
    const api = creator(server.url, jwt);
    const account = await api('/api/service-accounts', { name: 'sem-pc' });
    const location = await api('/api/storage-locations', {
      name: 'archive',
      type: 'local',
      base_path: archive,
    });
    await api('/api/instruments', {
      name: 'SEM camera',
      tool_id: serverDb.prepare("SELECT id FROM tools WHERE name = 'SEM'").pluck().get(),
      service_account_id: account.id,
      watch: [{ path: watch }],
      stability_seconds: 1,
      storage_location_id: location.id,
      destination_template: '{relative_path}',
    });

    const dir = join(root, 'station');
    let st = await start(dir, ['--server', server.url, '--key', String(account.key)]);
    writeFileSync(join(watch, 'a.tif'), 'before the backup');
    await waitFor('a.tif on the server', () => (serverFiles().length === 1 ? true : undefined));
    await pushed(st);
    await stop();
    const backup = join(root, 'backup');
    cpSync(dir, backup, { recursive: true });

    // After the backup: b.tif is harvested and reaches the server.
    st = await start(dir);
    writeFileSync(join(watch, 'b.tif'), 'after the backup');
    await waitFor('b.tif on the server', () => (serverFiles().length === 2 ? true : undefined));
    await pushed(st);
    expect(st.stderr()).not.toContain('restored from a backup');
    await stop();
    const before = serverFiles();
    const ackedThrough = serverDb
      .prepare("SELECT install_acked_through FROM stations WHERE name = 'sem-pc'")
      .pluck()
      .get() as number;
    expect(ackedThrough).toBeGreaterThan(0);

    // The disk is lost; the data dir comes back from the backup, without b.tif's record.
    rmSync(dir, { recursive: true });
    cpSync(backup, dir, { recursive: true });
    expect((await stationFiles(dir)).map((f) => f.filename)).toEqual(['a.tif']);

    st = await start(dir);
    const b = await waitFor('b.tif known again', async () =>
      (await stationFiles(dir)).find((f) => f.filename === 'b.tif' && f.state === 'done'),
    );
    expect(st.stderr()).toContain('restored from a backup');
    // The server's record, its ARK: not a second one.
    const serverB = before.find((f) => f.filename === 'b.tif')!;
    expect(b).toMatchObject({ uuid: serverB.uuid, persistent_id: serverB.persistent_id });
    expect(serverFiles()).toEqual(before);

    // What the restored station records from now on is new, numbered past what it sent.
    writeFileSync(join(watch, 'c.tif'), 'after the restore');
    await waitFor('c.tif on the server', () => (serverFiles().length === 3 ? true : undefined));
    await pushed(st);
    expect(serverFiles().filter((f) => f.filename !== 'c.tif')).toEqual(before);
    expect(
      serverDb
        .prepare("SELECT install_acked_through FROM stations WHERE name = 'sem-pc'")
        .pluck()
        .get(),
    ).toBeGreaterThan(ackedThrough);
    // One record per file on the station as well.
    expect((await stationFiles(dir)).map((f) => f.filename).sort()).toEqual([
      'a.tif',
      'b.tif',
      'c.tif',
    ]);
    await stop();
  }, 120_000);

  it('restored onto another machine: the data dir names its id there before, and keeps the ARKs as well', async () => {
    const dir = join(root, 'station');
    const watch = join(root, 'acquisition');
    const backup = join(root, 'backup-2');
    cpSync(dir, backup, { recursive: true });
    let st = await start(dir);
    writeFileSync(join(watch, 'd.tif'), 'after the second backup');
    await waitFor('d.tif on the server', () => (serverFiles().length === 4 ? true : undefined));
    await pushed(st);
    await stop();
    const before = serverFiles();

    // The backup goes onto a new PC: its record says it was made on another host.
    rmSync(dir, { recursive: true });
    cpSync(backup, dir, { recursive: true });
    const db = new Database(join(dir, 'labstation.db'));
    const install = JSON.parse(
      db.prepare("SELECT value FROM settings WHERE key = 'sync.install'").pluck().get() as string,
    ) as { id: string; host: string };
    db.prepare("UPDATE settings SET value = ? WHERE key = 'sync.install'").run(
      JSON.stringify({ ...install, host: 'the-old-pc' }),
    );
    db.close();

    st = await start(dir);
    const d = await waitFor(
      'd.tif known again',
      async () =>
        (await stationFiles(dir)).find((f) => f.filename === 'd.tif' && f.state === 'done'),
      30_000,
    );
    expect(st.stderr()).toContain('restored from a backup');
    const serverD = before.find((f) => f.filename === 'd.tif')!;
    expect(d).toMatchObject({ uuid: serverD.uuid, persistent_id: serverD.persistent_id });
    expect(serverFiles()).toEqual(before);
    // A new id, which names the one before: it took the key from that one at once.
    const now = new Database(join(dir, 'labstation.db'), { readonly: true });
    const moved = JSON.parse(
      now.prepare("SELECT value FROM settings WHERE key = 'sync.install'").pluck().get() as string,
    ) as { id: string; previous: string };
    now.close();
    expect(moved.previous).toBe(install.id);
    expect(moved.id).not.toBe(install.id);
    expect(
      serverDb.prepare("SELECT install_id FROM stations WHERE name = 'sem-pc'").pluck().get(),
    ).toBe(moved.id);
  }, 120_000);
});

describe('a server restored from a backup', () => {
  /** The server started again on the same data dir (a new port), and the station told so. */
  async function restartServer(stationDir: string): Promise<void> {
    serverDb.close();
    server = await startServer(serverDir);
    serverDb = new Database(join(serverDir, 'labstation.db'), { readonly: true });
    const db = new Database(join(stationDir, 'labstation.db'));
    db.prepare("UPDATE settings SET value = ? WHERE key = 'sync.server'").run(
      JSON.stringify(server.url),
    );
    db.close();
  }

  // Goes on from the station the tests above set up (its data dir, key and instrument).
  it('gets again from the station the records it took after the backup', async () => {
    const dir = join(root, 'station');
    const watch = join(root, 'acquisition');
    await stop();
    let st = await start(dir);
    await pushed(st);
    await stop();
    await server.stop();
    const backup = join(root, 'server-backup');
    cpSync(serverDir, backup, { recursive: true });

    // After the server's backup: e.tif is harvested and reaches the server.
    await restartServer(dir);
    st = await start(dir);
    writeFileSync(join(watch, 'e.tif'), 'after the server backup');
    const e = await waitFor('e.tif done', async () =>
      (await stationFiles(dir)).find((f) => f.filename === 'e.tif' && f.state === 'done'),
    );
    await waitFor('e.tif on the server', () =>
      serverFiles().some((f) => f.filename === 'e.tif') ? true : undefined,
    );
    await pushed(st);
    // A server started again as it was has lost nothing: nothing is sent again.
    expect(st.stderr()).not.toContain('they are sent again');
    await stop();
    const before = serverFiles();
    await server.stop();

    // The server's disk is lost; its data dir comes back from the backup, without e.tif.
    serverDb.close();
    rmSync(serverDir, { recursive: true });
    cpSync(backup, serverDir, { recursive: true });
    await restartServer(dir);
    expect(serverFiles().some((f) => f.filename === 'e.tif')).toBe(false);

    // The station comes back with a record waiting (a file harvested while it did not sync),
    // and its first push reaches the restored server before its first pull: the push lifts the
    // server's count over the ids it lost, so the push's own answer must tell.
    writeFileSync(join(watch, 'f.tif'), 'after the server restore');
    expect((await runCli(['harvest', '--data', dir, '--once'])).code).toBe(0);
    st = await start(dir, [], { LABSTATION_INJECT: 'sync.late-first-pull' });
    await waitFor('f.tif on the server', () =>
      serverFiles().some((f) => f.filename === 'f.tif') ? true : undefined,
    );
    await waitFor('e.tif on the server again', () =>
      serverFiles().some((f) => f.filename === 'e.tif') ? true : undefined,
    );
    await pushed(st);
    expect(st.stderr()).toContain('they are sent again');
    // The same record, its ARK, and its transfer: nothing twice, nothing missing.
    expect(serverFiles().filter((f) => f.filename !== 'f.tif')).toEqual(before);
    expect(serverFiles().find((f) => f.filename === 'e.tif')).toMatchObject({
      uuid: e.uuid,
      persistent_id: e.persistent_id,
    });
    const transfers = serverDb
      .prepare(
        `SELECT t.status FROM harvest_transfers t JOIN harvest_files f ON f.id = t.file_id
         WHERE f.uuid = ?`,
      )
      .pluck()
      .all(e.uuid);
    expect(transfers).toEqual(['completed']);
    await stop();
  }, 120_000);
});

describe('a station data dir restored from a backup, its instrument configured on the station', () => {
  it('keeps the records and ARKs of the files it harvested after the backup', async () => {
    const watch = join(root, 'local-acquisition');
    const archive = join(root, 'local-archive');
    mkdirSync(watch);
    mkdirSync(archive);
    const key = await createStationKey(serverDir, 'sem-local-pc', 'SEM');
    const dir = join(root, 'station-local');
    const bundle = {
      tools: [{ name: 'SEM' }],
      station: { tool: 'SEM' },
      storage_locations: [{ name: 'local archive', type: 'local', base_path: archive }],
      instruments: [
        {
          name: 'SEM local camera',
          tool: 'SEM',
          watch: [{ path: watch }],
          stability_seconds: 1,
          storage_location: 'local archive',
          destination_template: '{relative_path}',
        },
      ],
    };
    const imported = await runCli(['import', '--data', dir, writeJson(root, 'local.json', bundle)]);
    expect(imported.code, imported.stderr).toBe(0);
    const named = (name: string) => () =>
      serverFiles().some((f) => f.filename === name) ? true : undefined;

    let st = await start(dir, ['--server', server.url, '--key', key]);
    writeFileSync(join(watch, 'l1.tif'), 'before the backup');
    await waitFor('l1.tif on the server', named('l1.tif'));
    await pushed(st);
    await stop();
    const backup = join(root, 'backup-local');
    cpSync(dir, backup, { recursive: true });

    st = await start(dir);
    writeFileSync(join(watch, 'l2.tif'), 'after the backup');
    await waitFor('l2.tif on the server', named('l2.tif'));
    await pushed(st);
    await stop();
    const before = serverFiles();

    rmSync(dir, { recursive: true });
    cpSync(backup, dir, { recursive: true });
    st = await start(dir);
    const l2 = await waitFor('l2.tif known again', async () =>
      (await stationFiles(dir)).find((r) => r.filename === 'l2.tif' && r.state === 'done'),
    );
    expect(st.stderr()).toContain('restored from a backup');
    const serverL2 = before.find((r) => r.filename === 'l2.tif')!;
    expect(l2).toMatchObject({ uuid: serverL2.uuid, persistent_id: serverL2.persistent_id });
    // Not copied again beside it, nor recorded twice on the server.
    expect(readdirSync(archive).sort()).toEqual(['l1.tif', 'l2.tif']);
    await pushed(st);
    expect(serverFiles()).toEqual(before);
    await stop();

    // Restored once more, its instrument now run by another station on the server (an admin
    // gave it to one): no history of it is this station's to wait for; it harvests on.
    rmSync(dir, { recursive: true });
    cpSync(backup, dir, { recursive: true });
    await createStationKey(serverDir, 'sem-other-pc', 'SEM');
    const writable = new Database(join(serverDir, 'labstation.db'));
    try {
      writable.pragma('busy_timeout = 5000');
      writable
        .prepare(
          `UPDATE instruments SET station_id = (SELECT id FROM stations WHERE name = 'sem-other-pc')
           WHERE name = 'SEM local camera'`,
        )
        .run();
    } finally {
      writable.close();
    }
    st = await start(dir);
    writeFileSync(join(watch, 'l3.tif'), 'after the second restore');
    await waitFor('l3.tif harvested', async () =>
      (await stationFiles(dir)).find((r) => r.filename === 'l3.tif' && r.state === 'done'),
    );
    expect(st.stderr()).toContain('the server runs this instrument on another station');
    await stop();
  }, 120_000);
});
