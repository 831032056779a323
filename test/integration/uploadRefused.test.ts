/**
 * A station refused (given a new key, disabled, deleted) while its upload is at work on the
 * server (the server: uploadFixture.ts), in the receiver and over HTTP: what its requests are
 * answered, and that nothing of the upload stays (its record, its partial, its placed file,
 * the empty folders made for it), nor reaches another station's upload.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { newStationKey } from '../../electron/core/server/admin/credentials.js';
import { serviceAccounts } from '../../electron/core/server/harvest/serviceAccounts.js';
import { storageLocations } from '../../electron/core/server/harvest/storageLocations.js';
import { refusalFor } from '../../electron/core/server/sync/stationAuth.js';
import { UploadReceiver } from '../../electron/core/server/uploads/receive.js';
import { findLocation, uploadByUuid } from '../../electron/core/server/uploads/store.js';
import { UPLOADS_PATH } from '../../electron/core/sync/uploadProtocol.js';
import { nowIso } from '../../electron/core/util/ids.js';
import { createLogger } from '../../electron/core/util/log.js';
import { createStationKey } from './helpers.js';
import {
  addInstrument,
  call,
  MiB,
  partials,
  placedBy,
  serverDb,
  serverDir,
  store,
  until,
  useUploadServer,
  xxh3,
} from './uploadFixture.js';

useUploadServer();

describe('uploads into a server storage location', () => {
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

    it.each([
      { how: 'a new key', detail: 'Invalid station key.' },
      { how: 'disabled', detail: 'This station is disabled.' },
    ])(
      '$how after its upload finished: a request let in before gets its 401 at its turn, and the finished record and file stay',
      async ({ how, detail }) => {
        const uploads = receiver();
        const station = await letIn(`finished-${how.replace(/ /g, '-')}`);
        const { data, location, row } = await opened(uploads, station);
        const done = await uploads.append(
          row,
          location,
          0,
          Readable.from([data]),
          data.length,
          station.refusedNow,
        );
        expect(done.status).toBe('completed');
        if (how === 'disabled') {
          serviceAccounts.update({ db: serverDb, actor: { id: 1 }, now: nowIso() }, station.id, {
            enabled: false,
          });
        } else {
          newStationKey(serverDb, station.id);
        }
        // Let in before the change (a retry of its last bytes); its work begins after it.
        const late = uploads.append(row, location, 0, null, 0, station.refusedNow);
        await expect(late).rejects.toMatchObject({ status: 401, detail });
        expect(uploadByUuid(serverDb, row.uuid)).toMatchObject({
          state: 'completed',
          final_path: row.destination_path,
        });
        expect(readFileSync(join(store, row.destination_path)).equals(data)).toBe(true);
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

  it('a storage location moved to another folder while an upload into it is unfinished: its record and partial go, and the upload is opened anew there', async () => {
    const account = serverDb
      .prepare("SELECT id, uuid, name, tool_id FROM stations WHERE name = 'sem-station'")
      .get() as { id: number; uuid: string; name: string; tool_id: number | null };
    const before = join(serverDir, '..', 'moving-store');
    const after = join(serverDir, '..', 'moved-store');
    mkdirSync(before);
    mkdirSync(after);
    const now = nowIso();
    serverDb
      .prepare(
        `INSERT INTO storage_locations (uuid, name, type, base_path, enabled, created_at, updated_at)
         VALUES (?, 'moving', 'server', ?, 1, ?, ?)`,
      )
      .run(randomUUID(), before, now, now);
    const location = findLocation(serverDb, 'none', 'moving')!;
    const data = randomBytes(1000);
    const uploads = new UploadReceiver({ db: serverDb, log: createLogger('silent') });
    const key = {
      stationId: account.id,
      fileUuid: randomUUID(),
      locationId: location.id,
      destination: 'run/frame.bin',
      size: data.length,
      xxhash: await xxh3(data),
    };
    const state = await uploads.open(location, key, () => null);
    const partial = uploadByUuid(serverDb, state.upload_id)!.partial_path!;
    expect(partial.startsWith(before)).toBe(true);
    // Renamed only: the upload stays where it is.
    storageLocations.update({ db: serverDb, actor: { id: 1 }, now: nowIso() }, location.id, {
      name: 'moving-renamed',
    });
    expect(uploadByUuid(serverDb, state.upload_id)).toBeDefined();
    // Moved: a partial under the old folder could never be placed in the new one (another
    // file system, say), and the sweep walks only the folders locations have now.
    storageLocations.update({ db: serverDb, actor: { id: 1 }, now: nowIso() }, location.id, {
      base_path: after,
    });
    expect(uploadByUuid(serverDb, state.upload_id)).toBeUndefined();
    for (let i = 0; i < 100 && existsSync(partial); i++)
      await new Promise((r) => setTimeout(r, 10));
    expect(existsSync(partial)).toBe(false);
    // The station's next request for the file opens it anew, under the new folder.
    const moved = findLocation(serverDb, 'none', 'moving-renamed')!;
    const again = await uploads.open(moved, key, () => null);
    expect(again.upload_id).not.toBe(state.upload_id);
    expect(uploadByUuid(serverDb, again.upload_id)!.partial_path!.startsWith(after)).toBe(true);
    storageLocations.remove({ db: serverDb, actor: { id: 1 }, now: nowIso() }, moved.id);
  });

  it('a storage location deleted while an upload into it is unfinished: its record and partial go with it', async () => {
    const account = serverDb
      .prepare("SELECT id, uuid, name, tool_id FROM stations WHERE name = 'sem-station'")
      .get() as { id: number; uuid: string; name: string; tool_id: number | null };
    const spare = join(serverDir, '..', 'spare-store');
    mkdirSync(spare);
    const now = nowIso();
    serverDb
      .prepare(
        `INSERT INTO storage_locations (uuid, name, type, base_path, enabled, created_at, updated_at)
         VALUES (?, 'spare', 'server', ?, 1, ?, ?)`,
      )
      .run(randomUUID(), spare, now, now);
    const location = findLocation(serverDb, 'none', 'spare')!;
    const data = randomBytes(1000);
    const uploads = new UploadReceiver({ db: serverDb, log: createLogger('silent') });
    const state = await uploads.open(
      location,
      {
        stationId: account.id,
        fileUuid: randomUUID(),
        locationId: location.id,
        destination: 'run/frame.bin',
        size: data.length,
        xxhash: await xxh3(data),
      },
      () => null,
    );
    const partial = uploadByUuid(serverDb, state.upload_id)!.partial_path!;
    expect(existsSync(partial)).toBe(true);
    storageLocations.remove({ db: serverDb, actor: { id: 1 }, now: nowIso() }, location.id);
    expect(uploadByUuid(serverDb, state.upload_id)).toBeUndefined();
    // Removed once the change is done (its transaction committed); the sweep walks only the
    // locations there are, so it would have stayed for good.
    for (let i = 0; i < 100 && existsSync(partial); i++)
      await new Promise((r) => setTimeout(r, 10));
    expect(existsSync(partial)).toBe(false);
  });
});
