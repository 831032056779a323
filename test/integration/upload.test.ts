/**
 * Uploads into a `server` storage location, end to end on loopback: the server app in this
 * process (real HTTP, a real SQLite file, real folders), stations harvesting through the real
 * `labstation harvest --once`, and a TCP proxy that cuts the connection or flips a bit on the
 * way to the server.
 */
import { createHash, randomUUID, randomBytes } from 'node:crypto';
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { createXXHash128 } from 'hash-wasm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../../electron/core/db/open.js';
import { hashFile } from '../../electron/core/harvest/copy.js';
import { uploadVerified } from '../../electron/core/harvest/upload.js';
import { openServerData } from '../../electron/core/runServer.js';
import { newStationKey } from '../../electron/core/server/admin/credentials.js';
import { createServerApp } from '../../electron/core/server/app.js';
import { serviceAccounts } from '../../electron/core/server/harvest/serviceAccounts.js';
import { refusalFor } from '../../electron/core/server/sync/stationAuth.js';
import { sweepUploads } from '../../electron/core/server/uploads/cleanup.js';
import { UploadReceiver } from '../../electron/core/server/uploads/receive.js';
import { registerUploadApi } from '../../electron/core/server/uploads/routes.js';
import { findLocation, uploadByUuid } from '../../electron/core/server/uploads/store.js';
import { getSetting, setSetting } from '../../electron/core/station/settings.js';
import { UPLOADS_PATH, type UploadState } from '../../electron/core/sync/uploadProtocol.js';
import { nowIso } from '../../electron/core/util/ids.js';
import { createLogger } from '../../electron/core/util/log.js';
import { startCutProxy, type CutProxy } from './cutProxy.js';
import {
  filesOf,
  harvestOnce,
  listTree,
  setupHarvest,
  transfersOf,
  withDb,
} from './harvestSetup.js';
import { createStationKey, runCli, tempDir, writeJson } from './helpers.js';

const md5 = (data: Buffer): string => createHash('md5').update(data).digest('hex');
const MiB = 1024 * 1024;

let serverDir: string;
/** The server's `server` storage location: a folder on the server machine. */
let store: string;
let key: string;
let serverDb: Db;
let app: FastifyInstance;
let serverUrl: string;
const proxies = new Set<CutProxy>();

/**
 * The server app as `labstation serve` builds it, with the upload API, on an ephemeral port.
 * Each test's station is a data dir of its own with the one key, used one after another: the
 * next takes the key at once (`takeoverMs` 0) unless a test says otherwise.
 */
async function startApp(takeoverMs = 0): Promise<void> {
  const log = createLogger(process.env.UPLOAD_TEST_LOG ?? 'silent');
  app = await createServerApp({
    db: serverDb,
    log,
    jwtSecret: getSetting(serverDb, 'server.jwtSecret')!,
    timeZone: () => 'UTC',
    stationTakeoverMs: takeoverMs,
  });
  registerUploadApi(app, { db: serverDb, log });
  serverUrl = await app.listen({ host: '127.0.0.1', port: 0 });
  serverUrl += '/';
}

/** An instrument of the SEM tool that `station` runs, storing in the server's `archive`. */
function addInstrument(name: string, station: string, template: string): void {
  const now = new Date().toISOString();
  serverDb
    .prepare(
      `INSERT INTO instruments (uuid, name, tool_id, station_id, storage_location_id,
         destination_template, created_at, updated_at)
       SELECT ?, ?, t.id, s.id, l.id, ?, ?, ?
       FROM tools t, stations s, storage_locations l
       WHERE t.name = 'SEM' AND s.name = ? AND l.name = 'archive'`,
    )
    .run(randomUUID(), name, template, now, now, station);
}

beforeAll(async () => {
  const root = tempDir('labstation-upload-');
  serverDir = join(root, 'server');
  store = join(root, 'server-store');
  mkdirSync(store);
  const bundle = {
    projects: [],
    users: [],
    tools: [{ name: 'SEM' }],
    storage_locations: [{ name: 'archive', type: 'local', base_path: store }],
  };
  const imported = await runCli(['import', '--data', serverDir, writeJson(root, 'b.json', bundle)]);
  expect(imported.code, imported.stderr).toBe(0);
  key = await createStationKey(serverDir, 'sem-station', 'SEM');
  serverDb = openServerData(serverDir);
  // Bundles take local locations only: the server's is made a server one here, and given to
  // an instrument the station runs (a station writes only where its instruments store).
  serverDb.prepare("UPDATE storage_locations SET type = 'server' WHERE name = 'archive'").run();
  addInstrument('sem-1', 'sem-station', '{relative_path}');
  await startApp();
});

afterAll(async () => {
  await Promise.allSettled([...proxies].map((p) => p.close()));
  await app?.close();
  serverDb?.close();
});

afterEach(async () => {
  await Promise.allSettled([...proxies].map((p) => p.close()));
  proxies.clear();
});

async function proxy(options: Omit<Parameters<typeof startCutProxy>[0], 'port'>) {
  const port = Number(new URL(serverUrl).port);
  const p = await startCutProxy({ port, ...options });
  proxies.add(p);
  return p;
}

/** A station whose one instrument harvests into the server's `archive` under `folder`/. */
async function station(folder: string, server = serverUrl) {
  const dirs = await setupHarvest({ template: `${folder}/{relative_path}` });
  withDb(dirs.data, (db) => {
    db.prepare("UPDATE storage_locations SET type = 'server' WHERE name = 'archive'").run();
    const set = db.prepare(
      'INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
    );
    set.run('sync.server', JSON.stringify(server));
    set.run('sync.key', JSON.stringify(key));
  });
  return dirs;
}

/** Partial files the server holds (abandoned or under way). */
function partials(): string[] {
  const folder = join(store, '.labstation-uploads');
  return existsSync(folder) ? readdirSync(folder) : [];
}

function storeTree(folder: string): string[] {
  const dir = join(store, folder);
  return existsSync(dir) ? listTree(dir) : [];
}

/**
 * Waits for `ready` (a file placed, a partial written or removed), racing `request`: a request
 * that ends first (failed before, or answered) fails the test with how it ended, rather than
 * spinning until the test's timeout.
 */
async function until(what: string, ready: () => boolean, request: Promise<unknown>) {
  const seen: { end: string | null } = { end: null };
  request.then(
    (answer) => (seen.end = `answered ${JSON.stringify(answer)}`),
    (error: unknown) =>
      (seen.end = `failed: ${error instanceof Error ? error.message : String(error)}`),
  );
  while (!ready()) {
    if (seen.end !== null) throw new Error(`never ${what}: the request ${seen.end}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Until the file at `path` is placed, racing `request`. */
const placedBy = (path: string, request: Promise<unknown>): Promise<void> =>
  until(`placed: ${path}`, () => existsSync(path), request);

async function xxh3(data: Buffer): Promise<string> {
  return (await createXXHash128()).init().update(data).digest('hex');
}

async function call(
  method: string,
  path: string,
  init: { headers?: Record<string, string>; body?: Buffer | string; auth?: string | null } = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const auth = init.auth === undefined ? `Station ${key}` : init.auth;
  const res = await fetch(new URL(path.slice(1), serverUrl), {
    method,
    headers: { ...(auth ? { authorization: auth } : {}), ...init.headers },
    ...(init.body === undefined ? {} : { body: init.body }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

function open(fields: Record<string, unknown>) {
  return call('POST', UPLOADS_PATH, {
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      file_uuid: `file-${randomBytes(4).toString('hex')}`,
      storage_location_uuid: 'not-known-here',
      storage_location: 'archive',
      ...fields,
    }),
  });
}

function append(id: string, offset: number, bytes: Buffer) {
  return call('PATCH', `${UPLOADS_PATH}/${id}`, {
    headers: { 'content-type': 'application/octet-stream', 'upload-offset': String(offset) },
    body: bytes,
  });
}

describe('uploads into a server storage location', () => {
  it('harvests files to the server, each completed with the hash the server computed', async () => {
    const dirs = await station('normal');
    const files = {
      'scan.tif': randomBytes(3 * MiB + 12345),
      'run1/grid/frame.dat': randomBytes(2000),
      'empty.txt': Buffer.alloc(0),
    };
    for (const [name, data] of Object.entries(files)) {
      mkdirSync(dirname(join(dirs.src, name)), { recursive: true });
      writeFileSync(join(dirs.src, name), data);
    }
    const run = await harvestOnce(dirs.data);
    expect(run.stdout).toContain('harvest: 3 completed, 0 skipped, 0 failed');
    expect(run.code).toBe(0);

    expect(storeTree('normal')).toEqual(Object.keys(files).sort());
    for (const [name, data] of Object.entries(files)) {
      expect(md5(readFileSync(join(store, 'normal', name)))).toBe(md5(data));
    }
    for (const f of await filesOf(dirs.data)) {
      expect(f.state).toBe('done');
      expect(f.xxhash).toBe(await xxh3(files[f.relative_path as keyof typeof files]));
      expect(f.last_transfer).toMatchObject({
        status: 'completed',
        checksum_verified: true,
        dest_checksum: f.xxhash,
        storage_location: 'archive',
        destination_path: join(store, 'normal', f.relative_path),
      });
    }
    // Nothing written on the station's side, nothing left over on the server's.
    expect(listTree(dirs.dest)).toEqual([]);
    expect(partials()).toEqual([]);
    const rows = serverDb
      .prepare(
        "SELECT state, count(*) AS n FROM harvest_uploads WHERE final_path LIKE 'normal/%' GROUP BY state",
      )
      .all();
    expect(rows).toEqual([{ state: 'completed', n: 3 }]);
  });

  it('the same content already at the destination is skipped, without sending it', async () => {
    const dirs = await station('same');
    const data = randomBytes(2 * MiB);
    writeFileSync(join(dirs.src, 'image.raw'), data);
    mkdirSync(join(store, 'same'));
    writeFileSync(join(store, 'same', 'image.raw'), data);
    const through = await proxy({});
    withDb(dirs.data, (db) =>
      db
        .prepare("UPDATE settings SET value = ? WHERE key = 'sync.server'")
        .run(JSON.stringify(through.url)),
    );

    const run = await harvestOnce(dirs.data);
    expect(run.stdout).toContain('harvest: 0 completed, 1 skipped, 0 failed');
    const [transfer] = await transfersOf(dirs.data);
    expect(transfer).toMatchObject({
      status: 'skipped',
      checksum_verified: true,
      dest_checksum: await xxh3(data),
      note: 'the destination already holds the same content',
    });
    expect(storeTree('same')).toEqual(['image.raw']);
    // The station asked and was answered; the 2 MiB stayed home.
    expect(through.upstreamBytes).toBeLessThan(64 * 1024);
  });

  it('other content at the destination: the upload is written as name (1).ext', async () => {
    const dirs = await station('other');
    const data = randomBytes(300_000);
    writeFileSync(join(dirs.src, 'image.raw'), data);
    mkdirSync(join(store, 'other'));
    writeFileSync(join(store, 'other', 'image.raw'), 'someone else');

    const run = await harvestOnce(dirs.data);
    expect(run.stdout).toContain('harvest: 1 completed, 0 skipped, 0 failed');
    const [transfer] = await transfersOf(dirs.data);
    expect(transfer).toMatchObject({
      status: 'completed',
      checksum_verified: true,
      destination_path: join(store, 'other', 'image (1).raw'),
    });
    expect(transfer?.note).toMatch(/held other content; this copy was written as image \(1\)\.raw/);
    expect(readFileSync(join(store, 'other', 'image.raw'), 'utf8')).toBe('someone else');
    expect(md5(readFileSync(join(store, 'other', 'image (1).raw')))).toBe(md5(data));

    // The same image again from another folder: it is at image (1).raw, so it is skipped
    // there, not sent and written as image (2).raw.
    mkdirSync(join(dirs.src, 'again'));
    writeFileSync(join(dirs.src, 'again', 'image.raw'), data);
    withDb(dirs.data, (db) =>
      db.prepare("UPDATE instruments SET destination_template = 'other/{filename}'").run(),
    );
    const second = await harvestOnce(dirs.data);
    expect(second.stdout).toContain('harvest: 0 completed, 1 skipped, 0 failed');
    expect(storeTree('other').sort()).toEqual(['image (1).raw', 'image.raw']);
    const skipped = (await transfersOf(dirs.data)).find((t) => t.status === 'skipped');
    expect(skipped?.destination_path).toBe(join(store, 'other', 'image (1).raw'));
  });

  it('a connection cut mid-file: the upload resumes, and the file is there once, verified', async () => {
    const size = 6 * MiB;
    const cutAt = 2 * MiB + 777;
    const through = await proxy({ cutAfter: cutAt });
    const dirs = await station('cut', through.url);
    const data = randomBytes(size);
    writeFileSync(join(dirs.src, 'big.bin'), data);

    const run = await harvestOnce(dirs.data);
    expect(run.stdout).toContain('harvest: 1 completed, 0 skipped, 0 failed');
    expect(through.cuts).toBe(1);
    // Resumed, not restarted: the bytes before the cut were not sent again (a restart would
    // have sent size + cutAt).
    expect(through.upstreamBytes).toBeLessThan(size + 256 * 1024);
    expect(storeTree('cut')).toEqual(['big.bin']);
    expect(md5(readFileSync(join(store, 'cut', 'big.bin')))).toBe(md5(data));
    const transfers = await transfersOf(dirs.data);
    expect(transfers).toHaveLength(1);
    expect(transfers[0]).toMatchObject({
      status: 'completed',
      checksum_verified: true,
      dest_checksum: await xxh3(data),
    });
    expect(partials()).toEqual([]);
  });

  it('a bit flipped on the way: the server refuses it (422), keeps nothing, and the retry completes', async () => {
    const through = await proxy({ flipAt: 1 * MiB });
    const dirs = await station('flip', through.url);
    const data = randomBytes(3 * MiB);
    writeFileSync(join(dirs.src, 'image.tif'), data);

    const flipped = await harvestOnce(dirs.data);
    expect(through.flips).toBe(1);
    expect(flipped.code).toBe(1);
    const [failed] = await transfersOf(dirs.data);
    expect(failed).toMatchObject({ status: 'failed', checksum_verified: false });
    expect(failed?.error).toMatch(
      /checksum mismatch: the station declared [0-9a-f]{32}, the 3145728 bytes received hash to/,
    );
    expect(storeTree('flip')).toEqual([]);
    expect(partials()).toEqual([]);

    const clean = await harvestOnce(dirs.data);
    expect(clean.code).toBe(0);
    expect((await transfersOf(dirs.data)).map((t) => t.status).sort()).toEqual([
      'completed',
      'failed',
    ]);
    expect(md5(readFileSync(join(store, 'flip', 'image.tif')))).toBe(md5(data));
  });

  it('a declared hash that the bytes do not have: 422 with the server hash, no file kept', async () => {
    const data = randomBytes(100_000);
    const opened = await open({
      destination_path: 'wrong/data.bin',
      size: data.length,
      xxhash: await xxh3(Buffer.from('something else')),
    });
    expect(opened.status).toBe(200);
    const id = opened.body.upload_id as string;
    const answer = await append(id, 0, data);
    expect(answer.status).toBe(422);
    expect(answer.body).toMatchObject({
      detail: expect.stringMatching(/^xxhash: checksum mismatch/) as string,
      server_hash: await xxh3(data),
      received_hash: await xxh3(data),
    });
    expect(storeTree('wrong')).toEqual([]);
    expect(partials()).toEqual([]);
    expect((await call('GET', `${UPLOADS_PATH}/${id}`)).status).toBe(404);
  });

  it('refuses destinations that leave base_path, by .. or through a symbolic link', async () => {
    const outside = tempDir('labstation-outside-');
    symlinkSync(outside, join(store, 'escape'));
    const hash = await xxh3(Buffer.from('x'));
    for (const [path, rule] of [
      ['../evil.txt', 'destination_path: climbs out of the storage location with ..'],
      ['/etc/evil.txt', 'destination_path: starts with / or \\ (an absolute path)'],
      ['escape/evil.txt', 'destination_path: leads outside the storage location'],
      ['escape/deeper/evil.txt', 'destination_path: leads outside the storage location'],
      ['.labstation-uploads/evil.txt', 'destination_path: .labstation-uploads holds'],
      // The same folder on Windows or macOS, whatever this server runs on.
      ['.Labstation-Uploads/evil.txt', 'destination_path: .labstation-uploads holds'],
      ['.labstation-uploads./evil.txt', 'destination_path: .labstation-uploads holds'],
    ]) {
      const answer = await open({ destination_path: path, size: 1, xxhash: hash });
      expect(answer.status, path).toBe(400);
      expect(answer.body.detail, path).toContain(rule);
    }
    expect(readdirSync(outside)).toEqual([]);

    // Through a station: the transfer fails with the server's reason, and is not retried alone.
    const dirs = await station('escape');
    writeFileSync(join(dirs.src, 'a.txt'), 'a');
    const run = await harvestOnce(dirs.data);
    expect(run.code).toBe(1);
    const [failed] = await transfersOf(dirs.data);
    expect(failed?.error).toMatch(
      /^the server refused the upload: destination_path: leads outside/,
    );
    const [file] = await filesOf(dirs.data);
    expect(file).toMatchObject({ state: 'failed', next_attempt_at: null });
    expect(readdirSync(outside)).toEqual([]);
  });

  it("refuses a base_path that has come to lead to the server's data folder since it was saved", async () => {
    // Saved while the path did not exist (so it passed the save's check), then made a link to
    // the server's own folder, or to a folder holding it.
    const later = join(tempDir('labstation-later-'), 'store');
    const hash = await xxh3(Buffer.from('x'));
    const setBase = (path: string) =>
      serverDb
        .prepare("UPDATE storage_locations SET base_path = ? WHERE name = 'archive'")
        .run(path);
    // An upload opened before the change, resumed after it, is refused as well.
    const before = await open({ destination_path: 'resumed.eml', size: 1, xxhash: hash });
    expect(before.status).toBe(200);
    const rule =
      /^storage_location: archive \(.*\) leads to .*, which is the server's data folder, inside it, or holds it/;
    try {
      for (const target of [serverDir, dirname(serverDir), join(serverDir, 'inside')]) {
        mkdirSync(target, { recursive: true });
        rmSync(later, { force: true });
        symlinkSync(target, later);
        setBase(later);
        const answer = await open({ destination_path: 'planted.eml', size: 1, xxhash: hash });
        expect(answer.status, target).toBe(400);
        expect(answer.body.detail, target).toMatch(rule);
        expect(existsSync(join(target, 'planted.eml'))).toBe(false);
        const resumed = await append(before.body.upload_id as string, 0, Buffer.from('x'));
        expect(resumed.status, target).toBe(400);
        expect(resumed.body.detail, target).toMatch(rule);
        expect(existsSync(join(target, 'resumed.eml'))).toBe(false);
      }
    } finally {
      setBase(store);
    }
    expect(
      (await call('DELETE', `${UPLOADS_PATH}/${before.body.upload_id as string}`)).status,
    ).toBe(204);
    // The location where it belongs still takes uploads.
    const fine = await open({ destination_path: 'fine.txt', size: 1, xxhash: hash });
    expect(fine.status).toBe(200);
    const dropped = await call('DELETE', `${UPLOADS_PATH}/${fine.body.upload_id as string}`);
    expect(dropped.status).toBe(204);
  });

  it("keeps out of the folders of another station's instruments in the location", async () => {
    const hash = await xxh3(Buffer.from('x'));
    // Another station runs sem-2, which stores in the same location under its own name.
    await createStationKey(serverDir, 'tem-station', 'SEM');
    addInstrument('sem-2', 'tem-station', '{instrument}/{yyyy}/{relative_path}');
    try {
      for (const path of ['sem-2/2026/a.bin', 'sem-2/b.bin']) {
        const refused = await open({ destination_path: path, size: 1, xxhash: hash });
        expect(refused.status, path).toBe(403);
        expect(refused.body).toMatchObject({
          detail:
            `destination_path: ${path} is in sem-2/, the folder of the instrument sem-2, ` +
            'which another station runs',
          code: 'destination_of_another_instrument',
        });
      }
      // Spelled as Windows or macOS take it to be the same folder: refused as well.
      for (const path of ['SEM-2/a.bin', 'sem-2./a.bin', 'sem-2 /2026/a.bin']) {
        const refused = await open({ destination_path: path, size: 1, xxhash: hash });
        expect(refused.status, path).toBe(403);
        expect(refused.body, path).toMatchObject({
          detail: `destination_path: ${path} is in sem-2/, the folder of the instrument sem-2, which another station runs`,
          code: 'destination_of_another_instrument',
        });
      }
      // Beside it, this station's instruments write where their templates lead.
      for (const path of ['sem-22/a.bin', 'sem-1/sem-2/a.bin', 'c.bin']) {
        const opened = await open({ destination_path: path, size: 1, xxhash: hash });
        expect(opened.status, path).toBe(200);
        const id = opened.body.upload_id as string;
        expect((await call('DELETE', `${UPLOADS_PATH}/${id}`)).status).toBe(204);
      }

      // Through a station: the transfer fails with the server's reason, and is tried again
      // after its backoff (an instrument renamed or moved meanwhile may free the folder).
      const dirs = await station('sem-2');
      writeFileSync(join(dirs.src, 'a.txt'), 'a');
      expect((await harvestOnce(dirs.data)).code).toBe(1);
      const [failed] = await transfersOf(dirs.data);
      expect(failed?.error).toBe(
        'the server refused the upload: destination_path: sem-2/a.txt is in sem-2/, the ' +
          'folder of the instrument sem-2, which another station runs',
      );
      const [file] = await filesOf(dirs.data);
      expect(file?.state).toBe('failed');
      expect(file?.next_attempt_at).not.toBeNull();
      expect(storeTree('sem-2')).toEqual([]);
    } finally {
      serverDb.prepare("DELETE FROM instruments WHERE name = 'sem-2'").run();
    }
  });

  it('names the field and the rule of a bad request', async () => {
    const hash = await xxh3(Buffer.from('x'));
    const cases: [Record<string, unknown>, number, string][] = [
      [{ destination_path: 'a', size: -1, xxhash: hash }, 400, 'size:'],
      [{ destination_path: 'a', size: 1, xxhash: 'abc' }, 400, 'xxhash: must be an XXH3-128 hash'],
      [
        { destination_path: 'a', size: 1, xxhash: hash, storage_location: 'nowhere' },
        404,
        'storage_location_uuid: the server has no storage location',
      ],
    ];
    for (const [fields, status, detail] of cases) {
      const answer = await open(fields);
      expect(answer.status, JSON.stringify(fields)).toBe(status);
      expect(answer.body.detail).toContain(detail);
    }
    const opened = await open({ destination_path: 'fields/a.bin', size: 10, xxhash: hash });
    const id = opened.body.upload_id as string;
    const behind = await append(id, 5, Buffer.alloc(5));
    expect(behind).toMatchObject({ status: 409, body: { offset: 0 } });
    expect(behind.body.detail).toMatch(/^Upload-Offset: is 5, but the server holds 0 bytes/);
    const long = await append(id, 0, Buffer.alloc(11));
    expect(long.status).toBe(400);
    expect(long.body.detail).toMatch(/^body: 11 bytes, but only 10 remain/);
    expect((await call('DELETE', `${UPLOADS_PATH}/${id}`)).status).toBe(204);
  });

  it('refuses requests without a valid station key (401)', async () => {
    const opened = await open({
      destination_path: 'auth/a.bin',
      size: 3,
      xxhash: await xxh3(Buffer.from('abc')),
    });
    const id = opened.body.upload_id as string;
    for (const auth of [null, 'Station not-a-key', `Bearer ${key}`]) {
      const requests = [
        call('POST', UPLOADS_PATH, {
          auth,
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({}),
        }),
        call('GET', `${UPLOADS_PATH}/${id}`, { auth }),
        call('PATCH', `${UPLOADS_PATH}/${id}`, {
          auth,
          headers: { 'content-type': 'application/octet-stream', 'upload-offset': '0' },
          body: Buffer.from('abc'),
        }),
        call('DELETE', `${UPLOADS_PATH}/${id}`, { auth }),
      ];
      for (const answer of await Promise.all(requests)) {
        expect(answer.status).toBe(401);
        expect(answer.body.detail).toEqual(expect.any(String));
      }
    }
    // A valid key of a station none of whose instruments stores there: refused, and another
    // station's upload is not found.
    const stranger = await createStationKey(serverDir, 'other-station', 'SEM');
    const refused = await call('POST', UPLOADS_PATH, {
      auth: `Station ${stranger}`,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        file_uuid: 'stranger-file',
        storage_location_uuid: 'not-known-here',
        storage_location: 'archive',
        destination_path: 'auth/b.bin',
        size: 3,
        xxhash: await xxh3(Buffer.from('abc')),
      }),
    });
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toMatch(/not used by an instrument of this station/);
    expect(
      (await call('GET', `${UPLOADS_PATH}/${id}`, { auth: `Station ${stranger}` })).status,
    ).toBe(404);
    const state = await call('GET', `${UPLOADS_PATH}/${id}`);
    expect(state.body).toMatchObject({ status: 'receiving', offset: 0 });
    expect(storeTree('auth')).toEqual([]);
    expect((await call('DELETE', `${UPLOADS_PATH}/${id}`)).status).toBe(204);
  });

  it('after a server restart, trusts only the recorded bytes: rebuilds its hash from the disk', async () => {
    const data = randomBytes(5 * MiB + 3);
    const hash = await xxh3(data);
    const fields = {
      file_uuid: 'restart-1',
      destination_path: 'restart/r.bin',
      size: data.length,
      xxhash: hash,
    };
    const opened = await open(fields);
    const id = opened.body.upload_id as string;
    const half = 2 * MiB + 1;
    expect(await append(id, 0, data.subarray(0, half))).toMatchObject({
      status: 200,
      body: { status: 'receiving', offset: half },
    });
    // A crash after writing bytes it never recorded: they must not count.
    const partial = serverDb
      .prepare('SELECT partial_path FROM harvest_uploads WHERE uuid = ?')
      .pluck()
      .get(id) as string;
    appendFileSync(partial, randomBytes(1000));

    await app.close();
    await startApp();
    const resumed = await open(fields);
    expect(resumed.body).toMatchObject({ upload_id: id, status: 'receiving', offset: half });
    expect(statSync(partial).size).toBe(half);
    const done = await append(id, half, data.subarray(half));
    expect(done.body).toMatchObject({
      status: 'completed',
      dest_checksum: hash,
      checksum_verified: true,
      destination_path: 'restart/r.bin',
      server_path: join(store, 'restart', 'r.bin'),
    } satisfies Partial<UploadState>);
    expect(md5(readFileSync(join(store, 'restart', 'r.bin')))).toBe(md5(data));
    // Asked again: the same answer, and nothing moves.
    expect((await open(fields)).body).toEqual(done.body);
    expect((await append(id, 0, Buffer.alloc(0))).body).toEqual(done.body);
    expect(storeTree('restart')).toEqual(['r.bin']);
  });

  it('a source that changes while uploaded (same size and mtime) is never completed', async () => {
    const dir = tempDir('labstation-upload-src-');
    const source = join(dir, 'changing.bin');
    const data = randomBytes(3 * MiB);
    writeFileSync(source, data);
    const before = statSync(source);
    const stationDb = openDatabase(join(dir, 'station.db'));
    setSetting(stationDb, 'sync.server', serverUrl);
    setSetting(stationDb, 'sync.key', key);
    try {
      const outcome = await uploadVerified(
        {
          db: stationDb,
          log: createLogger('silent'),
          // The file changes right after it was hashed, keeping its size and mtime.
          hash: async (path) => {
            const hashed = await hashFile(path);
            writeFileSync(path, randomBytes(data.length));
            utimesSync(path, before.atime, before.mtime);
            return hashed;
          },
          progress: () => undefined,
        },
        {
          file: {
            uuid: 'changing-1',
            source_path: source,
            size: data.length,
            mtime_ms: before.mtimeMs,
          },
          location: { uuid: 'x', name: 'archive' },
          destination: 'changing/changing.bin',
        },
      );
      expect(outcome).toMatchObject({ outcome: 'source_changed' });
      expect(storeTree('changing')).toEqual([]);
      // The station dropped its upload: nothing waits on the server.
      expect(partials()).toEqual([]);
      const left = serverDb
        .prepare("SELECT count(*) FROM harvest_uploads WHERE file_uuid = 'changing-1'")
        .pluck()
        .get();
      expect(left).toBe(0);
    } finally {
      stationDb.close();
    }
  });

  it('a key another Labstation holds: a failed transfer that says so, to be retried', async () => {
    // Another Labstation uses the key (its data dir and host named, as a station's are); the
    // server then holds it to that one for a minute.
    const other = { 'x-labstation-install': randomUUID(), 'x-labstation-host': 'other-pc' };
    expect((await call('GET', '/sync/changes?cursor=0', { headers: other })).status).toBe(200);
    await app.close();
    await startApp(60_000);
    try {
      const dirs = await station('held');
      writeFileSync(join(dirs.src, 'a.txt'), 'a');
      const run = await harvestOnce(dirs.data);
      expect(run.code).toBe(1);
      const [failed] = await transfersOf(dirs.data);
      expect(failed?.error).toMatch(
        /does not accept this station's key: This station key is in use by another Labstation \(host "other-pc"/,
      );
      const [file] = await filesOf(dirs.data);
      // Retried later (a key can be free again), not left until someone asks.
      expect(file?.state).toBe('failed');
      expect(file?.next_attempt_at).toEqual(expect.any(String) as string);
      expect(storeTree('held')).toEqual([]);
    } finally {
      await app.close();
      await startApp();
    }
  });

  it('no server set on the station: a failed transfer that says so', async () => {
    const dirs = await station('unset');
    withDb(dirs.data, (db) => db.prepare("DELETE FROM settings WHERE key LIKE 'sync.%'").run());
    writeFileSync(join(dirs.src, 'a.txt'), 'a');
    const run = await harvestOnce(dirs.data);
    expect(run.code).toBe(1);
    const [failed] = await transfersOf(dirs.data);
    expect(failed?.error).toMatch(/is on the server, but this station has no server and key set/);
  });

  it('abandoned uploads and stray partial files are removed after their age, not before', async () => {
    const data = randomBytes(1000);
    const opened = await open({
      destination_path: 'abandoned/a.bin',
      size: data.length,
      xxhash: await xxh3(data),
    });
    const id = opened.body.upload_id as string;
    await append(id, 0, data.subarray(0, 400));
    const whole = await open({
      destination_path: 'abandoned/done.bin',
      size: data.length,
      xxhash: await xxh3(data),
    });
    expect((await append(whole.body.upload_id as string, 0, data)).body).toMatchObject({
      status: 'completed',
    });
    const stray = join(store, '.labstation-uploads', 'left-by-a-crash.partial');
    writeFileSync(stray, 'x');
    const receiver = new UploadReceiver({ db: serverDb, log: createLogger('silent') });
    const deps = { db: serverDb, log: createLogger('silent'), receiver };

    expect(await sweepUploads(deps)).toMatchObject({ dropped: 0, orphans: 0 });
    expect((await call('GET', `${UPLOADS_PATH}/${id}`)).body).toMatchObject({ offset: 400 });
    expect(existsSync(stray)).toBe(true);

    const week = 7 * 24 * 3600_000;
    const later = await sweepUploads(deps, { now: Date.now() + week + 60_000 });
    expect(later).toMatchObject({ dropped: 1, orphans: 1, forgotten: 0 });
    expect((await call('GET', `${UPLOADS_PATH}/${id}`)).status).toBe(404);
    expect(partials()).toEqual([]);
    // Finished records go after 30 days: a retry then finds the file and is skipped.
    const finished = serverDb
      .prepare("SELECT count(*) FROM harvest_uploads WHERE state <> 'receiving'")
      .pluck()
      .get() as number;
    expect(finished).toBeGreaterThan(0);
    const much = await sweepUploads(deps, { now: Date.now() + 31 * 24 * 3600_000 });
    expect(much.forgotten).toBe(finished);
  });

  describe('a station refused while its upload is written (a new key, or deleted)', () => {
    const receiver = (): UploadReceiver =>
      new UploadReceiver({ db: serverDb, log: createLogger('silent') });
    const ends = {
      'a new key': (id: number) => void newStationKey(serverDb, id),
      deleted: (id: number) =>
        serviceAccounts.remove({ db: serverDb, actor: { id: 1 }, now: nowIso() }, id),
    };

    /** A station of its own (deletable: it runs nothing), as the upload routes let it in. */
    async function letIn(name: string) {
      const stationKey = await createStationKey(serverDir, name, 'SEM');
      const account = serverDb
        .prepare('SELECT id, uuid, name, tool_id FROM stations WHERE name = ?')
        .get(name) as { id: number; uuid: string; name: string; tool_id: number | null };
      return {
        id: account.id,
        refusedNow: refusalFor(serverDb, { ...account, install: null }, `Station ${stationKey}`),
      };
    }

    it.each(Object.entries(ends))(
      '%s as it opens: 401, no record (not a foreign key failure), no partial',
      async (how, end) => {
        const station = await letIn(`opening-${how.replace(/ /g, '-')}`);
        const location = findLocation(serverDb, 'none', 'archive')!;
        const data = randomBytes(1000);
        const fileUuid = `opening-${randomUUID()}`;
        const opening = receiver().open(
          location,
          {
            stationId: station.id,
            fileUuid,
            locationId: location.id,
            destination: `opening/${fileUuid}.bin`,
            size: data.length,
            xxhash: await xxh3(data),
          },
          station.refusedNow,
        );
        // While it looks at the destination (its first wait), before it records the upload.
        end(station.id);
        await expect(opening).rejects.toMatchObject({
          status: 401,
          detail: 'Invalid station key.',
        });
        const rows = serverDb.prepare('SELECT count(*) FROM harvest_uploads WHERE file_uuid = ?');
        expect(rows.pluck().get(fileUuid)).toBe(0);
        expect(partials()).toEqual([]);
      },
    );

    it.each(Object.entries(ends))(
      '%s as its file is placed: 401, and the placed file goes with its record',
      async (how, end) => {
        const station = await letIn(`placing-${how.replace(/ /g, '-')}`);
        const location = findLocation(serverDb, 'none', 'archive')!;
        const data = randomBytes(2 * MiB);
        const destination = `placing/${randomUUID()}.bin`;
        const uploads = receiver();
        const opened = await uploads.open(
          location,
          {
            stationId: station.id,
            fileUuid: randomUUID(),
            locationId: location.id,
            destination,
            size: data.length,
            xxhash: await xxh3(data),
          },
          station.refusedNow,
        );
        const row = uploadByUuid(serverDb, opened.upload_id)!;
        const appending = uploads.append(
          row,
          location,
          0,
          Readable.from([data]),
          data.length,
          station.refusedNow,
        );
        // The file is at its name (linked there), its upload not yet recorded finished: the
        // station ends now, after the check that follows the body.
        await placedBy(join(store, destination), appending);
        end(station.id);
        await expect(appending).rejects.toMatchObject({
          status: 401,
          detail: 'Invalid station key.',
        });
        expect(existsSync(join(store, destination))).toBe(false);
        // The folder made for it goes with it.
        expect(existsSync(join(store, 'placing'))).toBe(false);
        expect(uploadByUuid(serverDb, opened.upload_id)).toBeUndefined();
        expect(partials()).toEqual([]);
      },
    );

    /** An upload of `station` opened in `uploads` (2 MiB unless said), and its record. */
    async function opened(
      uploads: UploadReceiver,
      station: Awaited<ReturnType<typeof letIn>>,
      data = randomBytes(2 * MiB),
    ) {
      const location = findLocation(serverDb, 'none', 'archive')!;
      const state = await uploads.open(
        location,
        {
          stationId: station.id,
          fileUuid: randomUUID(),
          locationId: location.id,
          destination: `reused/${randomUUID()}.bin`,
          size: data.length,
          xxhash: await xxh3(data),
        },
        station.refusedNow,
      );
      return {
        data,
        location,
        row: uploadByUuid(serverDb, state.upload_id)!,
        refusedNow: station.refusedNow,
      };
    }

    /**
     * An upload of `station` whose body streams (its first MiB of 2 written to the partial, its
     * request still at work); the request ends once `body` does.
     */
    async function midBody(uploads: UploadReceiver, station: Awaited<ReturnType<typeof letIn>>) {
      const { data, location, row } = await opened(uploads, station);
      const body = new PassThrough();
      const appending = uploads.append(row, location, 0, body, data.length, station.refusedNow);
      let ended = false;
      const end = (): boolean => (ended = true);
      appending.then(end, end);
      body.write(data.subarray(0, MiB));
      const partial = row.partial_path!;
      await until('its first MiB written', () => statSync(partial).size >= MiB, appending);
      return { row, body, appending, data, ended: () => ended };
    }

    /** As midBody, its station given a new key then: its record is gone. */
    async function refusedMidBody(uploads: UploadReceiver, name: string) {
      const station = await letIn(name);
      const streaming = await midBody(uploads, station);
      newStationKey(serverDb, station.id);
      expect(uploadByUuid(serverDb, streaming.row.uuid)).toBeUndefined();
      return streaming;
    }

    it.each(['PATCH', 'POST'])(
      'a new key while a %s of its upload waits for the turn of the one at work: 401 for both (not that the upload is gone)',
      async (method) => {
        const uploads = receiver();
        const station = await letIn(`waiting-${method}`);
        const streaming = await midBody(uploads, station);
        const { row, data } = streaming;
        const location = findLocation(serverDb, 'none', 'archive')!;
        // Let in before the change; its work begins after it (the turn of the one at work).
        const waiting =
          method === 'PATCH'
            ? uploads.append(
                row,
                location,
                MiB,
                Readable.from([data.subarray(MiB)]),
                MiB,
                station.refusedNow,
              )
            : uploads.open(
                location,
                {
                  stationId: station.id,
                  fileUuid: row.file_uuid,
                  locationId: location.id,
                  destination: row.destination_path,
                  size: row.size,
                  xxhash: row.xxhash,
                },
                station.refusedNow,
              );
        newStationKey(serverDb, station.id);
        const refused = { status: 401, detail: 'Invalid station key.' };
        await expect(streaming.appending).rejects.toMatchObject(refused);
        await expect(waiting).rejects.toMatchObject(refused);
        expect(uploadByUuid(serverDb, row.uuid)).toBeUndefined();
        await new Promise((resolve) => setImmediate(resolve));
        expect(partials()).toEqual([]);
      },
    );

    /** Disabled, then enabled again: its unfinished uploads went with the first change. */
    const disableThenEnable = (id: number): void => {
      const ctx = { db: serverDb, actor: { id: 1 }, now: nowIso() };
      serviceAccounts.update(ctx, id, { enabled: false });
      serviceAccounts.update(ctx, id, { enabled: true });
    };

    it.each([
      { body: 'its last', last: true },
      { body: 'not its last', last: false },
    ])(
      'disabled, then enabled again while a body streams ($body): 404 dropped, and nothing of the upload stays',
      async ({ last }) => {
        const uploads = receiver();
        const station = await letIn(`toggled-${String(last)}`);
        const streaming = await midBody(uploads, station);
        disableThenEnable(station.id);
        expect(uploadByUuid(serverDb, streaming.row.uuid)).toBeUndefined();
        // The partial goes (dropUploadsOfRefused, just after the change) before the body ends.
        const partial = streaming.row.partial_path!;
        await until('its partial removed', () => !existsSync(partial), streaming.appending);
        if (last) streaming.body.end(streaming.data.subarray(MiB));
        else streaming.body.end();
        await expect(streaming.appending).rejects.toMatchObject({
          status: 404,
          detail: 'upload: not found (dropped); start it again',
        });
        expect(partials()).toEqual([]);
        expect(existsSync(join(store, streaming.row.destination_path))).toBe(false);
      },
    );

    it('disabled, then enabled again as its file is placed: 404 dropped, and the placed file goes', async () => {
      const uploads = receiver();
      const station = await letIn('toggled-placing');
      const { data, location, row } = await opened(uploads, station);
      const appending = uploads.append(
        row,
        location,
        0,
        Readable.from([data]),
        data.length,
        station.refusedNow,
      );
      const placed = join(store, row.destination_path);
      await placedBy(placed, appending);
      disableThenEnable(station.id);
      await expect(appending).rejects.toMatchObject({
        status: 404,
        detail: 'upload: not found (dropped); start it again',
      });
      expect(existsSync(placed)).toBe(false);
      expect(uploadByUuid(serverDb, row.uuid)).toBeUndefined();
      expect(partials()).toEqual([]);
    });

    it('disabled, then enabled again as its POST resumes it: 503 dropped, no partial made anew for it', async () => {
      const uploads = receiver();
      const station = await letIn('toggled-resumed');
      const { data, location, row } = await opened(uploads, station);
      const half = await uploads.append(
        row,
        location,
        0,
        Readable.from([data.subarray(0, MiB)]),
        MiB,
        station.refusedNow,
      );
      expect(half.offset).toBe(MiB);
      const key = {
        stationId: station.id,
        fileUuid: row.file_uuid,
        locationId: location.id,
        destination: row.destination_path,
        size: row.size,
        xxhash: row.xxhash,
      };
      // Found again, and its partial looked at (reconcile): the station changes then.
      const resuming = uploads.open(location, key, station.refusedNow);
      disableThenEnable(station.id);
      await expect(resuming).rejects.toMatchObject({
        status: 503,
        detail: 'upload: dropped while resumed; ask again',
      });
      expect(uploadByUuid(serverDb, row.uuid)).toBeUndefined();
      await new Promise((resolve) => setImmediate(resolve));
      expect(partials()).toEqual([]);
      // Asked again, it opens anew, from byte 0.
      const again = await uploads.open(location, key, station.refusedNow);
      expect(again).toMatchObject({ offset: 0, status: 'receiving' });
      expect(again.upload_id).not.toBe(row.uuid);
      const done = await uploads.append(
        uploadByUuid(serverDb, again.upload_id)!,
        location,
        0,
        Readable.from([data]),
        data.length,
        station.refusedNow,
      );
      expect(done.status).toBe('completed');
    });

    it("a new key mid-body, then another station's upload: it gets an id of its own, and the refused request's end leaves it be", async () => {
      const uploads = receiver();
      const a = await refusedMidBody(uploads, 'reused-a');
      const b = await opened(uploads, await letIn('reused-b'));
      // Ids only grow (migration 31): the id freed is not given again.
      expect(b.row.id).toBeGreaterThan(a.row.id);
      a.body.end(a.data.subarray(MiB, 2 * MiB));
      await expect(a.appending).rejects.toMatchObject({ status: 401 });
      expect(uploadByUuid(serverDb, b.row.uuid)).toMatchObject({ state: 'receiving' });
      expect(existsSync(b.row.partial_path!)).toBe(true);
      expect(existsSync(a.row.partial_path!)).toBe(false);
      const done = await uploads.append(
        b.row,
        b.location,
        0,
        Readable.from([b.data]),
        b.data.length,
        b.refusedNow,
      );
      expect(done.status).toBe('completed');
      expect(partials()).toEqual([]);
    });

    it("another station's upload given the refused one's id (as SQLite did before migration 31): neither the refused request's turn nor its writes reach it", async () => {
      const uploads = receiver();
      const a = await refusedMidBody(uploads, 'reused-c');
      const b = await opened(uploads, await letIn('reused-d'));
      serverDb
        .prepare('UPDATE harvest_uploads SET id = ? WHERE uuid = ?')
        .run(a.row.id, b.row.uuid);
      const rowB = uploadByUuid(serverDb, b.row.uuid)!;
      expect(rowB.id).toBe(a.row.id);
      // B's whole file while A's body still streams: B waits for no turn of A's, nor stops it.
      const done = await uploads.append(
        rowB,
        b.location,
        0,
        Readable.from([b.data]),
        b.data.length,
        b.refusedNow,
      );
      expect(done.status).toBe('completed');
      expect(a.ended()).toBe(false);
      a.body.end(a.data.subarray(MiB, 2 * MiB));
      await expect(a.appending).rejects.toMatchObject({ status: 401 });
      expect(uploadByUuid(serverDb, b.row.uuid)).toMatchObject({
        state: 'completed',
        received: b.data.length,
      });
      expect(readFileSync(join(store, b.row.destination_path)).equals(b.data)).toBe(true);
    });
  });

  describe('a station refused as its file is placed, over HTTP', () => {
    /** Ends the station at once (synchronously), as the admin API and pages do. */
    const ends: Record<string, (id: number, instrument: string) => void> = {
      'a new key': (id) => void newStationKey(serverDb, id),
      disabled: (id) =>
        serviceAccounts.update({ db: serverDb, actor: { id: 1 }, now: nowIso() }, id, {
          enabled: false,
        }),
      deleted: (id, instrument) => {
        // A service account that runs an instrument is not deleted: the instrument goes first.
        serverDb.prepare('UPDATE instruments SET station_id = NULL WHERE name = ?').run(instrument);
        serviceAccounts.remove({ db: serverDb, actor: { id: 1 }, now: nowIso() }, id);
      },
    };

    const cases = [
      { how: 'a new key', meanwhile: false },
      { how: 'disabled', meanwhile: true },
      { how: 'deleted', meanwhile: false },
    ];
    it.each(cases)(
      '$how: 401, and the empty folders it made for the file go; one there before stays (a file put in one meanwhile: $meanwhile)',
      async ({ how, meanwhile }) => {
        const name = `folders-${how.replace(/ /g, '-')}`;
        const stationKey = await createStationKey(serverDir, name, 'SEM');
        addInstrument(`${name}-cam`, name, `${name}/{relative_path}`);
        const id = serverDb
          .prepare('SELECT id FROM stations WHERE name = ?')
          .pluck()
          .get(name) as number;
        // There before, and empty: not this upload's to remove.
        mkdirSync(join(store, name, 'kept'), { recursive: true });
        const destination = `${name}/kept/2026/12/03/image.raw`;
        const data = randomBytes(2 * MiB);
        const auth = `Station ${stationKey}`;
        const opened = await call('POST', UPLOADS_PATH, {
          auth,
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            file_uuid: randomUUID(),
            storage_location_uuid: 'not-known-here',
            storage_location: 'archive',
            destination_path: destination,
            size: data.length,
            xxhash: await xxh3(data),
          }),
        });
        expect(opened.status, JSON.stringify(opened.body)).toBe(200);
        const appending = call('PATCH', `${UPLOADS_PATH}/${opened.body.upload_id as string}`, {
          auth,
          headers: { 'content-type': 'application/octet-stream', 'upload-offset': '0' },
          body: data,
        });
        // The file is at its name, its upload not yet recorded finished (the server runs in
        // this process: this looks between its steps). Another writer may put a file in one
        // of the folders the upload made, then the station ends.
        const placed = join(store, destination);
        await placedBy(placed, appending);
        if (meanwhile) writeFileSync(join(store, name, 'kept', '2026', 'notes.txt'), 'meanwhile');
        ends[how](id, `${name}-cam`);

        expect(await appending).toEqual({
          status: 401,
          body: {
            detail: how === 'disabled' ? 'This station is disabled.' : 'Invalid station key.',
          },
        });
        expect(existsSync(placed)).toBe(false);
        expect(partials()).toEqual([]);
        if (meanwhile) {
          // 2026/12/03 and 2026/12 go; 2026 holds the other file, and stays.
          expect(readdirSync(join(store, name, 'kept', '2026'))).toEqual(['notes.txt']);
        } else {
          expect(readdirSync(join(store, name, 'kept'))).toEqual([]);
        }
        expect(readdirSync(join(store, name))).toEqual(['kept']);
      },
    );
  });

  it('the lookup of every POST is an index search', () => {
    const plan = serverDb
      .prepare(
        `EXPLAIN QUERY PLAN SELECT * FROM harvest_uploads WHERE station_id = ? AND file_uuid = ?
           AND storage_location_id = ? AND destination_path = ? AND size = ? AND xxhash = ?`,
      )
      .all(1, 'f', 1, 'd', 1, 'h') as { detail: string }[];
    expect(plan.map((p) => p.detail).join('\n')).toMatch(/USING INDEX harvest_uploads_version/);
  });

  it("a request's writes find its upload by uuid through an index", () => {
    const plan = serverDb
      .prepare('EXPLAIN QUERY PLAN UPDATE harvest_uploads SET received = ? WHERE uuid = ?')
      .all(1, 'u') as { detail: string }[];
    expect(plan.map((p) => p.detail).join('\n')).toMatch(/USING INDEX sqlite_autoindex_harvest/);
  });
});
