/**
 * What a `labstation serve` takes of the harvest records a station pushes (POST /sync/push with
 * its key, over loopback), and what it keeps when they arrive twice, late or out of order: a
 * transfer claiming a verified checksum its file does not have, a transfer's storage location
 * the server knows under another uuid, and run and deployment reports that arrive after newer
 * ones.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createXXHash128 } from 'hash-wasm';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PushResult } from '../../electron/core/sync/protocol.js';
import { newUuid } from '../../electron/core/util/ids.js';
import { facilityBundle } from '../fixtures/facility.js';
import { harvestFilePayload, PUSHED_XXHASH } from './harvestPushFixtures.js';
import { usagePayload, type UsageRefs } from './usagePushFixtures.js';
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
const HASH = PUSHED_XXHASH;
const OTHER_HASH = 'fedcba9876543210fedcba9876543210';

let root: string;
let server: ServerProcess;
let serverDb: Database.Database;
let adminJwt: string;
let key: string;
let instrumentUuid: string;
let semUuid: string;
let nextOutbox = 1;

const api = (method: string, path: string, body?: unknown): Promise<HttpReply> =>
  serverRequest(server.url, adminJwt, method, path, body);

async function created(path: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await api('POST', path, body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

/** Pushes records as the station's outbox would, each with the next outbox id. */
async function push(
  records: { kind: string; uuid: string; payload: object }[],
  withKey = key,
): Promise<PushResult> {
  const res = await fetch(`${server.url}sync/push`, {
    method: 'POST',
    headers: { authorization: `Station ${withKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ records: records.map((r) => ({ ...r, id: nextOutbox++ })) }),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as PushResult;
}

function filePayload(uuid: string, name: string, extra: object = {}): Record<string, unknown> {
  return harvestFilePayload(
    { uuid: instrumentUuid, name: 'Intake camera', toolUuid: semUuid },
    uuid,
    name,
    extra,
  );
}

function transferPayload(
  uuid: string,
  fileUuid: string,
  name: string,
  extra: object = {},
): Record<string, unknown> {
  return {
    uuid,
    file_uuid: fileUuid,
    status: 'completed',
    storage_location: 'intake',
    storage_location_uuid: null,
    destination_path: `/mnt/intake/${name}`,
    bytes_transferred: 1234,
    dest_checksum: HASH,
    checksum_verified: true,
    started_at: '2026-03-01T10:00:02.000Z',
    completed_at: '2026-03-01T10:00:03.000Z',
    error: '',
    note: '',
    ...extra,
  };
}

const fileRow = (uuid: string): unknown =>
  serverDb.prepare('SELECT xxhash, state, updated_at FROM harvest_files WHERE uuid = ?').get(uuid);
const transferCount = (uuid: string): unknown =>
  serverDb.prepare('SELECT count(*) FROM harvest_transfers WHERE uuid = ?').pluck().get(uuid);

/** A station with a tool and nothing pushed yet, so that it may be deleted. */
async function freshStation(name: string): Promise<{ id: number; key: string }> {
  const key = await createStationKey(join(root, 'server'), name, 'SEM');
  const id = serverDb.prepare('SELECT id FROM stations WHERE name = ?').pluck().get(name) as number;
  return { id, key };
}

beforeAll(async () => {
  root = tempDir('labstation-harvest-intake-');
  const serverDir = join(root, 'server');
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
  const sem = serverDb.prepare("SELECT id, uuid FROM tools WHERE name = 'SEM'").get() as {
    id: number;
    uuid: string;
  };
  semUuid = sem.uuid;
  const account = await created('/api/service-accounts', { name: 'intake-pc' });
  key = String(account.key);
  const location = await created('/api/storage-locations', {
    name: 'intake',
    type: 'local',
    base_path: '/mnt/intake',
  });
  const instrument = await created('/api/instruments', {
    name: 'Intake camera',
    tool_id: sem.id,
    service_account_id: account.id,
    watch: [{ path: '/data', include: ['*'] }],
    storage_location_id: location.id,
  });
  instrumentUuid = serverDb
    .prepare('SELECT uuid FROM instruments WHERE id = ?')
    .pluck()
    .get(instrument.id) as string;
}, 60_000);

afterAll(async () => {
  serverDb?.close();
  await server?.stop();
});

describe("a file record's later version", () => {
  it('moves the record where its station now finds the file; an older or equal one does not', async () => {
    const uuid = newUuid();
    const where = (): unknown =>
      serverDb
        .prepare('SELECT watch_path, source_path, relative_path FROM harvest_files WHERE uuid = ?')
        .get(uuid);
    const version = (updatedAt: string, folder: string): Record<string, unknown> =>
      filePayload(uuid, 'run1/a.tif', {
        watch_path: folder,
        source_path: `${folder}/run1/a.tif`,
        updated_at: updatedAt,
      });
    await push([
      { kind: 'harvest_file', uuid, payload: version('2026-03-01T10:00:04.000Z', '/data') },
    ]);
    // Its watched folder was given a new path on the station (harvest/folderMoves.ts).
    await push([
      { kind: 'harvest_file', uuid, payload: version('2026-03-01T10:00:05.000Z', '/mnt/new') },
    ]);
    const moved = {
      watch_path: '/mnt/new',
      source_path: '/mnt/new/run1/a.tif',
      relative_path: 'run1/a.tif',
    };
    expect(where()).toEqual(moved);
    // A resend of an earlier version, or of this one saying otherwise, moves nothing.
    await push([
      { kind: 'harvest_file', uuid, payload: version('2026-03-01T10:00:04.000Z', '/data') },
      { kind: 'harvest_file', uuid, payload: version('2026-03-01T10:00:05.000Z', '/elsewhere') },
    ]);
    expect(where()).toEqual(moved);
  });
});

describe('a transfer claiming a verified checksum', () => {
  it('is refused when its dest_checksum is not its file’s xxhash, and nothing stored changes', async () => {
    const file = newUuid();
    const transfer = newUuid();
    expect(
      (await push([{ kind: 'harvest_file', uuid: file, payload: filePayload(file, 'a.tif') }]))
        .error,
    ).toBeNull();
    const before = fileRow(file);
    const res = await push([
      {
        kind: 'harvest_transfer',
        uuid: transfer,
        payload: transferPayload(transfer, file, 'a.tif', { dest_checksum: OTHER_HASH }),
      },
    ]);
    expect(res.acked).toEqual([]);
    expect(res.error).toMatchObject({ code: 'conflict', kind: 'harvest_transfer', uuid: transfer });
    expect(res.error?.detail).toBe(
      `harvest_transfer ${transfer}: checksum_verified, but its dest_checksum ${OTHER_HASH} is ` +
        `not the xxhash ${HASH} of its file ${file} (its version of 2026-03-01T10:00:04.000Z); ` +
        'a verified transfer holds the bytes its file record names',
    );
    expect(transferCount(transfer)).toBe(0);
    expect(fileRow(file)).toEqual(before);
    // The same transfer with the file's checksum is taken, once.
    const right = transferPayload(transfer, file, 'a.tif');
    expect(
      (await push([{ kind: 'harvest_transfer', uuid: transfer, payload: right }])).error,
    ).toBeNull();
    expect(
      (await push([{ kind: 'harvest_transfer', uuid: transfer, payload: right }])).error,
    ).toBeNull();
    expect(transferCount(transfer)).toBe(1);
  });

  it('that arrives before the file version it was made of waits for that version', async () => {
    const file = newUuid();
    const transfer = newUuid();
    // The server holds the file as it was waiting, before its hash (an older version).
    const waiting = filePayload(file, 'b.tif', {
      xxhash: null,
      state: 'waiting',
      updated_at: '2026-03-01T10:00:01.000Z',
    });
    expect((await push([{ kind: 'harvest_file', uuid: file, payload: waiting }])).error).toBeNull();
    const early = await push([
      {
        kind: 'harvest_transfer',
        uuid: transfer,
        payload: transferPayload(transfer, file, 'b.tif'),
      },
    ]);
    // Not a conflict: the station sends the file's newer version, then the transfer again.
    expect(early.error).toMatchObject({
      code: 'unknown_reference',
      missing: { table: 'harvest_files', uuid: file },
    });
    expect(early.error?.detail).toContain('2026-03-01T10:00:01.000Z');
    expect(transferCount(transfer)).toBe(0);
    const res = await push([
      { kind: 'harvest_file', uuid: file, payload: filePayload(file, 'b.tif') },
      {
        kind: 'harvest_transfer',
        uuid: transfer,
        payload: transferPayload(transfer, file, 'b.tif'),
      },
    ]);
    expect(res.error).toBeNull();
    expect(res.acked).toHaveLength(2);
    expect(transferCount(transfer)).toBe(1);
  });

  it('is the only one checked: a failed transfer keeps the other checksum it found', async () => {
    const file = newUuid();
    const transfer = newUuid();
    expect(
      (await push([{ kind: 'harvest_file', uuid: file, payload: filePayload(file, 'c.tif') }]))
        .error,
    ).toBeNull();
    const older = transferPayload(transfer, file, 'c.tif', {
      status: 'failed',
      dest_checksum: OTHER_HASH,
      checksum_verified: false,
      error: 'the destination differs',
    });
    expect(
      (await push([{ kind: 'harvest_transfer', uuid: transfer, payload: older }])).error,
    ).toBeNull();
    expect(transferCount(transfer)).toBe(1);
  });
});

describe("a transfer's storage location", () => {
  const locationOf = (transfer: string): unknown =>
    serverDb
      .prepare(
        `SELECT l.name FROM harvest_transfers t LEFT JOIN storage_locations l
           ON l.id = t.storage_location_id WHERE t.uuid = ?`,
      )
      .pluck()
      .get(transfer);

  async function pushTransfer(name: string, location: object): Promise<string> {
    const file = newUuid();
    const transfer = newUuid();
    const res = await push([
      { kind: 'harvest_file', uuid: file, payload: filePayload(file, name) },
      {
        kind: 'harvest_transfer',
        uuid: transfer,
        payload: transferPayload(transfer, file, name, location),
      },
    ]);
    expect(res.error).toBeNull();
    return transfer;
  }

  it('is the one of its uuid, renamed on the server since', async () => {
    const location = await created('/api/storage-locations', {
      name: 'before',
      type: 'local',
      base_path: '/mnt/before',
    });
    const uuid = serverDb
      .prepare('SELECT uuid FROM storage_locations WHERE id = ?')
      .pluck()
      .get(location.id) as string;
    expect(
      (await api('PATCH', `/api/storage-locations/${String(location.id)}`, { name: 'after' }))
        .status,
    ).toBe(200);
    const transfer = await pushTransfer('r.tif', {
      storage_location: 'before',
      storage_location_uuid: uuid,
      destination_path: '/mnt/before/r.tif',
    });
    expect(locationOf(transfer)).toBe('after');
  });

  it('by a uuid the server does not know, is one of that name only if the file lies in it', async () => {
    // "scratch" was deleted on the server and made again elsewhere: a transfer into the old
    // one is not put in the new one. The station's own "scratch" at the same place is.
    await created('/api/storage-locations', {
      name: 'scratch',
      type: 'local',
      base_path: '/mnt/scratch-new',
    });
    const gone = await pushTransfer('s.tif', {
      storage_location: 'scratch',
      storage_location_uuid: newUuid(),
      destination_path: '/mnt/scratch-old/s.tif',
    });
    expect(
      serverDb.prepare('SELECT count(*) FROM harvest_transfers WHERE uuid = ?').pluck().get(gone),
    ).toBe(1);
    expect(locationOf(gone)).toBeNull();
    const beside = await pushTransfer('t.tif', {
      storage_location: 'scratch',
      storage_location_uuid: newUuid(),
      destination_path: '/mnt/scratch-newer/t.tif',
    });
    expect(locationOf(beside)).toBeNull();
    const same = await pushTransfer('u.tif', {
      storage_location: 'scratch',
      storage_location_uuid: newUuid(),
      destination_path: '/mnt/scratch-new/2026/u.tif',
    });
    expect(locationOf(same)).toBe('scratch');
    // A station too old to send the uuid is taken by the same rule.
    const old = await pushTransfer('v.tif', {
      storage_location: 'scratch',
      storage_location_uuid: undefined,
      destination_path: '/mnt/scratch-old/v.tif',
    });
    expect(locationOf(old)).toBeNull();
  });
});

describe('reports of a run or a deployment that arrive late', () => {
  let scheduleId: number;
  let scheduleUuid: string;

  beforeAll(async () => {
    const instrumentId = serverDb
      .prepare('SELECT id FROM instruments WHERE uuid = ?')
      .pluck()
      .get(instrumentUuid) as number;
    const schedule = await created('/api/schedules', {
      instrument_id: instrumentId,
      cron: '0 * * * *',
      timezone: 'UTC',
    });
    scheduleId = schedule.id as number;
    scheduleUuid = serverDb
      .prepare('SELECT uuid FROM harvest_schedules WHERE id = ?')
      .pluck()
      .get(scheduleId) as string;
  });

  it('keep the newest deployment the station reported, an older one pushed after it is stale', async () => {
    const version = serverDb
      .prepare('SELECT version FROM harvest_schedules WHERE id = ?')
      .pluck()
      .get(scheduleId) as number;
    const report = (nextRun: string, reportedAt: string): Record<string, unknown> => ({
      uuid: scheduleUuid,
      version,
      state: 'deployed',
      deployed_at: '2026-03-01T09:00:00.000Z',
      next_run_at: nextRun,
      last_run_at: null,
      error: '',
      reported_at: reportedAt,
    });
    const newer = report('2026-03-01T11:00:00.000Z', '2026-03-01T10:00:00.500Z');
    const older = report('2026-03-01T10:00:00.000Z', '2026-03-01T09:00:00.500Z');
    expect(
      (await push([{ kind: 'harvest_deployment', uuid: scheduleUuid, payload: newer }])).error,
    ).toBeNull();
    const late = await push([{ kind: 'harvest_deployment', uuid: scheduleUuid, payload: older }]);
    expect(late.error).toBeNull();
    expect(late.stale).toEqual(late.acked);
    const shown = (await api('GET', `/api/schedules/${scheduleId}`)).body.deployment as {
      state: string;
      next_run_at: string;
    };
    expect(shown).toMatchObject({ state: 'deployed', next_run_at: '2026-03-01T11:00:00.000Z' });
    // A resend of the newest changes nothing and is taken.
    const again = await push([{ kind: 'harvest_deployment', uuid: scheduleUuid, payload: newer }]);
    expect(again).toMatchObject({ error: null, stale: [] });
  });

  it("keep a run's newest progress, an older report pushed after it is stale", async () => {
    const run = newUuid();
    const report = (startedAt: string, reportedAt: string): Record<string, unknown> => ({
      uuid: run,
      schedule_uuid: scheduleUuid,
      instrument_uuid: instrumentUuid,
      trigger: 'schedule',
      state: 'running',
      requested_at: '2026-03-01T10:00:00.000Z',
      started_at: startedAt,
      finished_at: null,
      files_completed: 0,
      files_skipped: 0,
      files_failed: 0,
      error: '',
      reported_at: reportedAt,
    });
    // Started, cut short by a restart, started again: the first start's report comes last.
    const first = report('2026-03-01T10:00:01.000Z', '2026-03-01T10:00:01.000Z');
    const second = report('2026-03-01T10:05:00.000Z', '2026-03-01T10:05:00.000Z');
    expect((await push([{ kind: 'harvest_run', uuid: run, payload: second }])).error).toBeNull();
    const late = await push([{ kind: 'harvest_run', uuid: run, payload: first }]);
    expect(late.error).toBeNull();
    expect(late.stale).toEqual(late.acked);
    expect(
      serverDb.prepare('SELECT state, started_at FROM harvest_runs WHERE uuid = ?').get(run),
    ).toEqual({ state: 'running', started_at: '2026-03-01T10:05:00.000Z' });
    // What it ends with is taken; a report of the same moment sent again changes nothing.
    const done = {
      ...second,
      state: 'completed',
      finished_at: '2026-03-01T10:06:00.000Z',
      files_completed: 3,
      reported_at: '2026-03-01T10:06:00.000Z',
    };
    expect((await push([{ kind: 'harvest_run', uuid: run, payload: done }])).error).toBeNull();
    expect((await push([{ kind: 'harvest_run', uuid: run, payload: done }])).stale).toEqual([]);
    expect(
      serverDb
        .prepare('SELECT state, files_completed, finished_at FROM harvest_runs WHERE uuid = ?')
        .get(run),
    ).toEqual({ state: 'completed', files_completed: 3, finished_at: '2026-03-01T10:06:00.000Z' });
  });
});

describe('a station whose key is revoked while its request is under way', () => {
  function problemReport(uuid: string): Record<string, unknown> {
    return {
      uuid,
      tool_uuid: semUuid,
      usage_event_uuid: null,
      user_uuid: serverDb.prepare("SELECT uuid FROM users WHERE username = 'alice'").pluck().get(),
      question: 'problem',
      description: 'the stage squeaks',
      force_shutdown: false,
      safety_hazard: false,
      created_at: '2026-03-01T10:00:00.000Z',
    };
  }

  /**
   * Pushes one problem report, its body sent in two parts: `between` runs once the server has
   * let the request in (its key checked, the station seen) and before the rest of the body.
   */
  async function pushAcross(
    account: { id: number; key: string },
    report: string,
    between: () => Promise<void>,
  ): Promise<{ status: number; body: Record<string, unknown> }> {
    const body = JSON.stringify({
      records: [{ id: 1, kind: 'problem_report', uuid: report, payload: problemReport(report) }],
    });
    const { request } = await import('node:http');
    const req = request(`${server.url}sync/push`, {
      method: 'POST',
      headers: {
        authorization: `Station ${account.key}`,
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
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
    req.write(body.slice(0, 20));
    await waitFor('the server let the push in', () =>
      serverDb.prepare('SELECT last_seen_at FROM stations WHERE id = ?').pluck().get(account.id) !==
      null
        ? true
        : undefined,
    );
    await between();
    req.end(body.slice(20));
    return answer;
  }

  const reportCount = (uuid: string): unknown =>
    serverDb.prepare('SELECT count(*) FROM problem_reports WHERE uuid = ?').pluck().get(uuid);

  it('stores nothing of a push whose service account was deleted meanwhile: 401', async () => {
    const account = await freshStation('deleted-pc');
    const report = newUuid();
    const res = await pushAcross(account, report, async () => {
      expect((await api('DELETE', `/api/service-accounts/${account.id}`)).status).toBe(204);
    });
    expect(res).toEqual({ status: 401, body: { detail: 'Invalid station key.' } });
    expect(reportCount(report)).toBe(0);
  });

  it('stores nothing of a push whose station was disabled meanwhile: 401', async () => {
    const account = await freshStation('disabled-pc');
    const report = newUuid();
    const res = await pushAcross(account, report, async () => {
      const patched = await api('PATCH', `/api/service-accounts/${account.id}`, { enabled: false });
      expect(patched.status).toBe(200);
    });
    expect(res).toEqual({ status: 401, body: { detail: 'This station is disabled.' } });
    expect(reportCount(report)).toBe(0);
  });

  it('answers a waiting pull of a service account deleted meanwhile with 401, not an error', async () => {
    const account = await freshStation('pulling-pc');
    const headers = { authorization: `Station ${account.key}` };
    const first = (await (
      await fetch(`${server.url}sync/changes?cursor=0`, { headers })
    ).json()) as {
      cursor: number;
    };
    const seen = (): unknown =>
      serverDb.prepare('SELECT last_seen_at FROM stations WHERE id = ?').pluck().get(account.id);
    const before = seen();
    const waiting = fetch(`${server.url}sync/changes?cursor=${first.cursor}&wait=3`, { headers });
    await waitFor('the pull let in and held', () => (seen() !== before ? true : undefined));
    expect((await api('DELETE', `/api/service-accounts/${account.id}`)).status).toBe(204);
    const res = await waiting;
    expect({ status: res.status, body: await res.json() }).toEqual({
      status: 401,
      body: { detail: 'Invalid station key.' },
    });
  });
});

describe('a file record after its instrument moved to another station', () => {
  // Mutations: fileWriter letting the station that made a record write it whatever wrote it
  // since (no takenOver): the old station's version, later by its own clock, put the file the
  // new station completed back to failed; written_by set by a resend of the version held.
  it("takes the old station's versions until the new one has written the record, then keeps them out", async () => {
    const stationA = await created('/api/service-accounts', { name: 'move-from' });
    const stationB = await created('/api/service-accounts', { name: 'move-to' });
    const sem = serverDb.prepare("SELECT id FROM tools WHERE name = 'SEM'").pluck().get() as number;
    const location = serverDb
      .prepare("SELECT id FROM storage_locations WHERE name = 'intake'")
      .pluck()
      .get() as number;
    const moving = await created('/api/instruments', {
      name: 'Moving camera',
      tool_id: sem,
      service_account_id: stationA.id,
      watch: [{ path: '/data', include: ['*'] }],
      storage_location_id: location,
    });
    const movingUuid = serverDb
      .prepare('SELECT uuid FROM instruments WHERE id = ?')
      .pluck()
      .get(moving.id) as string;
    const version = (uuid: string, name: string, extra: object): Record<string, unknown> =>
      harvestFilePayload(
        { uuid: movingUuid, name: 'Moving camera', toolUuid: semUuid },
        uuid,
        name,
        extra,
      );
    const failed = { state: 'failed', xxhash: null };
    const kept = newUuid();
    const drained = newUuid();
    const a = String(stationA.key);
    const b = String(stationB.key);
    for (const [uuid, name] of [
      [kept, 'kept.tif'],
      [drained, 'drained.tif'],
    ]) {
      const res = await push(
        [
          {
            kind: 'harvest_file',
            uuid,
            payload: version(uuid, name, { ...failed, updated_at: '2026-03-02T10:00:00.000Z' }),
          },
        ],
        a,
      );
      expect(res).toMatchObject({ stale: [], error: null });
    }
    const moved = await api('PATCH', `/api/instruments/${String(moving.id)}`, {
      service_account_id: stationB.id,
    });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);

    // The new station completes kept.tif.
    expect(
      await push(
        [
          {
            kind: 'harvest_file',
            uuid: kept,
            payload: version(kept, 'kept.tif', { updated_at: '2026-03-02T10:05:00.000Z' }),
          },
        ],
        b,
      ),
    ).toMatchObject({ stale: [], error: null });
    // The new station sends back drained.tif as it took it (the same version): it wrote
    // nothing, and the old station may still write it.
    expect(
      await push(
        [
          {
            kind: 'harvest_file',
            uuid: drained,
            payload: version(drained, 'drained.tif', {
              ...failed,
              updated_at: '2026-03-02T10:00:00.000Z',
            }),
          },
        ],
        b,
      ),
    ).toMatchObject({ stale: [], error: null });
    // The old station's later versions: kept.tif's is kept out, as the new station wrote it;
    // drained.tif's, which nobody else wrote, is taken (its outbox drains).
    const late = await push(
      [
        {
          kind: 'harvest_file',
          uuid: kept,
          payload: version(kept, 'kept.tif', { ...failed, updated_at: '2026-03-02T12:00:00.000Z' }),
        },
        {
          kind: 'harvest_file',
          uuid: drained,
          payload: version(drained, 'drained.tif', { updated_at: '2026-03-02T12:00:00.000Z' }),
        },
      ],
      a,
    );
    expect(late.error).toBeNull();
    expect(late.stale).toHaveLength(1);
    expect(fileRow(kept)).toEqual({
      xxhash: HASH,
      state: 'done',
      updated_at: '2026-03-02T10:05:00.000Z',
    });
    expect(fileRow(drained)).toEqual({
      xxhash: HASH,
      state: 'done',
      updated_at: '2026-03-02T12:00:00.000Z',
    });
  });
});

describe('a service account whose station uploaded files here', () => {
  it('is not deleted while the server keeps files it uploaded, their records yet to come', async () => {
    const account = await freshStation('uploading-pc');
    const store = join(root, 'store');
    mkdirSync(store);
    const location = await created('/api/storage-locations', {
      name: 'store',
      type: 'server',
      base_path: store,
    });
    const instrument = await created('/api/instruments', {
      name: 'Upload camera',
      tool_id: serverDb.prepare("SELECT id FROM tools WHERE name = 'SEM'").pluck().get(),
      service_account_id: account.id,
      watch: [{ path: '/up', include: ['*'] }],
      storage_location_id: location.id,
    });
    const data = Buffer.from('bytes the server keeps');
    const headers = { authorization: `Station ${account.key}` };
    const opened = await fetch(`${server.url}sync/uploads`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({
        file_uuid: newUuid(),
        storage_location_uuid: serverDb
          .prepare('SELECT uuid FROM storage_locations WHERE id = ?')
          .pluck()
          .get(location.id),
        storage_location: 'store',
        destination_path: 'Upload camera/a.raw',
        size: data.length,
        xxhash: (await createXXHash128()).init().update(data).digest('hex'),
      }),
    });
    const upload = (await opened.json()) as { upload_id: string };
    expect(opened.status, JSON.stringify(upload)).toBeLessThan(300);
    const sent = await fetch(`${server.url}sync/uploads/${upload.upload_id}`, {
      method: 'PATCH',
      headers: { ...headers, 'content-type': 'application/octet-stream', 'upload-offset': '0' },
      body: data,
    });
    expect(((await sent.json()) as { status: string }).status).toBe('completed');
    // Its transfer record has not reached the server yet; the instrument goes elsewhere.
    const moved = await api('PATCH', `/api/instruments/${String(instrument.id)}`, {
      service_account_id: null,
    });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    const deleted = await api('DELETE', `/api/service-accounts/${account.id}`);
    expect(deleted.status).toBe(409);
    expect(deleted.body.detail).toBe(
      `service account ${account.id} uploaded 1 file this server keeps; disable it instead`,
    );
    expect(
      serverDb
        .prepare('SELECT count(*) FROM harvest_uploads WHERE station_id = ?')
        .pluck()
        .get(account.id),
    ).toBe(1);
  });
});

describe("a station's rights to a tool and an instrument it no longer runs", () => {
  // Mutations: noteMovesTaken never noting (a right that never ends, as before migration 51),
  // noting at any pull (a station that has not applied the move refused its own records), or
  // by the server's clock where the pull names the station's; madeIn taking any usage's start.
  it('end once it has applied the move: what it made before is taken, what it made after is refused', async () => {
    const from = await created('/api/service-accounts', { name: 'rights-from' });
    const to = await created('/api/service-accounts', { name: 'rights-to' });
    const ids = serverDb
      .prepare(
        `SELECT (SELECT id FROM tools WHERE name = 'SEM') AS sem,
           (SELECT id FROM tools WHERE name = 'AFM') AS afm,
           (SELECT id FROM storage_locations WHERE name = 'intake') AS location`,
      )
      .get() as { sem: number; afm: number; location: number };
    const camera = await created('/api/instruments', {
      name: 'Rights camera',
      tool_id: ids.sem,
      service_account_id: from.id,
      watch: [{ path: '/data', include: ['*'] }],
      storage_location_id: ids.location,
    });
    const cameraUuid = serverDb
      .prepare('SELECT uuid FROM instruments WHERE id = ?')
      .pluck()
      .get(camera.id) as string;
    const refs = serverDb
      .prepare(
        `SELECT (SELECT uuid FROM users WHERE username = 'alice') AS user_uuid,
           (SELECT uuid FROM projects WHERE name = 'Cathodes') AS project_uuid,
           (SELECT uuid FROM tools WHERE name = 'SEM') AS tool_uuid`,
      )
      .get() as UsageRefs;
    const a = String(from.key);
    const hours = (n: number): string => new Date(Date.now() + n * 3_600_000).toISOString();
    /** A usage on the SEM and a file of the camera, both made at `at`, pushed with A's key. */
    const madeAt = (at: string) => {
      const usage = newUuid();
      const file = newUuid();
      return push(
        [
          { kind: 'usage_event', uuid: usage, payload: usagePayload(refs, usage, at) },
          {
            kind: 'harvest_file',
            uuid: file,
            payload: harvestFilePayload(
              { uuid: cameraUuid, name: 'Rights camera', toolUuid: refs.tool_uuid },
              file,
              `${file}.tif`,
              { first_discovered_at: at },
            ),
          },
        ],
        a,
      );
    };
    /** A pull as the station's sync client makes it; `clock`: the station's (X-Labstation-Clock). */
    const pull = async (cursor: number, mark?: string, clock?: string) => {
      const query = `cursor=${cursor}${mark === undefined ? '' : `&mark=${mark}`}`;
      const res = await fetch(`${server.url}sync/changes?${query}`, {
        headers: {
          authorization: `Station ${a}`,
          ...(clock === undefined ? {} : { 'x-labstation-clock': clock }),
        },
      });
      expect(res.status).toBe(200);
      return (await res.json()) as { cursor: number; cursor_mark: string; station: object };
    };
    const before = await pull(0);
    // A usage under way when the station is moved.
    const underWay = newUuid();
    const startedBefore = new Date(Date.now() - 60_000).toISOString();
    expect(
      await push(
        [
          {
            kind: 'usage_event',
            uuid: underWay,
            payload: usagePayload(refs, underWay, startedBefore),
          },
        ],
        a,
      ),
    ).toMatchObject({ error: null });

    // The camera goes to another station, and this one to the AFM.
    const moved = await api('PATCH', `/api/instruments/${String(camera.id)}`, {
      service_account_id: to.id,
    });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    const retooled = await api('POST', '/rpc/admin.stations.update', {
      id: from.id,
      name: 'rights-from',
      description: '',
      tool: ids.afm,
      enabled: true,
    });
    expect(retooled.status, JSON.stringify(retooled.body)).toBe(200);

    // Not heard of yet (offline, say): what it makes goes on being taken, whatever its time.
    expect(await madeAt(hours(2))).toMatchObject({ error: null, stale: [] });
    // A pull from before the moves applies them; it does not say they were applied.
    const after = await pull(before.cursor, before.cursor_mark);
    expect(after.station).toMatchObject({ tool: 'AFM' });
    expect(await madeAt(hours(3))).toMatchObject({ error: null, stale: [] });

    // The next pull names the cursor that carried them: applied, at 3 hours from now by the
    // station's clock (a wrong time zone, say), the clock its records are dated by.
    await pull(after.cursor, after.cursor_mark, hours(3));
    // Made before the move, and before it by the station's clock (after it by the server's):
    // taken. Within the hour spared after it: taken.
    expect(await madeAt('2026-03-01T10:00:00.000Z')).toMatchObject({ error: null, stale: [] });
    expect(await madeAt(hours(2.5))).toMatchObject({ error: null, stale: [] });
    expect(await madeAt(hours(3.5))).toMatchObject({ error: null, stale: [] });
    // Made later: refused, the usage first (its tool), then, alone, the file (its instrument).
    const late = await madeAt(hours(4.5));
    expect(late.acked).toEqual([]);
    expect(late.error).toMatchObject({
      kind: 'usage_event',
      code: 'forbidden',
      detail: expect.stringMatching(/after this station was moved off that tool/) as unknown,
    });
    const file = newUuid();
    const lateFile = await push(
      [
        {
          kind: 'harvest_file',
          uuid: file,
          payload: harvestFilePayload(
            { uuid: cameraUuid, name: 'Rights camera', toolUuid: refs.tool_uuid },
            file,
            'late.tif',
            { first_discovered_at: hours(4.5) },
          ),
        },
      ],
      a,
    );
    expect(lateFile.error).toMatchObject({
      kind: 'harvest_file',
      code: 'forbidden',
      detail: expect.stringMatching(
        /after that instrument was moved to another station/,
      ) as unknown,
    });
    expect(
      serverDb.prepare('SELECT 1 FROM harvest_files WHERE uuid = ?').get(file),
    ).toBeUndefined();

    // The usage under way at the move ends later: what its form records then is its own.
    const problem = (uuid: string, usage: string | null) => ({
      kind: 'problem_report',
      uuid,
      payload: {
        uuid,
        tool_uuid: refs.tool_uuid,
        usage_event_uuid: usage,
        user_uuid: refs.user_uuid,
        question: 'problem',
        description: 'the stage drifts',
        force_shutdown: 0,
        safety_hazard: 0,
        created_at: hours(4.5),
      },
    });
    const withdrawal = newUuid();
    const ofUsage = await push(
      [
        problem(newUuid(), underWay),
        {
          kind: 'consumable_withdrawal',
          uuid: withdrawal,
          payload: {
            uuid: withdrawal,
            consumable: 'SEM stub',
            quantity: 2,
            user_uuid: refs.user_uuid,
            project_uuid: refs.project_uuid,
            tool_uuid: refs.tool_uuid,
            usage_event_uuid: underWay,
            question: 'stubs',
            created_at: hours(4.5),
          },
        },
      ],
      a,
    );
    expect(ofUsage).toMatchObject({ error: null, stale: [] });
    expect(ofUsage.acked).toHaveLength(2);
    // One reported apart from any usage, that late: refused; and so is one hung on a usage of
    // the station that runs the SEM now (not this station's to answer for).
    expect((await push([problem(newUuid(), null)], a)).error).toMatchObject({
      kind: 'problem_report',
      code: 'forbidden',
    });
    const theirs = newUuid();
    expect(
      await push(
        [{ kind: 'usage_event', uuid: theirs, payload: usagePayload(refs, theirs, startedBefore) }],
        String(to.key),
      ),
    ).toMatchObject({ error: null });
    expect((await push([problem(newUuid(), theirs)], a)).error).toMatchObject({
      kind: 'problem_report',
      code: 'forbidden',
    });

    // Given the SEM back, it writes for it again.
    const back = await api('POST', '/rpc/admin.stations.update', {
      id: from.id,
      name: 'rights-from',
      description: '',
      tool: ids.sem,
      enabled: true,
    });
    expect(back.status, JSON.stringify(back.body)).toBe(200);
    const usage = newUuid();
    expect(
      await push(
        [{ kind: 'usage_event', uuid: usage, payload: usagePayload(refs, usage, hours(2)) }],
        a,
      ),
    ).toMatchObject({ error: null });
  });
});
