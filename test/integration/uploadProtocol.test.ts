/**
 * The upload API of a `server` storage location, asked directly (the server: uploadFixture.ts):
 * what it refuses (bytes that do not have the declared hash, destinations outside the location
 * or in another station's folders, bad requests, no valid key) and what a station harvesting
 * there is told of it; a resume after a restart, which trusts only the recorded bytes; the
 * sweep of abandoned uploads; and the indexes its lookups use.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import {
  appendFileSync,
  existsSync,
  linkSync,
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
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { sweepUploads } from '../../electron/core/server/uploads/cleanup.js';
import { UploadReceiver } from '../../electron/core/server/uploads/receive.js';
import { findLocation, uploadByUuid } from '../../electron/core/server/uploads/store.js';
import { UPLOADS_PATH, type UploadState } from '../../electron/core/sync/uploadProtocol.js';
import { createLogger } from '../../electron/core/util/log.js';
import { filesOf, harvestOnce, transfersOf } from './harvestSetup.js';
import { createStationKey, tempDir } from './helpers.js';
import {
  addInstrument,
  app,
  append,
  call,
  key,
  md5,
  MiB,
  open,
  partials,
  serverDb,
  serverDir,
  serverUrl,
  startApp,
  station,
  store,
  storeTree,
  until,
  useUploadServer,
  xxh3,
} from './uploadFixture.js';

useUploadServer();

/**
 * The server's upload receiver, asked directly (not over HTTP) for sem-station's upload of
 * `data` into `archive` at `destination`, every station let in.
 */
async function direct(fileUuid: string, destination: string, data: Buffer) {
  const receiver = new UploadReceiver({ db: serverDb, log: createLogger('silent') });
  const location = findLocation(serverDb, 'none', 'archive')!;
  const stationId = serverDb
    .prepare("SELECT id FROM stations WHERE name = 'sem-station'")
    .pluck()
    .get() as number;
  const key = {
    stationId,
    fileUuid,
    locationId: location.id,
    destination,
    size: data.length,
    xxhash: await xxh3(data),
  };
  const letIn = (): null => null;
  return { receiver, location, key, letIn };
}

describe('uploads into a server storage location', () => {
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

  it("a bit flipped on the server's disk: the re-read refuses what arrived whole (422), nothing kept", async () => {
    const data = randomBytes(100_000);
    const hash = await xxh3(data);
    const opened = await open({
      destination_path: 'flipped/data.bin',
      size: data.length,
      xxhash: hash,
    });
    const id = opened.body.upload_id as string;
    const before = process.env.LABSTATION_INJECT;
    process.env.LABSTATION_INJECT = 'upload.flip-bit';
    const answer = await append(id, 0, data).finally(() => {
      if (before === undefined) delete process.env.LABSTATION_INJECT;
      else process.env.LABSTATION_INJECT = before;
    });
    // The bytes arrived as declared: only the hash of the disk's copy can tell.
    expect(answer.status).toBe(422);
    expect(answer.body).toMatchObject({
      detail: expect.stringMatching(/the file re-read from the server's disk hashes to/) as string,
      received_hash: hash,
    });
    expect(answer.body.server_hash).not.toBe(hash);
    expect(storeTree('flipped')).toEqual([]);
    expect(partials()).toEqual([]);
  });

  it('a chunk resent from before the offset held: 409; a body without its length past the size: 400, the declared bytes kept', async () => {
    const data = randomBytes(1000);
    const hash = await xxh3(data);
    const opened = await open({
      destination_path: 'offsets/o.bin',
      size: data.length,
      xxhash: hash,
    });
    const id = opened.body.upload_id as string;
    expect((await append(id, 0, data.subarray(0, 600))).body).toMatchObject({ offset: 600 });
    // Written at 600, these bytes would shift the rest of the file.
    const resent = await append(id, 400, data.subarray(400, 700));
    expect(resent).toMatchObject({ status: 409, body: { offset: 600 } });
    expect(resent.body.detail).toMatch(/^Upload-Offset: is 400, but the server holds 600 bytes/);

    // Streamed (chunked, no Content-Length): the size is known only as the bytes arrive.
    const tail = Buffer.concat([data.subarray(600), randomBytes(50)]);
    const streamed = await fetch(new URL(`${UPLOADS_PATH.slice(1)}/${id}`, serverUrl), {
      method: 'PATCH',
      headers: {
        authorization: `Station ${key}`,
        'content-type': 'application/octet-stream',
        'upload-offset': '600',
      },
      body: new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new Uint8Array(tail));
          controller.close();
        },
      }),
      duplex: 'half',
    });
    expect(streamed.status).toBe(400);
    expect(((await streamed.json()) as { detail: string }).detail).toMatch(
      /^body: longer than the 1000 bytes declared/,
    );
    expect((await call('GET', `${UPLOADS_PATH}/${id}`)).body).toMatchObject({
      status: 'receiving',
      offset: 1000,
    });
    expect((await append(id, 1000, Buffer.alloc(0))).body).toMatchObject({
      status: 'completed',
      dest_checksum: hash,
    });
    expect(md5(readFileSync(join(store, 'offsets', 'o.bin')))).toBe(md5(data));
  });

  it('a link made in the destination after the upload opened: refused as its file is placed, nothing outside', async () => {
    const data = randomBytes(1000);
    const opened = await open({
      destination_path: 'late-link/x.bin',
      size: data.length,
      xxhash: await xxh3(data),
    });
    const id = opened.body.upload_id as string;
    const outside = tempDir('labstation-outside-late-');
    symlinkSync(outside, join(store, 'late-link'));
    const answer = await append(id, 0, data);
    expect(answer.status).toBe(400);
    expect(answer.body.detail).toMatch(/^destination_path: the folder leads outside/);
    expect(readdirSync(outside)).toEqual([]);
    expect(partials()).toEqual([]);
    rmSync(join(store, 'late-link'));
  });

  it('the same content placed at the destination while the upload was written: skipped, nothing else made', async () => {
    const data = randomBytes(1000);
    const hash = await xxh3(data);
    const opened = await open({
      destination_path: 'meanwhile/m.bin',
      size: data.length,
      xxhash: hash,
    });
    const id = opened.body.upload_id as string;
    mkdirSync(join(store, 'meanwhile'));
    writeFileSync(join(store, 'meanwhile', 'm.bin'), data);
    expect((await append(id, 0, data)).body).toMatchObject({
      status: 'skipped',
      destination_path: 'meanwhile/m.bin',
      dest_checksum: hash,
    });
    expect(storeTree('meanwhile')).toEqual(['m.bin']);
    expect(partials()).toEqual([]);
  });

  it('other content of the same size at the destination is not the same: sent, and placed beside it', async () => {
    const data = randomBytes(1000);
    const other = randomBytes(1000);
    mkdirSync(join(store, 'same-size'));
    writeFileSync(join(store, 'same-size', 's.bin'), other);
    const hash = await xxh3(data);
    const opened = await open({
      destination_path: 'same-size/s.bin',
      size: data.length,
      xxhash: hash,
    });
    expect(opened.body).toMatchObject({ status: 'receiving', offset: 0 });
    const done = await append(opened.body.upload_id as string, 0, data);
    expect(done.body).toMatchObject({
      status: 'completed',
      destination_path: 'same-size/s (1).bin',
    });
    expect(md5(readFileSync(join(store, 'same-size', 's.bin')))).toBe(md5(other));
    expect(md5(readFileSync(join(store, 'same-size', 's (1).bin')))).toBe(md5(data));
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

  it("refuses a base_path that has come to lead to another server location's folder since it was saved", async () => {
    // Another server location, and this one's base made (after its save) a link into it.
    const other = join(tempDir('labstation-other-'), 'store');
    mkdirSync(join(other, 'sem-9'), { recursive: true });
    const now = new Date().toISOString();
    serverDb
      .prepare(
        `INSERT INTO storage_locations (uuid, name, type, base_path, enabled, created_at, updated_at)
         VALUES (?, 'other', 'server', ?, 1, ?, ?)`,
      )
      .run(randomUUID(), other, now, now);
    const later = join(tempDir('labstation-later-'), 'store');
    const hash = await xxh3(Buffer.from('x'));
    const setBase = (path: string) =>
      serverDb
        .prepare("UPDATE storage_locations SET base_path = ? WHERE name = 'archive'")
        .run(path);
    const before = await open({ destination_path: 'resumed.eml', size: 1, xxhash: hash });
    expect(before.status).toBe(200);
    const rule =
      /^storage_location: archive \(.*\) leads to .*, which is the folder of the server storage location other, inside it, or holds it/;
    try {
      for (const target of [other, join(other, 'sem-9'), dirname(other)]) {
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
      }
    } finally {
      setBase(store);
      serverDb.prepare("DELETE FROM storage_locations WHERE name = 'other'").run();
    }
    expect(
      (await call('DELETE', `${UPLOADS_PATH}/${before.body.upload_id as string}`)).status,
    ).toBe(204);
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
      // A file where the folder itself, or a folder holding it, must be: it would fail every
      // file of the other station's instrument.
      addInstrument('sem-3', 'tem-station', 'data/{instrument}/{relative_path}');
      for (const [path, folder] of [
        ['sem-2', 'sem-2/'],
        ['SEM-2.', 'sem-2/'],
        ['data', 'data/sem-3/'],
        ['data/sem-3', 'data/sem-3/'],
      ]) {
        const refused = await open({ destination_path: path, size: 1, xxhash: hash });
        expect(refused.status, path).toBe(403);
        expect(refused.body, path).toMatchObject({
          detail:
            `destination_path: ${path} would stand where ${folder} is, the folder of the ` +
            `instrument ${folder.replace(/^data\//, '').replace(/\/$/, '')}, which another station runs`,
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
      serverDb.prepare("DELETE FROM instruments WHERE name IN ('sem-2', 'sem-3')").run();
    }
  });

  it('a file on the server where the destination needs a folder: 409 naming it, not a server error', async () => {
    const hash = await xxh3(Buffer.from('x'));
    writeFileSync(join(store, 'blocked'), 'put there by hand');
    try {
      const refused = await open({ destination_path: 'blocked/a.bin', size: 1, xxhash: hash });
      expect(refused.status).toBe(409);
      expect(refused.body.code).toBe('destination_blocked');
      expect(refused.body.detail).toMatch(
        /^destination_path: a file on the server stands where the destination needs a folder \(.*blocked.*\); an admin must move it$/,
      );
      // Through a station: a failed transfer that says so, tried again after its backoff (an
      // admin may move the file meanwhile), not left until someone presses Retry.
      const dirs = await station('blocked');
      writeFileSync(join(dirs.src, 'a.txt'), 'a');
      expect((await harvestOnce(dirs.data)).code).toBe(1);
      const [failed] = await transfersOf(dirs.data);
      expect(failed?.error).toMatch(
        /^the server refused the upload: destination_path: a file on the server stands where/,
      );
      const [file] = await filesOf(dirs.data);
      expect(file?.state).toBe('failed');
      expect(file?.next_attempt_at).not.toBeNull();
    } finally {
      rmSync(join(store, 'blocked'));
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

  it('an upload placed before the server stopped, then superseded by a newer version: recorded, not dropped', async () => {
    const data = randomBytes(2000);
    const fields = {
      file_uuid: 'placed-then-superseded',
      destination_path: 'superseded/s.bin',
      size: data.length,
      xxhash: await xxh3(data),
    };
    const id = (await open(fields)).body.upload_id as string;
    // The server stops short after the link: the file is at its name, its record unfinished.
    process.env.LABSTATION_INJECT = 'upload.placed-unrecorded';
    try {
      expect((await append(id, 0, data)).status).toBe(500);
    } finally {
      delete process.env.LABSTATION_INJECT;
    }
    expect(uploadByUuid(serverDb, id)).toMatchObject({ state: 'receiving' });
    expect(storeTree('superseded')).toEqual(['s.bin']);

    // The file changed on the station before it asked again: its newer version supersedes
    // the upload, which is found placed and recorded so, its file kept.
    const newer = randomBytes(3000);
    const opened = await open({ ...fields, size: newer.length, xxhash: await xxh3(newer) });
    expect(opened.body).toMatchObject({ status: 'receiving', offset: 0 });
    expect(uploadByUuid(serverDb, id)).toMatchObject({
      state: 'completed',
      final_path: 'superseded/s.bin',
      dest_checksum: fields.xxhash,
    });
    expect(md5(readFileSync(join(store, 'superseded', 's.bin')))).toBe(md5(data));
    // The newer version's upload is given up (a later test sweeps what is left).
    const newerId = opened.body.upload_id as string;
    expect((await call('DELETE', `${UPLOADS_PATH}/${newerId}`)).status).toBe(204);
  });

  it('a mark of a name whose file is not this upload is not taken for it; one still linked to its partial is', async () => {
    const data = randomBytes(1500);
    const fields = { size: data.length, xxhash: await xxh3(data) };
    const stopAfterLink = async (destination: string, file: string) => {
      const id = (await open({ ...fields, file_uuid: file, destination_path: destination })).body
        .upload_id as string;
      process.env.LABSTATION_INJECT = 'upload.placed-unrecorded';
      try {
        expect((await append(id, 0, data)).status).toBe(500);
      } finally {
        delete process.env.LABSTATION_INJECT;
      }
      return { id, row: uploadByUuid(serverDb, id)! };
    };

    // The link made, its partial name not yet removed: still the same file, taken as placed.
    const linked = await stopAfterLink('marks/linked.bin', 'marks-linked');
    const placed = join(store, 'marks', 'linked.bin');
    linkSync(placed, linked.row.partial_path!);
    expect((await call('GET', `${UPLOADS_PATH}/${linked.id}`)).body).toMatchObject({
      status: 'receiving',
    });
    expect(
      (await open({ ...fields, file_uuid: 'marks-linked', destination_path: 'marks/linked.bin' }))
        .body,
    ).toMatchObject({ status: 'completed' });
    expect(partials()).toEqual([]);

    // The same content at the name, but this upload's partial is another file (the link never
    // happened: the name was another's): not taken; its bytes are placed, or skipped, anew.
    const other = await stopAfterLink('marks/other.bin', 'marks-other');
    writeFileSync(other.row.partial_path!, data);
    const resumed = await open({
      ...fields,
      file_uuid: 'marks-other',
      destination_path: 'marks/other.bin',
    });
    expect(resumed.body).toMatchObject({ status: 'receiving', offset: data.length });
    expect(uploadByUuid(serverDb, other.id)).toMatchObject({ placing_path: null });
    expect((await append(other.id, data.length, Buffer.alloc(0))).body).toMatchObject({
      status: 'skipped',
    });
    expect(storeTree('marks').sort()).toEqual(['linked.bin', 'other.bin']);
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
    // A live upload's partial is not an orphan, however old the file looks (a clock moved, a
    // copy restored): only its record's age counts.
    const live = serverDb
      .prepare('SELECT partial_path FROM harvest_uploads WHERE uuid = ?')
      .pluck()
      .get(id) as string;
    const old = new Date(Date.now() - 30 * 24 * 3600_000);
    utimesSync(live, old, old);
    expect(await sweepUploads(deps)).toMatchObject({ dropped: 0, orphans: 0 });
    expect(existsSync(live)).toBe(true);

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

  // Mutation: the DELETE route answering 204 whatever drop found: the upload was placed by the
  // PATCH at work on it (its turn came first) and stayed, completed, after a 204 said dropped.
  it('a DELETE behind a PATCH that places the file answers 409: the finished upload stays', async () => {
    const data = randomBytes(32 * MiB);
    const opened = await open({
      destination_path: 'raced/delete.bin',
      size: data.length,
      xxhash: await xxh3(data),
    });
    const id = opened.body.upload_id as string;
    const patching = append(id, 0, data);
    // Every byte in: the PATCH now verifies and places the file, in the upload's turn.
    await until(
      'all its bytes recorded',
      () => uploadByUuid(serverDb, id)?.received === data.length,
      patching,
    );
    const dropped = await call('DELETE', `${UPLOADS_PATH}/${id}`);
    expect(await patching).toMatchObject({ status: 200, body: { status: 'completed' } });
    expect(dropped).toEqual({
      status: 409,
      body: expect.objectContaining({
        detail: 'upload: already completed; a finished upload stays',
      }) as unknown,
    });
    expect((await call('GET', `${UPLOADS_PATH}/${id}`)).body).toMatchObject({
      status: 'completed',
    });
    expect(md5(readFileSync(join(store, 'raced', 'delete.bin')))).toBe(md5(data));
  });

  it('the sweep leaves an upload whose body is still being written, however old its record', async () => {
    const data = randomBytes(2 * MiB);
    const { receiver, location, key, letIn } = await direct('writing-1', 'writing/w.bin', data);
    const opened = await receiver.open(location, key, letIn);
    const row = uploadByUuid(serverDb, opened.upload_id)!;
    const body = new PassThrough();
    const appending = receiver.append(row, location, 0, body, data.length, letIn);
    body.write(data.subarray(0, MiB));
    const partial = row.partial_path!;
    await until('its first MiB written', () => statSync(partial).size >= MiB, appending);

    // Its record untouched for more than the age of an abandoned upload (by the sweep's clock),
    // while its request is still at work on it.
    const week = 7 * 24 * 3600_000;
    await sweepUploads(
      { db: serverDb, log: createLogger('silent'), receiver },
      { now: Date.now() + week + 60_000 },
    );
    expect(uploadByUuid(serverDb, row.uuid)).toMatchObject({ state: 'receiving' });
    expect(existsSync(partial)).toBe(true);
    body.end(data.subarray(MiB));
    expect(await appending).toMatchObject({ status: 'completed', offset: data.length });
    expect(md5(readFileSync(join(store, 'writing', 'w.bin')))).toBe(md5(data));
  });

  // Mutation: the partial made outside the upload's turn, as it was: the second POST, finding
  // the first's record, made the partial too and failed ("file already exists": a 500).
  it('two POSTs for the same new file at once: one opens it, the other resumes it', async () => {
    const data = randomBytes(MiB);
    const { receiver, location, key, letIn } = await direct('twice-1', 'twice/t.bin', data);
    const [a, b] = await Promise.all([
      receiver.open(location, key, letIn),
      receiver.open(location, key, letIn),
    ]);
    expect(a).toMatchObject({ status: 'receiving', offset: 0 });
    expect(b).toMatchObject({ status: 'receiving', offset: 0, upload_id: a.upload_id });
    const row = uploadByUuid(serverDb, a.upload_id)!;
    const done = await receiver.append(
      row,
      location,
      0,
      PassThrough.from(data),
      data.length,
      letIn,
    );
    expect(done).toMatchObject({ status: 'completed' });
  });

  // Mutation: the PATCH checking only that the upload is the station's own, as it did: the
  // station that no longer runs the instrument finished its upload (200 completed).
  it('a PATCH after the station lost the instrument that stores there: 403, nothing placed', async () => {
    const data = randomBytes(2 * MiB);
    const opened = await open({
      destination_path: 'lost/l.bin',
      size: data.length,
      xxhash: await xxh3(data),
    });
    expect(opened.status).toBe(200);
    const id = opened.body.upload_id as string;
    expect((await append(id, 0, data.subarray(0, MiB))).status).toBe(200);
    const give = serverDb.prepare(
      `UPDATE instruments SET station_id = (SELECT id FROM stations WHERE name = ?)
       WHERE name = 'sem-1'`,
    );
    give.run('nobody');
    try {
      const rest = await append(id, MiB, data.subarray(MiB));
      expect(rest.status).toBe(403);
      expect(rest.body.detail).toMatch(/^storage_location: archive is not used by an instrument/);
      expect(existsSync(join(store, 'lost', 'l.bin'))).toBe(false);
    } finally {
      give.run('sem-station');
    }
    // Given back, the same upload goes on from where it was.
    const resumed = await append(id, MiB, data.subarray(MiB));
    expect(resumed.status).toBe(200);
    expect(md5(readFileSync(join(store, 'lost', 'l.bin')))).toBe(md5(data));
  });

  // Mutation: no cut after a failed write, as it was: the partial kept the 2 MiB written past
  // the recorded offset (0), the disk full for every other upload until this one resumed.
  it('a disk full midway: the bytes past the recorded offset are cut, and the resume completes', async () => {
    const data = randomBytes(4 * MiB);
    const { receiver, location, key, letIn } = await direct('full-1', 'full/f.bin', data);
    const opened = await receiver.open(location, key, letIn);
    const row = uploadByUuid(serverDb, opened.upload_id)!;
    const partial = row.partial_path!;
    const flag = join(tempDir(), 'disk-full');
    process.env.LABSTATION_INJECT_ENOSPC_WHILE = flag;
    try {
      const body = new PassThrough();
      const appending = receiver.append(row, location, 0, body, data.length, letIn);
      body.write(data.subarray(0, 2 * MiB));
      await until('two MiB written', () => statSync(partial).size >= 2 * MiB, appending);
      writeFileSync(flag, '');
      body.end(data.subarray(2 * MiB));
      await expect(appending).rejects.toMatchObject({ code: 'ENOSPC' });
      expect(uploadByUuid(serverDb, row.uuid)?.received).toBe(0);
      expect(statSync(partial).size).toBe(0);
      // Space again: the station's resume from the recorded offset completes.
      rmSync(flag);
      const resumed = await receiver.append(
        uploadByUuid(serverDb, row.uuid)!,
        location,
        0,
        PassThrough.from(data),
        data.length,
        letIn,
      );
      expect(resumed).toMatchObject({ status: 'completed', offset: data.length });
      expect(md5(readFileSync(join(store, 'full', 'f.bin')))).toBe(md5(data));
    } finally {
      delete process.env.LABSTATION_INJECT_ENOSPC_WHILE;
    }
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
