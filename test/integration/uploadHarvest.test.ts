/**
 * Stations harvesting into a `server` storage location through the real `labstation harvest
 * --once` (the server: uploadFixture.ts): files completed with the hash the server computed,
 * skipped or written under a new name at the destination, resumed after a cut, refused when a
 * bit flips on the way; and the transfers that fail because the upload cannot be made (a
 * source that changes, a key another Labstation holds, no server set, an answer that does not
 * parse).
 */
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import {
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../electron/core/db/open.js';
import { hashFile } from '../../electron/core/harvest/copy.js';
import {
  uploadVerified,
  type UploadDeps,
  type UploadJob,
  type UploadOutcome,
} from '../../electron/core/harvest/upload.js';
import { HarvestStopped } from '../../electron/core/harvest/commandHook.js';
import { setSetting } from '../../electron/core/station/settings.js';
import { createLogger } from '../../electron/core/util/log.js';
import { forwardTo, passOn, startHttpProxy } from './httpForward.js';
import { filesOf, harvestOnce, listTree, transfersOf, withDb } from './harvestSetup.js';
import { CLI, tempDir, waitFor } from './helpers.js';
import {
  app,
  append,
  call,
  key,
  md5,
  MiB,
  open,
  partials,
  proxy,
  serverDb,
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
 * Uploads `job` as a station does (uploadVerified), hashing with `hash`, from a station database
 * made in `dir` that names the server and the key; the database is closed once it answers.
 */
async function uploadFromStation(
  dir: string,
  hash: UploadDeps['hash'],
  job: UploadJob,
  server = serverUrl,
  progress: UploadDeps['progress'] = () => undefined,
  signal?: AbortSignal,
): Promise<UploadOutcome> {
  const stationDb = openDatabase(join(dir, 'station.db'));
  setSetting(stationDb, 'sync.server', server);
  setSetting(stationDb, 'sync.key', key);
  try {
    const deps: UploadDeps = {
      db: stationDb,
      log: createLogger('silent'),
      hash,
      progress,
      ...(signal ? { signal } : {}),
    };
    return await uploadVerified(deps, job);
  } finally {
    stationDb.close();
  }
}

/**
 * A server that takes connections and bytes and never answers (a firewall or VPN dropping the
 * answers): the station's request waits its idle time (60 s), then retries, six times.
 */
async function silentServer(): Promise<{ url: string; bytes(): number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let bytes = 0;
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('data', (chunk) => (bytes += chunk.length));
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/`,
    bytes: () => bytes,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
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

  it('a server stopped between placing a file and recording it: the upload asked for again is recorded completed there', async () => {
    const dirs = await station('stopped');
    const data = randomBytes(300_000);
    writeFileSync(join(dirs.src, 'image.raw'), data);
    mkdirSync(join(store, 'stopped'));
    writeFileSync(join(store, 'stopped', 'image.raw'), 'someone else');

    // The server (in this process) stops short after each link: no record of the placed file.
    // The station asks for the upload again: it is found placed, and recorded completed at its
    // name, as it was, not sent again and taken for a skip.
    process.env.LABSTATION_INJECT = 'upload.placed-unrecorded';
    let run;
    try {
      run = await harvestOnce(dirs.data);
    } finally {
      delete process.env.LABSTATION_INJECT;
    }
    expect(run.stdout).toContain('harvest: 1 completed, 0 skipped, 0 failed');
    const [done] = await transfersOf(dirs.data);
    expect(done).toMatchObject({
      status: 'completed',
      checksum_verified: true,
      destination_path: join(store, 'stopped', 'image (1).raw'),
    });
    expect(done?.note).toMatch(
      /this copy was written as image \(1\)\.raw; recorded after the server restarted/,
    );
    expect(storeTree('stopped').sort()).toEqual(['image (1).raw', 'image.raw']);
    expect(md5(readFileSync(join(store, 'stopped', 'image (1).raw')))).toBe(md5(data));
    expect(readFileSync(join(store, 'stopped', 'image.raw'), 'utf8')).toBe('someone else');
    expect(partials()).toEqual([]);
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

  it('a source that changes while uploaded (same size and mtime) is never completed', async () => {
    const dir = tempDir('labstation-upload-src-');
    const source = join(dir, 'changing.bin');
    const data = randomBytes(3 * MiB);
    writeFileSync(source, data);
    const before = statSync(source);
    const outcome = await uploadFromStation(
      dir,
      // The file changes right after it was hashed, keeping its size and mtime.
      async (path) => {
        const hashed = await hashFile(path);
        writeFileSync(path, randomBytes(data.length));
        utimesSync(path, before.atime, before.mtime);
        return hashed;
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
  });

  // Mutation: uploadVerified hashing the whole source before it says the transfer started (a
  // 20 GB file showed as queued, with no bar, for the minutes of its hash).
  it('says the upload started when its hash starts', async () => {
    const dir = tempDir('labstation-upload-start-');
    const source = join(dir, 'start.bin');
    const data = randomBytes(256 * 1024);
    writeFileSync(source, data);
    const fileUuid = `start-${randomUUID()}`;
    const job: UploadJob = {
      file: {
        uuid: fileUuid,
        source_path: source,
        size: data.length,
        mtime_ms: statSync(source).mtimeMs,
      },
      location: { uuid: 'x', name: 'archive' },
      destination: `start/${fileUuid}.bin`,
    };
    const reported: number[] = [];
    let reportedWhenHashed: number[] | null = null;
    // As CopyPool.hash: `started` once a worker begins the hash.
    const hashing: UploadDeps['hash'] = (path, started) => {
      started?.();
      reportedWhenHashed = [...reported];
      return hashFile(path);
    };
    const outcome = await uploadFromStation(dir, hashing, job, serverUrl, (bytes) =>
      reported.push(bytes),
    );
    expect(outcome.outcome).toBe('finished');
    expect(reportedWhenHashed).toEqual([0]);
    expect(reported.at(-1)).toBe(data.length);
  });

  it('an answer that does not parse: no byte sent or transfer counted on it, the field named; the next attempt completes', async () => {
    /** What the proxy does to the next 200 answer of `method` (then passed on as it came). */
    const spoils: { method: string; change: (answer: Record<string, unknown>) => void }[] = [];
    const through = await startHttpProxy(
      forwardTo(new URL(serverUrl), (answer, response, request) => {
        const spoil = spoils[0];
        if (spoil?.method !== request.method || answer.statusCode !== 200) {
          passOn(answer, response, request);
          return;
        }
        spoils.shift();
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () => {
          const body = JSON.parse(Buffer.concat(chunks).toString()) as Record<string, unknown>;
          spoil.change(body);
          response.writeHead(200, { 'content-type': 'application/json' });
          response.end(JSON.stringify(body));
        });
      }),
    );
    try {
      const dir = tempDir('labstation-upload-answer-');
      const source = join(dir, 'answer.bin');
      const data = randomBytes(2 * MiB);
      writeFileSync(source, data);
      const fileUuid = `answer-${randomUUID()}`;
      const job: UploadJob = {
        file: {
          uuid: fileUuid,
          source_path: source,
          size: data.length,
          mtime_ms: statSync(source).mtimeMs,
        },
        location: { uuid: 'x', name: 'archive' },
        destination: `answer/${fileUuid}.bin`,
      };
      const upload = () => uploadFromStation(dir, (path) => hashFile(path), job, through.url);
      const received = () =>
        serverDb
          .prepare('SELECT received FROM harvest_uploads WHERE file_uuid = ?')
          .pluck()
          .get(fileUuid);

      // The opening answer with its offset as text: the station cannot know where to start.
      spoils.push({ method: 'POST', change: (answer) => (answer.offset = String(answer.offset)) });
      expect(await upload()).toEqual({
        outcome: 'failed',
        reason:
          "the server's upload answer does not parse, nothing of it used: offset: Invalid " +
          'input: expected number, received string',
        retry: true,
      });
      expect(spoils).toEqual([]);
      expect(received()).toBe(0);

      // An offset beyond the file would skip bytes: refused, naming the rule.
      spoils.push({ method: 'POST', change: (answer) => (answer.offset = data.length + 1) });
      expect(await upload()).toEqual({
        outcome: 'failed',
        reason:
          "the server's upload answer does not parse, nothing of it used: offset: must not be " +
          'beyond size',
        retry: true,
      });
      expect(received()).toBe(0);

      // The last answer claiming the check as text: without the schema, "yes" read as true.
      spoils.push({ method: 'PATCH', change: (answer) => (answer.checksum_verified = 'yes') });
      expect(await upload()).toEqual({
        outcome: 'failed',
        reason:
          "the server's upload answer does not parse, nothing of it used: checksum_verified: " +
          'Invalid input: expected boolean, received string',
        retry: true,
      });
      expect(spoils).toEqual([]);

      // Answered as it came: the finished upload answers its result again, nothing is sent twice.
      const outcome = await upload();
      expect(outcome, JSON.stringify(outcome)).toMatchObject({
        outcome: 'finished',
        sourceHash: await xxh3(data),
        state: { status: 'completed', offset: data.length, checksum_verified: true },
      });
      expect(md5(readFileSync(join(store, job.destination)))).toBe(md5(data));
      expect(partials()).toEqual([]);
    } finally {
      await through.close();
    }
  });

  it.each([
    { older: 'left unfinished', change: 'other content of the same size', size: 3 * MiB },
    { older: 'left unfinished', change: 'another size', size: 3 * MiB + 4321 },
    { older: 'finished, its answer lost', change: 'another size', size: 3 * MiB + 4321 },
  ])(
    'a new version of a file ($change), its older one $older: an upload of its own, not the older one',
    async ({ older, size }) => {
      const dir = tempDir('labstation-upload-version-');
      const source = join(dir, 'version.bin');
      const fileUuid = `version-${randomUUID()}`;
      const destination = `version/${fileUuid}.bin`;
      // The older version's upload, under the same record (its uuid) and destination: left at
      // its first MiB (a station stopped mid-file), or finished (a station that missed the
      // answer, its transfer failed, then the file changed).
      const before = randomBytes(3 * MiB);
      const left = await open({
        file_uuid: fileUuid,
        destination_path: destination,
        size: before.length,
        xxhash: await xxh3(before),
      });
      const leftId = left.body.upload_id as string;
      const finished = older !== 'left unfinished';
      const sent = finished ? before : before.subarray(0, MiB);
      expect((await append(leftId, 0, sent)).body).toMatchObject({
        status: finished ? 'completed' : 'receiving',
        offset: sent.length,
      });
      // The file as it is now: the same path and record, another version.
      const data = randomBytes(size);
      writeFileSync(source, data);
      const now = statSync(source);
      const outcome = await uploadFromStation(dir, (path) => hashFile(path), {
        file: { uuid: fileUuid, source_path: source, size, mtime_ms: now.mtimeMs },
        location: { uuid: 'x', name: 'archive' },
        destination,
      });
      expect(outcome, JSON.stringify(outcome)).toMatchObject({
        outcome: 'finished',
        sourceHash: await xxh3(data),
        state: { status: 'completed', offset: size },
      });
      const { state } = outcome as Extract<typeof outcome, { outcome: 'finished' }>;
      expect(state.upload_id).not.toBe(leftId);
      expect(md5(readFileSync(state.server_path!))).toBe(md5(data));
      if (finished) {
        // The older version's file and record stay; the new one is placed beside it.
        expect(md5(readFileSync(join(store, destination)))).toBe(md5(before));
        expect((await call('GET', `/sync/uploads/${leftId}`)).body).toMatchObject({
          status: 'completed',
        });
      } else {
        // The older version's upload went, with its bytes.
        expect(state.server_path).toBe(join(store, destination));
        expect((await call('GET', `/sync/uploads/${leftId}`)).status).toBe(404);
      }
      expect(partials()).toEqual([]);
    },
  );

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

  // Mutation: uploadVerified without the stop signal (its request waited 60 s, and retried six
  // times: a watching harvest took 7 minutes to stop, long past a service manager's patience).
  it('an upload to a server that sends nothing ends when the harvest stops, and is sent at the next start', async () => {
    const silent = await silentServer();
    try {
      const dirs = await station('quiet', silent.url);
      const data = randomBytes(300 * 1024);
      writeFileSync(join(dirs.src, 'quiet.bin'), data);

      // The upload itself: the stop's reason, at once, and not one request after it.
      const stopping = new AbortController();
      const stationDb = openDatabase(join(tempDir(), 'station.db'));
      setSetting(stationDb, 'sync.server', silent.url);
      setSetting(stationDb, 'sync.key', key);
      const source = join(dirs.src, 'quiet.bin');
      const s = statSync(source);
      const upload = uploadVerified(
        {
          db: stationDb,
          log: createLogger('silent'),
          hash: (path) => hashFile(path),
          progress: () => undefined,
          signal: stopping.signal,
        },
        {
          file: { uuid: randomUUID(), source_path: source, size: s.size, mtime_ms: s.mtimeMs },
          location: { uuid: randomUUID(), name: 'archive' },
          destination: 'quiet/direct.bin',
        },
      );
      await waitFor('the upload asked for', () => (silent.bytes() > 0 ? true : undefined));
      const asked = silent.bytes();
      stopping.abort(new HarvestStopped('the harvest was stopped'));
      await expect(upload).rejects.toBeInstanceOf(HarvestStopped);
      stationDb.close();
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(silent.bytes()).toBe(asked);

      // A watching harvest, told to stop (SIGTERM) while its upload waits: exit 0, at once.
      const child = spawn(process.execPath, [CLI, 'harvest', '--data', dirs.data], {
        stdio: 'ignore',
      });
      const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
      await waitFor(
        'the harvest uploading',
        () => (silent.bytes() > asked ? true : undefined),
        30_000,
      );
      const stoppedAt = Date.now();
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      // Not the request's idle time (60 s), let alone six of them.
      expect(Date.now() - stoppedAt).toBeLessThan(20_000);
      // Nothing recorded of the attempt the stop cut short: no failure to wait out.
      expect(await transfersOf(dirs.data)).toEqual([]);

      // The next start sends it, once.
      withDb(dirs.data, (db) =>
        db
          .prepare("UPDATE settings SET value = ? WHERE key = 'sync.server'")
          .run(JSON.stringify(serverUrl)),
      );
      const run = await harvestOnce(dirs.data);
      expect(run.stdout).toContain('harvest: 1 completed, 0 skipped, 0 failed');
      expect(storeTree('quiet')).toEqual(['quiet.bin']);
      expect(md5(readFileSync(join(store, 'quiet', 'quiet.bin')))).toBe(md5(data));
      expect(await transfersOf(dirs.data)).toHaveLength(1);
    } finally {
      await silent.close();
    }
  }, 90_000);

  // Mutation: a request made after the stop rejecting without destroying its body: the source
  // stream, never read, kept its file open (on Windows, the instrument could not move it).
  it('a stop while a resumed upload hashes what the server has leaves the source closed', async () => {
    const dir = tempDir('labstation-upload-stop-');
    const source = join(dir, 'held.bin');
    const data = randomBytes(24 * MiB);
    writeFileSync(source, data);
    const fileUuid = `held-${randomUUID()}`;
    const destination = `held/${fileUuid}.bin`;
    const xxhash = await xxh3(data);
    // The server holds its first 20 MiB (a station stopped mid-file): the station reads and
    // hashes those again, a MiB at a time, before it sends the rest.
    const left = await open({
      file_uuid: fileUuid,
      destination_path: destination,
      size: data.length,
      xxhash,
    });
    expect(
      (await append(left.body.upload_id as string, 0, data.subarray(0, 20 * MiB))).status,
    ).toBe(200);
    const openedHere = (): string[] =>
      readdirSync('/proc/self/fd').flatMap((fd) => {
        try {
          return [readlinkSync(`/proc/self/fd/${fd}`)];
        } catch {
          return [];
        }
      });
    const stopping = new AbortController();
    const upload = uploadFromStation(
      dir,
      // Its hash as a copy worker gives it, without opening the file here: only the upload does.
      () => Promise.resolve({ hash: xxhash, bytes: data.length }),
      {
        file: {
          uuid: fileUuid,
          source_path: source,
          size: data.length,
          mtime_ms: statSync(source).mtimeMs,
        },
        location: { uuid: 'x', name: 'archive' },
        destination,
      },
      serverUrl,
      undefined,
      stopping.signal,
    );
    await until(
      'the source opened to hash its prefix',
      () => openedHere().includes(source),
      upload,
    );
    stopping.abort(new HarvestStopped('stopped'));
    await expect(upload).rejects.toBeInstanceOf(HarvestStopped);
    await waitFor(
      'the source closed',
      () => (openedHere().includes(source) ? undefined : true),
      3_000,
    );
  });
});
