/**
 * The harvest API end to end with real processes: an admin configures a station's harvest over
 * the API of a `labstation serve`; a `labstation station` holding the service account's key
 * picks it up, deploys the schedule and reports it; a trigger makes it harvest the files written
 * into its folder; the records reach the server with verified checksums, and only users granted
 * the instrument see them. Changes and deletions reach the station within seconds.
 */
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HISTORY_PAGE } from '../../electron/core/sync/protocol.js';
import { newUuid } from '../../electron/core/util/ids.js';
import { makeArk } from '../../shared/ark.js';
import type { FileUsageView } from '../../shared/api.js';
import { facilityBundle } from '../fixtures/facility.js';
import {
  runCli,
  startServer,
  startStation,
  tempDir,
  waitFor,
  writeJson,
  type ServerProcess,
  type StationProcess,
  loginJwt,
  serverRequest,
} from './helpers.js';

const ADMIN = { email: 'admin@example.org', password: 'admin password 1' };
const ALICE = { email: 'alice@example.org', password: 'alice password 1' };
const BOB = { email: 'bob@example.org', password: 'bob password 11' };

interface Reply {
  status: number;
  body: Record<string, unknown>;
}

let root: string;
let server: ServerProcess;
let station: StationProcess | undefined;
let serverDb: Database.Database;
let adminJwt: string;
let watchDir: string;
let archiveDir: string;
let stationDir: string;

const jwtFor = (user: { email: string; password: string }): Promise<string> =>
  loginJwt(server.url, user);

const api = (method: string, path: string, body?: unknown, jwt = adminJwt): Promise<Reply> =>
  serverRequest(server.url, jwt, method, path, body);

async function created(path: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await api('POST', path, body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

interface Deployment {
  state: string;
  next_run_at: string | null;
  runs: {
    id: number;
    state: string;
    files_completed: number;
    files_skipped: number;
    files_failed: number;
    error: string;
  }[];
}

/** Waits until the station's instrument watches `folder` (a configuration change arrived). */
async function watching(folder: string): Promise<void> {
  await waitFor(`the station watching ${folder}`, async () => {
    const status = (await station!.rpc('harvest.status', {})).body as {
      instruments: { watch: string[] }[];
    };
    return status.instruments[0]?.watch[0] === folder ? true : undefined;
  });
}

/** Waits until run `runId` of schedule `scheduleId` has ended; it as the server shows it. */
async function runEnded(scheduleId: number, runId: number): Promise<Deployment['runs'][number]> {
  return waitFor(
    'the run ended',
    async () => {
      const d = (await api('GET', `/api/schedules/${scheduleId}`)).body.deployment as Deployment;
      const r = d.runs.find((x) => x.id === runId);
      return r && r.state !== 'queued' && r.state !== 'running' ? r : undefined;
    },
    30_000,
  );
}

beforeAll(async () => {
  root = tempDir('labstation-harvest-server-');
  watchDir = join(root, 'acquisition');
  archiveDir = join(root, 'archive');
  stationDir = join(root, 'station');
  mkdirSync(watchDir);
  mkdirSync(archiveDir);
  const serverDir = join(root, 'server');
  const bundle = facilityBundle();
  delete bundle.station;
  const users = bundle.users as Record<string, unknown>[];
  users[0] = { ...users[0], ...ALICE };
  users[1] = { ...users[1], ...BOB };
  const imported = await runCli(['import', '--data', serverDir, writeJson(root, 'b.json', bundle)]);
  expect(imported.stderr).toBe('');
  server = await startServer(serverDir, {
    LABSTATION_ADMIN_EMAIL: ADMIN.email,
    LABSTATION_ADMIN_PASSWORD: ADMIN.password,
  });
  serverDb = new Database(join(serverDir, 'labstation.db'), { readonly: true });
  adminJwt = await jwtFor(ADMIN);
}, 60_000);

afterAll(async () => {
  await station?.stop();
  serverDb?.close();
  await server?.stop();
});

describe('harvest configured on the server, run by a station', () => {
  let instrumentId: number;
  let scheduleId: number;
  let firstKey: string;

  it('takes the configuration made over the API and reports the schedule deployed', async () => {
    const semId = serverDb.prepare("SELECT id FROM tools WHERE name = 'SEM'").pluck().get();
    const account = await created('/api/service-accounts', { name: 'sem-pc' });
    firstKey = String(account.key);
    const location = await created('/api/storage-locations', {
      name: 'archive',
      type: 'local',
      base_path: archiveDir,
    });
    const instrument = await created('/api/instruments', {
      name: 'SEM camera',
      tool_id: semId,
      service_account_id: account.id,
      watch: [{ path: watchDir, include: ['*.tif'] }],
      // Long enough that files written just before a trigger settle during its run.
      stability_seconds: 4,
      storage_location_id: location.id,
      destination_template: '{instrument}/{relative_path}',
    });
    instrumentId = instrument.id as number;
    const schedule = await created('/api/schedules', {
      instrument_id: instrumentId,
      cron: '0 0 1 1 *',
      timezone: 'UTC',
    });
    scheduleId = schedule.id as number;
    expect((schedule.deployment as Deployment).state).toBe('pending');

    station = await startStation(stationDir, {}, [
      '--server',
      server.url,
      '--key',
      String(account.key),
    ]);
    const deployment = await waitFor('the schedule deployed', async () => {
      const d = (await api('GET', `/api/schedules/${scheduleId}`)).body.deployment as Deployment;
      return d.state === 'deployed' ? d : undefined;
    });
    expect(deployment.next_run_at?.slice(5, 16)).toBe('01-01T00:00');
    const status = (await station.rpc('harvest.status', {})).body as {
      instruments: { name: string; watch: string[] }[];
    };
    expect(status.instruments).toEqual([
      expect.objectContaining({ name: 'SEM camera', watch: [watchDir] }),
    ]);
    const last = serverDb
      .prepare('SELECT last_seen_at FROM stations WHERE id = ?')
      .pluck()
      .get(account.id);
    expect(last).not.toBeNull();
  }, 60_000);

  it('harvests on a trigger, and the records reach the server verified', async () => {
    writeFileSync(join(watchDir, 'one.tif'), 'first image');
    writeFileSync(join(watchDir, 'two.tif'), 'second image, longer');
    writeFileSync(join(watchDir, 'notes.txt'), 'not harvested: not *.tif');
    const trigger = await api('POST', `/api/schedules/${scheduleId}/trigger`);
    expect(trigger.status).toBe(202);
    expect(trigger.body).toMatchObject({ state: 'queued', queued_offline: false });
    const runId = trigger.body.run_id as number;
    const run = await waitFor(
      'the run reported completed',
      async () => {
        const d = (await api('GET', `/api/schedules/${scheduleId}`)).body.deployment as Deployment;
        const r = d.runs.find((x) => x.id === runId);
        return r?.state === 'completed' ? r : undefined;
      },
      30_000,
    );
    expect(run).toMatchObject({ files_completed: 2, files_skipped: 0, files_failed: 0 });

    const files = await waitFor('the file records on the server', async () => {
      const res = await api('GET', `/api/files?instrument_id=${instrumentId}`);
      return (res.body.total as number) === 2
        ? (res.body.items as Record<string, unknown>[])
        : undefined;
    });
    const transfers = await waitFor('the transfer records on the server', async () => {
      const res = await api('GET', '/api/transfers?status=completed');
      return (res.body.total as number) === 2
        ? (res.body.items as Record<string, unknown>[])
        : undefined;
    });
    for (const t of transfers) {
      expect(t.checksum_verified).toBe(true);
      const file = files.find((f) => f.id === t.file_id)!;
      expect(t.dest_checksum).toBe(file.xxhash);
    }
    // The same ARK on the station and on the server.
    const local = await runCli(['files', '--data', stationDir, '--json']);
    const stationArks = (JSON.parse(local.stdout) as { persistent_id: string }[])
      .map((f) => f.persistent_id)
      .sort();
    expect(files.map((f) => f.persistent_id).sort()).toEqual(stationArks);
    const inst = (await api('GET', `/api/instruments/${instrumentId}`)).body;
    expect(inst.last_harvested_at).not.toBeNull();
  }, 60_000);

  it('runs a trigger sent right after the instrument is turned on again', async () => {
    const off = await api('PATCH', `/api/instruments/${instrumentId}`, { enabled: false });
    expect(off.status).toBe(200);
    await waitFor('the instrument off on the station', async () => {
      const status = (await station!.rpc('harvest.status', {})).body as {
        instruments: unknown[];
      };
      return status.instruments.length === 0 ? true : undefined;
    });
    // Turned on and triggered at once: the station gets both together, and applies the
    // configuration before the run (it failed the run: "the instrument is disabled").
    expect((await api('PATCH', `/api/instruments/${instrumentId}`, { enabled: true })).status).toBe(
      200,
    );
    const trigger = await api('POST', `/api/schedules/${scheduleId}/trigger`);
    expect(trigger.status).toBe(202);
    const runId = trigger.body.run_id as number;
    const run = await runEnded(scheduleId, runId);
    expect(run).toMatchObject({ state: 'completed', files_failed: 0, error: '' });
  }, 60_000);

  it('fails a triggered run whose watched folder cannot be read, naming it', async () => {
    const missing = join(root, 'not-mounted');
    const moved = await api('PATCH', `/api/instruments/${instrumentId}`, {
      watch: [{ path: missing, include: ['*.tif'] }],
    });
    expect(moved.status).toBe(200);
    await watching(missing);
    const trigger = await api('POST', `/api/schedules/${scheduleId}/trigger`);
    const runId = trigger.body.run_id as number;
    const run = await runEnded(scheduleId, runId);
    expect(run).toMatchObject({ state: 'failed', files_completed: 0, files_failed: 0 });
    expect(run.error).toContain('not everything in the watched folders could be read: ');
    expect(run.error).toContain(missing);
    const back = await api('PATCH', `/api/instruments/${instrumentId}`, {
      watch: [{ path: watchDir, include: ['*.tif'] }],
    });
    expect(back.status).toBe(200);
    await watching(watchDir);
  }, 60_000);

  it('shows the records to a user granted the instrument, and to no one else', async () => {
    const alice = await jwtFor(ALICE);
    const bob = await jwtFor(BOB);
    const aliceId = serverDb.prepare("SELECT id FROM users WHERE username = 'alice'").pluck().get();
    expect(
      (await api('POST', `/api/instruments/${instrumentId}/access`, { user_id: aliceId })).status,
    ).toBe(201);
    const seen = (await api('GET', '/api/files', undefined, alice)).body;
    expect(seen.total).toBe(2);
    expect((await api('GET', '/api/transfers', undefined, alice)).body.total).toBe(2);
    const hidden = (await api('GET', '/api/files', undefined, bob)).body;
    expect(hidden).toEqual({ items: [], total: 0, page: 1, size: 50 });
    const fileId = (seen.items as { id: number }[])[0].id;
    expect((await api('GET', `/api/files/${fileId}`, undefined, bob)).status).toBe(404);
    expect((await api('GET', `/api/instruments/${instrumentId}`, undefined, alice)).status).toBe(
      403,
    );
  });

  it('re-deploys a changed schedule and removes a deleted one on the station', async () => {
    const patched = await api('PATCH', `/api/schedules/${scheduleId}`, { enabled: false });
    expect((patched.body.deployment as Deployment).state).toBe('pending');
    await waitFor('the disabled schedule removed on the station', async () => {
      const d = (await api('GET', `/api/schedules/${scheduleId}`)).body.deployment as Deployment;
      return d.state === 'removed' ? d : undefined;
    });
    expect((await api('DELETE', `/api/schedules/${scheduleId}`)).status).toBe(204);
    const stationDb = new Database(join(stationDir, 'labstation.db'), { readonly: true });
    try {
      await waitFor('the schedule gone from the station', () =>
        stationDb.prepare('SELECT count(*) FROM harvest_schedules').pluck().get() === 0
          ? true
          : undefined,
      );
    } finally {
      stationDb.close();
    }
  });

  it('moves a watched folder on the station when the instrument changes', async () => {
    const other = join(root, 'acquisition-2');
    mkdirSync(other);
    const res = await api('PATCH', `/api/instruments/${instrumentId}`, {
      watch: [{ path: other, include: ['*.tif'] }],
    });
    expect(res.status).toBe(200);
    await watching(other);
  });

  it('hands an instrument moved to a new station the records and ARKs of its files', async () => {
    // The station's PC is replaced: the instrument goes to a new one, watching the old folder.
    await station!.stop();
    station = undefined;
    const account = await created('/api/service-accounts', { name: 'sem-pc-new' });
    const moved = await api('PATCH', `/api/instruments/${instrumentId}`, {
      service_account_id: account.id,
      watch: [{ path: watchDir, include: ['*.tif'] }],
      destination_template: '{instrument}/{user}/{project}/{relative_path}',
    });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    await created('/api/hooks', {
      name: 'who',
      trigger: 'post_transfer',
      kind: 'usage_context',
      instrument_id: instrumentId,
    });
    const recordsBefore = (await api('GET', `/api/files?instrument_id=${instrumentId}`)).body
      .items as { id: number; filename: string; persistent_id: string }[];
    expect(recordsBefore.map((f) => f.filename).sort()).toEqual(['one.tif', 'two.tif']);

    // More history than a page, as the old station pushed it: files gone since, and one that
    // failed there (its storage was down) and waits to be transferred under the ARK it has.
    writeFileSync(join(watchDir, 'four.tif'), 'fourth image, never transferred');
    const four = statSync(join(watchDir, 'four.tif'));
    const writable = new Database(join(root, 'server', 'labstation.db'));
    // The station that made one.tif and two.tif.
    const oldStation = writable
      .prepare('SELECT station_id FROM harvest_files WHERE instrument_id = ? LIMIT 1')
      .pluck()
      .get(instrumentId) as number;
    const fourArk = makeArk({ naan: '99999', shoulder: 'fk4' }, 'h9999999');
    // four.tif was first seen there during alice's usage, which the new station never holds.
    const usageUuid = newUuid();
    try {
      const insert = writable.prepare(
        `INSERT INTO harvest_files (uuid, instrument_id, station_id, persistent_id, watch_path,
           relative_path, source_path, filename, size, mtime_ms, xxhash, first_discovered_at,
           state, updated_at, usage_event_id)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      );
      const t = '2026-11-20T10:00:00.000Z';
      writable.transaction(() => {
        const idOf = (table: string, name: string): number =>
          writable
            .prepare(`SELECT id FROM ${table} WHERE ${table === 'users' ? 'username' : 'name'} = ?`)
            .pluck()
            .get(name) as number;
        const alice = idOf('users', 'alice');
        const usageId = writable
          .prepare(
            `INSERT INTO usage_events (uuid, user_id, operator_id, project_id, tool_id, start,
               "end", pre_run_data, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          )
          .run(
            usageUuid,
            alice,
            alice,
            idOf('projects', 'Cathodes'),
            idOf('tools', 'SEM'),
            '2026-11-20T09:00:00.000Z',
            '2026-11-20T11:00:00.000Z',
            JSON.stringify({ experiment_title: 'Grain growth', data_consent: 'Agree' }),
            t,
          ).lastInsertRowid;
        for (let i = 0; i < HISTORY_PAGE * 2 + 3; i += 1) {
          const name = `old-${i}.tif`;
          const ark = makeArk({ naan: '99999', shoulder: 'fk4' }, `h${String(i).padStart(7, '0')}`);
          const path = join(watchDir, 'gone', name);
          insert.run(
            newUuid(),
            instrumentId,
            oldStation,
            ark,
            watchDir,
            `gone/${name}`,
            path,
            name,
            10,
            1e12,
            null,
            t,
            'gone',
            t,
            null,
          );
        }
        insert.run(
          newUuid(),
          instrumentId,
          oldStation,
          fourArk,
          watchDir,
          'four.tif',
          join(watchDir, 'four.tif'),
          'four.tif',
          four.size,
          four.mtimeMs,
          null,
          t,
          'failed',
          t,
          usageId,
        );
      })();
    } finally {
      writable.close();
    }

    // Its history is the instrument's, for the station that runs it now only.
    const history = (key: string, query: string): Promise<Response> =>
      fetch(new URL(`/sync/harvest/history?${query}`, server.url), {
        headers: { authorization: `Station ${key}` },
      });
    const uuid = serverDb
      .prepare('SELECT uuid FROM instruments WHERE id = ?')
      .pluck()
      .get(instrumentId) as string;
    const refused = await history(firstKey, `instrument=${uuid}`);
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { detail: string }).detail).toContain(
      'this station does not run that instrument',
    );
    expect((await history(String(account.key), 'instrument=nope')).status).toBe(400);
    expect(
      (await fetch(new URL(`/sync/harvest/history?instrument=${uuid}`, server.url))).status,
    ).toBe(401);
    const firstPage = (await (await history(String(account.key), `instrument=${uuid}`)).json()) as {
      files: { persistent_id: string; transfers: unknown[] }[];
      next: number | null;
    };
    expect(firstPage.files).toHaveLength(HISTORY_PAGE);
    expect(firstPage.next).not.toBeNull();
    expect(firstPage.files[0]?.transfers).toHaveLength(1);
    expect(firstPage.files[0]).toMatchObject({ usage_event_uuid: null, usage_context: null });

    // A run triggered before the new station first connects waits there for the history
    // (it failed: "the instrument is not harvested yet"), then runs.
    const nightly = await created('/api/schedules', {
      instrument_id: instrumentId,
      cron: '0 3 * * *',
      timezone: 'UTC',
    });
    const queued = await api('POST', `/api/schedules/${String(nightly.id)}/trigger`);
    expect(queued.status).toBe(202);
    const queuedRun = queued.body.run_id as number;

    const newDir = join(root, 'station-new');
    station = await startStation(newDir, {}, [
      '--server',
      server.url,
      '--key',
      String(account.key),
    ]);
    const st = station;
    writeFileSync(join(watchDir, 'three.tif'), 'third image');
    await waitFor(
      'three.tif and four.tif on the server',
      async () => {
        const res = await api('GET', `/api/transfers?status=completed`);
        return (res.body.total as number) === 4 ? true : undefined;
      },
      30_000,
    );
    const ran = await waitFor(
      'the run queued while the station was away',
      async () => {
        const d = (await api('GET', `/api/schedules/${String(nightly.id)}`)).body
          .deployment as Deployment;
        const r = d.runs.find((x) => x.id === queuedRun);
        return r && r.state !== 'queued' && r.state !== 'running' ? r : undefined;
      },
      30_000,
    );
    expect(ran).toMatchObject({ state: 'completed', files_failed: 0, error: '' });
    // one.tif and two.tif were not harvested again, and four.tif kept its ARK.
    const after = serverDb
      .prepare(
        `SELECT filename, persistent_id, state, station_id FROM harvest_files
         WHERE instrument_id = ? AND filename NOT LIKE 'old-%' ORDER BY filename`,
      )
      .all(instrumentId) as { filename: string; persistent_id: string; state: string }[];
    expect(after.map((f) => f.filename)).toEqual(['four.tif', 'one.tif', 'three.tif', 'two.tif']);
    for (const f of recordsBefore) {
      expect(after.find((a) => a.filename === f.filename)?.persistent_id).toBe(f.persistent_id);
    }
    expect(after.find((a) => a.filename === 'four.tif')).toMatchObject({
      persistent_id: fourArk,
      state: 'done',
    });
    const fourTransfers = serverDb
      .prepare(
        `SELECT t.status, t.checksum_verified, t.destination_path FROM harvest_transfers t
           JOIN harvest_files f ON f.id = t.file_id WHERE f.persistent_id = ?`,
      )
      .all(fourArk);
    // Placed and described by the usage it was made during on the old station: the server sent
    // that usage with the history.
    expect(fourTransfers).toEqual([
      {
        status: 'completed',
        checksum_verified: 1,
        destination_path: join(archiveDir, 'SEM camera', 'alice', 'Cathodes', 'four.tif'),
      },
    ]);
    const fourRecord = serverDb
      .prepare(
        `SELECT e.uuid AS usage, f.metadata_ FROM harvest_files f
           LEFT JOIN usage_events e ON e.id = f.usage_event_id WHERE f.persistent_id = ?`,
      )
      .get(fourArk) as { usage: string; metadata_: string };
    expect(fourRecord.usage).toBe(usageUuid);
    expect(JSON.parse(fourRecord.metadata_)).toMatchObject({
      usage_context: {
        usage_event: usageUuid,
        tool: 'SEM',
        start: '2026-11-20T09:00:00.000Z',
        end: '2026-11-20T11:00:00.000Z',
        user: { username: 'alice', name: 'Alice Martin' },
        project: { name: 'Cathodes', application_identifier: 'PRJ-1' },
        experiment_title: 'Grain growth',
      },
    });
    // A file first seen here has no usage: the template's word for none.
    expect(
      serverDb
        .prepare(
          `SELECT t.destination_path FROM harvest_transfers t
             JOIN harvest_files f ON f.id = t.file_id WHERE f.filename = 'three.tif'`,
        )
        .pluck()
        .get(),
    ).toBe(join(archiveDir, 'SEM camera', 'no-usage', 'no-usage', 'three.tif'));

    // The old station, back in touch, pushes its own copy of four.tif made while it was out of
    // touch: acknowledged (its outbox goes on) and kept out, as the file is completed already.
    const fourUuid = serverDb
      .prepare('SELECT uuid FROM harvest_files WHERE persistent_id = ?')
      .pluck()
      .get(fourArk) as string;
    const now = new Date().toISOString();
    const lateUuid = newUuid();
    const late = await fetch(new URL('/sync/push', server.url), {
      method: 'POST',
      headers: { authorization: `Station ${firstKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        records: [
          {
            id: 1,
            kind: 'harvest_transfer',
            uuid: lateUuid,
            payload: {
              uuid: lateUuid,
              file_uuid: fourUuid,
              status: 'completed',
              destination_path: join(archiveDir, 'elsewhere', 'four.tif'),
              bytes_transferred: four.size,
              dest_checksum: 'ab'.repeat(16),
              checksum_verified: true,
              started_at: now,
              completed_at: now,
              error: '',
              note: '',
            },
          },
        ],
      }),
    });
    expect(await late.json()).toEqual({ acked: [1], stale: [1], error: null });
    expect(
      serverDb
        .prepare(
          'SELECT count(*) FROM harvest_transfers t JOIN harvest_files f ON f.id = t.file_id WHERE f.persistent_id = ?',
        )
        .pluck()
        .get(fourArk),
    ).toBe(1);

    // The new station holds the whole history, with the transfers made before.
    const local = JSON.parse((await runCli(['files', '--data', newDir, '--json'])).stdout) as {
      id: number;
      persistent_id: string;
      usage_event: string | null;
    }[];
    expect(local).toHaveLength(HISTORY_PAGE * 2 + 3 + 4);
    const fourHere = local.find((f) => f.persistent_id === fourArk);
    expect(fourHere?.usage_event).toBe(usageUuid);
    // The Data tab names that usage to someone logged on, as made on another station.
    expect((await st.rpc('session.logon', { login: 'alice', pin: '1234' })).status).toBe(200);
    const details = (await st.rpc('harvest.file', { id: fourHere?.id })).body as {
      usage: FileUsageView | null;
    };
    expect(details.usage).toEqual({
      uuid: usageUuid,
      user_name: 'Alice Martin',
      project_name: 'Cathodes',
      tool_name: 'SEM',
      start: '2026-11-20T09:00:00.000Z',
      end: '2026-11-20T11:00:00.000Z',
      elsewhere: true,
    });
    const transfers = JSON.parse(
      (await runCli(['transfers', '--data', newDir, '--json'])).stdout,
    ) as {
      persistent_id: string;
      status: string;
    }[];
    for (const f of recordsBefore) {
      expect(transfers.filter((t) => t.persistent_id === f.persistent_id)).toEqual([
        expect.objectContaining({ status: 'completed' }),
      ]);
    }
    const status = (await st.rpc('harvest.status', {})).body as {
      instruments: { name: string; problem: string | null }[];
    };
    expect(status.instruments).toEqual([expect.objectContaining({ problem: null })]);
  }, 90_000);
});
