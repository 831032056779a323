/**
 * A server restored from a backup made before a station uploaded files into one of its `server`
 * storage locations: the station sends its kept records again (sync/resend.ts), and the server
 * refuses their completed transfers for lacking the uploads (upload_missing). The station then
 * sends those files again, and the refused transfers are taken once the server has the uploads:
 * `skipped` where the file is still in place, a new upload where the restore lost it too. A real
 * `labstation serve` and `labstation station` on loopback; the backup a copy of the stopped
 * server's data dir.
 */
import {
  cpSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { facilityBundle } from '../fixtures/facility.js';
import {
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
let store: string;
let server: ServerProcess | undefined;
let serverDb: Database.Database | undefined;
let station: StationProcess | undefined;

interface SyncStatus {
  online: boolean;
  waiting: number;
  refused: number;
  refusedReason: string | null;
}

async function startTheServer(env: NodeJS.ProcessEnv = {}): Promise<void> {
  server = await startServer(serverDir, env);
  serverDb = new Database(join(serverDir, 'labstation.db'), { readonly: true });
}

async function stopTheServer(): Promise<void> {
  serverDb?.close();
  serverDb = undefined;
  await server?.stop();
  server = undefined;
}

/** The station started on `dir`, pointed at the server's address of now (a new port). */
async function startTheStation(dir: string, args: string[] = []): Promise<StationProcess> {
  if (!args.length) {
    const db = new Database(join(dir, 'labstation.db'));
    db.prepare("UPDATE settings SET value = ? WHERE key = 'sync.server'").run(
      JSON.stringify(server!.url),
    );
    db.close();
  }
  // A refusal the station could not act on at once (its harvest not started yet) comes back
  // in seconds, not ten minutes.
  station = await startStation(
    dir,
    { LABSTATION_SYNC_BACKOFF_CAP_MS: '1000', LABSTATION_SYNC_HOLD_MS: '2000' },
    args,
  );
  return station;
}

async function stopTheStation(): Promise<void> {
  await station?.stop();
  station = undefined;
}

/** Waits until the station has pushed everything it recorded, none of it refused. */
async function pushed(st: StationProcess): Promise<SyncStatus> {
  return waitFor(
    'the outbox sent',
    async () => {
      const s = (await st.rpc('sync.status', {})).body as SyncStatus;
      return s.online && s.waiting === 0 ? s : undefined;
    },
    40_000,
  );
}

/** The server's transfers of a file, by its name: uuid and status, in the order stored. */
function serverTransfers(filename: string): { uuid: string; status: string }[] {
  return serverDb!
    .prepare(
      `SELECT t.uuid, t.status FROM harvest_transfers t JOIN harvest_files f ON f.id = t.file_id
       WHERE f.filename = ? ORDER BY t.id`,
    )
    .all(filename) as { uuid: string; status: string }[];
}

beforeAll(async () => {
  root = tempDir('labstation-server-restored-upload-');
  serverDir = join(root, 'server');
  store = join(root, 'server-store');
  mkdirSync(store);
  const bundle = facilityBundle();
  delete bundle.station;
  const imported = await runCli(['import', '--data', serverDir, writeJson(root, 'b.json', bundle)]);
  expect(imported.code, imported.stderr).toBe(0);
  await startTheServer({
    LABSTATION_ADMIN_EMAIL: ADMIN.email,
    LABSTATION_ADMIN_PASSWORD: ADMIN.password,
  });
}, 60_000);

afterAll(async () => {
  await stopTheStation();
  await stopTheServer();
});

it('a server restored from a backup made before a station uploaded files gets them again, and takes their transfers as they were: nothing sent where the file is still in place, the file where it was lost', async () => {
  const watch = join(root, 'acquisition');
  mkdirSync(watch);
  const jwt = await loginJwt(server!.url, ADMIN);
  const api = creator(server!.url, jwt);
  const account = await api('/api/service-accounts', { name: 'sem-pc' });
  const location = await api('/api/storage-locations', {
    name: 'archive',
    type: 'server',
    base_path: store,
  });
  await api('/api/instruments', {
    name: 'SEM camera',
    tool_id: serverDb!.prepare("SELECT id FROM tools WHERE name = 'SEM'").pluck().get(),
    service_account_id: account.id,
    watch: [{ path: watch }],
    stability_seconds: 1,
    storage_location_id: location.id,
    destination_template: '{relative_path}',
  });

  // The station uploads a file and pushes its records, then the server's backup is taken.
  const dir = join(root, 'station');
  let st = await startTheStation(dir, ['--server', server!.url, '--key', String(account.key)]);
  writeFileSync(join(watch, 'before.tif'), 'in the backup');
  await waitFor('before.tif on the server', () =>
    serverTransfers('before.tif').length === 1 ? true : undefined,
  );
  await pushed(st);
  await stopTheStation();
  await stopTheServer();
  const backup = join(root, 'server-backup');
  cpSync(serverDir, backup, { recursive: true });

  // After the backup: two files are uploaded into the server's location, and their records
  // reach the server.
  await startTheServer();
  st = await startTheStation(dir);
  writeFileSync(join(watch, 'kept.tif'), 'still in the store after the restore');
  writeFileSync(join(watch, 'lost.tif'), 'lost with the server disk');
  writeFileSync(join(watch, 'changed.tif'), 'as it was transferred');
  // A time in whole seconds, which the rewrite below can give it again exactly.
  const written = new Date(Math.floor(Date.now() / 1000) * 1000 - 60_000);
  utimesSync(join(watch, 'changed.tif'), written, written);
  for (const name of ['kept.tif', 'lost.tif', 'changed.tif']) {
    await waitFor(`${name} on the server`, () =>
      serverTransfers(name).length === 1 ? true : undefined,
    );
  }
  await pushed(st);
  const first = {
    kept: serverTransfers('kept.tif')[0],
    lost: serverTransfers('lost.tif')[0],
  };
  expect(first.kept.status).toBe('completed');
  expect(first.lost.status).toBe('completed');
  await stopTheStation();
  await stopTheServer();

  // The server's data dir comes back from the backup: no record of the files, nor of their
  // uploads. Its store keeps kept.tif and has lost lost.tif.
  rmSync(serverDir, { recursive: true });
  cpSync(backup, serverDir, { recursive: true });
  rmSync(join(store, 'lost.tif'));
  // changed.tif was rewritten since, with its size and time as they were (no walk sees it).
  const changed = join(watch, 'changed.tif');
  writeFileSync(changed, 'rewritten, same size!');
  utimesSync(changed, written, written);
  expect(statSync(changed).mtime).toEqual(written);
  await startTheServer();
  expect(serverTransfers('kept.tif')).toEqual([]);

  // The station sends its kept records again; the server refuses the completed transfers for
  // lacking their uploads; the station uploads the files again, to where the records say, and
  // then the transfers are taken as they were.
  st = await startTheStation(dir);
  for (const name of ['kept.tif', 'lost.tif']) {
    await waitFor(
      `the transfer of ${name} on the server`,
      () => (serverTransfers(name).length === 1 ? true : undefined),
      40_000,
    );
  }
  // changed.tif cannot be sent as its record says: it stays set aside, and nothing of its new
  // content reaches the server.
  await waitFor(
    'the outbox sent but changed.tif',
    async () => {
      const s = (await st.rpc('sync.status', {})).body as SyncStatus;
      return s.online && s.waiting === 1 && s.refused === 1 ? s : undefined;
    },
    40_000,
  );
  expect(st.stderr()).toContain('the file was sent again');
  expect(st.stderr()).toMatch(/not [0-9a-f]{32} as transferred/);
  expect(serverTransfers('changed.tif')).toEqual([]);
  expect(readFileSync(join(store, 'changed.tif'), 'utf8')).toBe('as it was transferred');
  expect(serverTransfers('kept.tif')).toEqual([first.kept]);
  expect(serverTransfers('lost.tif')).toEqual([first.lost]);
  // The server holds the uploads now: nothing sent where the file was still in place, the
  // file itself where it was lost; no second copy of either.
  const uploads = serverDb!
    .prepare('SELECT final_path, state FROM harvest_uploads ORDER BY final_path')
    .all();
  expect(uploads).toEqual([
    { final_path: 'before.tif', state: 'completed' },
    { final_path: 'kept.tif', state: 'skipped' },
    { final_path: 'lost.tif', state: 'completed' },
  ]);
  expect(
    readdirSync(store)
      .filter((name) => !name.startsWith('.'))
      .sort(),
  ).toEqual(['before.tif', 'changed.tif', 'kept.tif', 'lost.tif']);
  expect(readFileSync(join(store, 'lost.tif'), 'utf8')).toBe('lost with the server disk');
  // On the station: each file done, one record each.
  const files = JSON.parse((await runCli(['files', '--data', dir, '--json'])).stdout) as {
    filename: string;
    state: string;
  }[];
  expect(files.map((f) => [f.filename, f.state]).sort()).toEqual([
    ['before.tif', 'done'],
    ['changed.tif', 'done'],
    ['kept.tif', 'done'],
    ['lost.tif', 'done'],
  ]);
  await stopTheStation();
}, 180_000);
