/**
 * A station whose key is revoked (a new key made), whose service account is disabled or deleted
 * while its upload is still streaming or its pull is held: a `labstation serve` on loopback,
 * the station's requests made by hand, the admin's changes made through the server's own
 * admin API and web calls.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createXXHash128 } from 'hash-wasm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newUuid } from '../../electron/core/util/ids.js';
import { facilityBundle } from '../fixtures/facility.js';
import {
  createStationKey,
  loginJwt,
  runCli,
  serverRequest,
  startServer,
  tempDir,
  waitFor,
  writeJson,
  type HttpReply,
  type ServerProcess,
} from './helpers.js';

const ADMIN = { email: 'admin@example.org', password: 'admin password 1' };
const MiB = 1024 * 1024;

let root: string;
let store: string;
let server: ServerProcess;
let serverDb: Database.Database;
let adminJwt: string;
let locationId: number;
let semId: number;

const api = (method: string, path: string, body?: unknown): Promise<HttpReply> =>
  serverRequest(server.url, adminJwt, method, path, body);

interface Account {
  id: number;
  key: string;
  /** The instrument it runs, storing in the server location; null for none. */
  instrumentId: number | null;
  instrument: string;
}

/**
 * A station made with the CLI; with `uploads`, running one instrument that stores in the
 * server location (a station without one changes nothing that its pull would be woken by).
 */
async function station(name: string, uploads: boolean): Promise<Account> {
  const key = await createStationKey(join(root, 'server'), name, 'SEM');
  const id = serverDb.prepare('SELECT id FROM stations WHERE name = ?').pluck().get(name) as number;
  const instrument = `${name}-camera`;
  if (!uploads) return { id, key, instrumentId: null, instrument };
  const res = await api('POST', '/api/instruments', {
    name: instrument,
    tool_id: semId,
    service_account_id: id,
    watch: [{ path: '/data', include: ['*'] }],
    storage_location_id: locationId,
    destination_template: '{instrument}/{relative_path}',
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { id, key, instrumentId: Number(res.body.id), instrument };
}

/** The ways an admin ends a station's key, as the admin pages and API do. */
const revocations: Record<string, (account: Account) => Promise<void>> = {
  'a new key': async (account) => {
    const res = await fetch(`${server.url}rpc/admin.stations.newKey`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${adminJwt}` },
      body: JSON.stringify({ id: account.id }),
    });
    expect(res.status, await res.text()).toBe(200);
  },
  'its service account disabled': async (account) => {
    const res = await api('PATCH', `/api/service-accounts/${account.id}`, { enabled: false });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  },
  'its service account deleted': async (account) => {
    // A service account that runs an instrument is not deleted: the instrument goes first.
    if (account.instrumentId !== null) {
      const moved = await api('PATCH', `/api/instruments/${account.instrumentId}`, {
        service_account_id: null,
      });
      expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    }
    const res = await api('DELETE', `/api/service-accounts/${account.id}`);
    expect(res.status, JSON.stringify(res.body)).toBe(204);
  },
};

const refusal: Record<string, string> = {
  'a new key': 'Invalid station key.',
  'its service account disabled': 'This station is disabled.',
  'its service account deleted': 'Invalid station key.',
};

beforeAll(async () => {
  root = tempDir('labstation-revoked-');
  const serverDir = join(root, 'server');
  store = join(root, 'store');
  mkdirSync(store);
  const bundle = facilityBundle();
  delete bundle.station;
  const imported = await runCli(['import', '--data', serverDir, writeJson(root, 'b.json', bundle)]);
  expect(imported.stderr).toBe('');
  server = await startServer(serverDir, {
    LABSTATION_ADMIN_EMAIL: ADMIN.email,
    LABSTATION_ADMIN_PASSWORD: ADMIN.password,
  });
  serverDb = new Database(join(serverDir, 'labstation.db'), { readonly: true });
  adminJwt = await loginJwt(server.url, ADMIN);
  semId = serverDb.prepare("SELECT id FROM tools WHERE name = 'SEM'").pluck().get() as number;
  const location = await api('POST', '/api/storage-locations', {
    name: 'store',
    type: 'server',
    base_path: store,
  });
  expect(location.status, JSON.stringify(location.body)).toBe(201);
  locationId = Number(location.body.id);
}, 60_000);

afterAll(async () => {
  serverDb?.close();
  await server?.stop();
});

async function xxh3(data: Buffer): Promise<string> {
  return (await createXXHash128()).init().update(data).digest('hex');
}

async function openUpload(
  account: Account,
  data: Buffer,
  name = 'image.raw',
  key = account.key,
  fileUuid = newUuid(),
): Promise<{ upload_id: string; status: string; offset: number }> {
  const res = await fetch(`${server.url}sync/uploads`, {
    method: 'POST',
    headers: { authorization: `Station ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      file_uuid: fileUuid,
      storage_location_uuid: newUuid(),
      storage_location: 'store',
      destination_path: `${account.instrument}/${name}`,
      size: data.length,
      xxhash: await xxh3(data),
    }),
  });
  const body = (await res.json()) as { upload_id: string; status: string; offset: number };
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body;
}

/** One PATCH with the whole of `bytes`, at `offset`. */
async function append(
  upload: string,
  offset: number,
  bytes: Buffer,
  key: string,
): Promise<Record<string, unknown>> {
  const res = await fetch(`${server.url}sync/uploads/${upload}`, {
    method: 'PATCH',
    headers: {
      authorization: `Station ${key}`,
      'content-type': 'application/octet-stream',
      'upload-offset': String(offset),
    },
    body: bytes,
  });
  const body = (await res.json()) as Record<string, unknown>;
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body;
}

/**
 * PATCHes `bytes` at `offset`, the body sent in two parts: `between` runs once the server is
 * writing the first part to its partial file, before the rest is sent. Without a length the
 * body goes in chunks (Transfer-Encoding: chunked).
 */
async function appendAcross(
  account: Account,
  upload: string,
  offset: number,
  bytes: Buffer,
  options: { withLength: boolean },
  between: () => Promise<void>,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const partial = serverDb
    .prepare('SELECT partial_path FROM harvest_uploads WHERE uuid = ?')
    .pluck()
    .get(upload) as string;
  const req = request(`${server.url}sync/uploads/${upload}`, {
    method: 'PATCH',
    headers: {
      authorization: `Station ${account.key}`,
      'content-type': 'application/octet-stream',
      'upload-offset': String(offset),
      ...(options.withLength ? { 'content-length': bytes.length } : {}),
    },
  });
  const answer = new Promise<{ status: number; body: Record<string, unknown> }>(
    (resolve, reject) => {
      req.on('error', reject);
      req.on('response', (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body: JSON.parse(text) as Record<string, unknown>,
          }),
        );
      });
    },
  );
  const first = 2 * MiB;
  req.write(bytes.subarray(0, first));
  // The server writes in steps of 1 MiB: the first one on its disk, the body is being read.
  await waitFor('the server writing the body', () =>
    statSync(partial).size >= offset + MiB ? true : undefined,
  );
  await between();
  req.end(bytes.subarray(first));
  return answer;
}

function partials(): string[] {
  const folder = join(store, '.labstation-uploads');
  return existsSync(folder) ? readdirSync(folder) : [];
}

function uploadRows(upload: string): unknown {
  return serverDb
    .prepare('SELECT count(*) FROM harvest_uploads WHERE uuid = ?')
    .pluck()
    .get(upload);
}

describe('an upload whose station key ends while its body streams', () => {
  const cases: { how: string; withLength: boolean; chunks: 1 | 2 }[] = [
    { how: 'a new key', withLength: true, chunks: 1 },
    { how: 'its service account disabled', withLength: false, chunks: 1 },
    { how: 'its service account deleted', withLength: true, chunks: 1 },
    { how: 'a new key', withLength: true, chunks: 2 },
    { how: 'its service account deleted', withLength: false, chunks: 2 },
  ];
  it.each(cases)(
    '$how: 401, and no file, record or partial kept ($chunks request(s), length sent: $withLength)',
    async ({ how, withLength, chunks }) => {
      const account = await station(`up-${chunks}-${withLength}-${how.split(' ').pop()}`, true);
      const data = Buffer.alloc(6 * MiB, 7);
      const upload = (await openUpload(account, data)).upload_id;
      let offset = 0;
      if (chunks === 2) {
        // A first request that ends well: its bytes wait on the server for the rest.
        offset = 3 * MiB;
        const res = await fetch(`${server.url}sync/uploads/${upload}`, {
          method: 'PATCH',
          headers: {
            authorization: `Station ${account.key}`,
            'content-type': 'application/octet-stream',
            'upload-offset': '0',
          },
          body: data.subarray(0, offset),
        });
        expect(await res.json()).toMatchObject({ status: 'receiving', offset });
      }
      const answer = await appendAcross(
        account,
        upload,
        offset,
        data.subarray(offset),
        { withLength },
        () => revocations[how](account),
      );
      expect(answer).toEqual({ status: 401, body: { detail: refusal[how] } });
      expect(uploadRows(upload)).toBe(0);
      expect(partials()).toEqual([]);
      expect(existsSync(join(store, account.instrument))).toBe(false);
    },
  );
});

function partialOf(upload: string): string {
  return serverDb
    .prepare('SELECT partial_path FROM harvest_uploads WHERE uuid = ?')
    .pluck()
    .get(upload) as string;
}

describe('a station refused between the requests of its upload', () => {
  it.each(Object.keys(revocations))(
    "%s: its unfinished upload goes at once, record and partial; its finished one and another station's stay",
    async (how) => {
      const tag = how.split(' ').pop()!;
      const account = await station(`between-${tag}`, true);
      const other = await station(`beside-${tag}`, true);
      // A finished upload of its own (a station that has one is disabled, never deleted).
      const done = Buffer.alloc(MiB, 3);
      const finished = how.endsWith('deleted')
        ? null
        : (await openUpload(account, done, 'done.raw')).upload_id;
      if (finished) {
        expect(await append(finished, 0, done, account.key)).toMatchObject({
          status: 'completed',
        });
      }
      const data = Buffer.alloc(6 * MiB, 5);
      const upload = (await openUpload(account, data)).upload_id;
      expect(await append(upload, 0, data.subarray(0, 3 * MiB), account.key)).toMatchObject({
        status: 'receiving',
        offset: 3 * MiB,
      });
      const theirs = (await openUpload(other, data)).upload_id;
      await append(theirs, 0, data.subarray(0, MiB), other.key);
      const partial = partialOf(upload);
      const theirPartial = partialOf(theirs);
      expect(statSync(partial).size).toBe(3 * MiB);

      await revocations[how](account);
      // Not a week later with the abandoned ones: with the change.
      await waitFor(
        'its partial file removed',
        () => (existsSync(partial) ? undefined : true),
        5_000,
      );
      expect(uploadRows(upload)).toBe(0);
      expect(statSync(theirPartial).size).toBe(MiB);
      expect(uploadRows(theirs)).toBe(1);
      if (finished) {
        expect(readFileSync(join(store, account.instrument, 'done.raw')).equals(done)).toBe(true);
        expect(
          serverDb
            .prepare('SELECT state FROM harvest_uploads WHERE uuid = ?')
            .pluck()
            .get(finished),
        ).toBe('completed');
      }
      expect(existsSync(join(store, account.instrument, 'image.raw'))).toBe(false);
    },
  );

  it('a new key: the station that comes back with it sends its upload again from byte 0, and it completes', async () => {
    const account = await station('between-comeback', true);
    const data = Buffer.alloc(4 * MiB, 9);
    const fileUuid = newUuid();
    const first = await openUpload(account, data, 'image.raw', account.key, fileUuid);
    await append(first.upload_id, 0, data.subarray(0, 2 * MiB), account.key);
    const partial = partialOf(first.upload_id);
    const res = await fetch(`${server.url}rpc/admin.stations.newKey`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${adminJwt}` },
      body: JSON.stringify({ id: account.id }),
    });
    const { key } = (await res.json()) as { key: string };
    expect(res.status).toBe(200);

    const again = await openUpload(account, data, 'image.raw', key, fileUuid);
    expect(again).toMatchObject({ status: 'receiving', offset: 0 });
    expect(again.upload_id).not.toBe(first.upload_id);
    expect(await append(again.upload_id, 0, data, key)).toMatchObject({ status: 'completed' });
    expect(readFileSync(join(store, account.instrument, 'image.raw')).equals(data)).toBe(true);
    await waitFor('the first partial file removed', () => (existsSync(partial) ? undefined : true));
  });
});

describe('a pull held while its station key ends', () => {
  it.each(Object.keys(revocations))(
    '%s: answered 401 at once, not when its wait ends',
    async (how) => {
      const account = await station(`pull-${how.split(' ').pop()}`, false);
      const headers = { authorization: `Station ${account.key}` };
      const first = (await (
        await fetch(`${server.url}sync/changes?cursor=0`, { headers })
      ).json()) as {
        cursor: number;
      };
      const seen = (): unknown =>
        serverDb.prepare('SELECT last_seen_at FROM stations WHERE id = ?').pluck().get(account.id);
      const before = seen();
      const waiting = fetch(`${server.url}sync/changes?cursor=${first.cursor}&wait=30`, {
        headers,
      });
      await waitFor('the pull let in and held', () => (seen() !== before ? true : undefined));
      await revocations[how](account);
      const revokedAt = Date.now();
      const late = new Promise<'late'>((resolve) =>
        setTimeout(() => resolve('late'), 5_000).unref(),
      );
      const res = await Promise.race([waiting, late]);
      expect(res, 'the pull was still held 5 s after the key ended').not.toBe('late');
      const answered = res as Response;
      expect({ status: answered.status, body: await answered.json() }).toEqual({
        status: 401,
        body: { detail: refusal[how] },
      });
      expect(Date.now() - revokedAt).toBeLessThan(5_000);
    },
  );
});
