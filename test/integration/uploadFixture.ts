/**
 * The server of the upload tests (uploadHarvest, uploadProtocol, uploadRefused), end to end on
 * loopback: the server app in the test's process (real HTTP, a real SQLite file, real folders),
 * stations harvesting through the real `labstation harvest --once`, and a TCP proxy that cuts
 * the connection or flips a bit on the way to the server. A test file calls useUploadServer
 * once; the server's values below are set as its tests start (importers see them then, as ES
 * modules export the variables themselves, not their values at import).
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { createXXHash128 } from 'hash-wasm';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import type { Db } from '../../electron/core/db/open.js';
import { openServerData } from '../../electron/core/server/dataDir.js';
import { createServerApp } from '../../electron/core/server/app.js';
import { registerUploadApi } from '../../electron/core/server/uploads/routes.js';
import { getSetting } from '../../electron/core/station/settings.js';
import { UPLOADS_PATH } from '../../electron/core/sync/uploadProtocol.js';
import { createLogger } from '../../electron/core/util/log.js';
import { startCutProxy, type CutProxy } from './cutProxy.js';
import { listTree, setupHarvest, withDb } from './harvestSetup.js';
import { createStationKey, runCli, tempDir, writeJson } from './helpers.js';

export const md5 = (data: Buffer): string => createHash('md5').update(data).digest('hex');
export const MiB = 1024 * 1024;

export let serverDir: string;
/** The server's `server` storage location: a folder on the server machine. */
export let store: string;
export let key: string;
export let serverDb: Db;
export let app: FastifyInstance;
export let serverUrl: string;
const proxies = new Set<CutProxy>();

/**
 * The server app as `labstation serve` builds it, with the upload API, on an ephemeral port.
 * Each test's station is a data dir of its own with the one key, used one after another: the
 * next takes the key at once (`takeoverMs` 0) unless a test says otherwise.
 */
export async function startApp(takeoverMs = 0): Promise<void> {
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
export function addInstrument(name: string, station: string, template: string): void {
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

/**
 * Starts the server before the file's tests (its key the station sem-station's, which runs the
 * instrument sem-1 storing in `archive`) and stops it after them; closes the proxies after each
 * test.
 */
export function useUploadServer(): void {
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
    const imported = await runCli([
      'import',
      '--data',
      serverDir,
      writeJson(root, 'b.json', bundle),
    ]);
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
}

export async function proxy(options: Omit<Parameters<typeof startCutProxy>[0], 'port'>) {
  const port = Number(new URL(serverUrl).port);
  const p = await startCutProxy({ port, ...options });
  proxies.add(p);
  return p;
}

/** A station whose one instrument harvests into the server's `archive` under `folder`/. */
export async function station(folder: string, server = serverUrl) {
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
export function partials(): string[] {
  const folder = join(store, '.labstation-uploads');
  return existsSync(folder) ? readdirSync(folder) : [];
}

export function storeTree(folder: string): string[] {
  const dir = join(store, folder);
  return existsSync(dir) ? listTree(dir) : [];
}

/**
 * Waits for `ready` (a file placed, a partial written or removed), racing `request`: a request
 * that ends first (failed before, or answered) fails the test with how it ended, rather than
 * spinning until the test's timeout.
 */
export async function until(what: string, ready: () => boolean, request: Promise<unknown>) {
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
export const placedBy = (path: string, request: Promise<unknown>): Promise<void> =>
  until(`placed: ${path}`, () => existsSync(path), request);

export async function xxh3(data: Buffer): Promise<string> {
  return (await createXXHash128()).init().update(data).digest('hex');
}

export async function call(
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

export function open(fields: Record<string, unknown>) {
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

export function append(id: string, offset: number, bytes: Buffer) {
  return call('PATCH', `${UPLOADS_PATH}/${id}`, {
    headers: { 'content-type': 'application/octet-stream', 'upload-offset': String(offset) },
    body: bytes,
  });
}
