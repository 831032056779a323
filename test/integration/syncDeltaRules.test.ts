/**
 * The server side of config sync, on a real SQLite file with the change log's triggers and the
 * real server app (app.inject): what a station's delta since its cursor holds (every change,
 * deletions, and nothing of another station), what a cursor the server never gave yields, and
 * how the sync routes refuse a query or body that does not parse.
 */
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../../electron/core/db/open.js';
import { createStationAccount } from '../../electron/core/server/accounts.js';
import { createServerApp } from '../../electron/core/server/app.js';
import {
  facilityDelta,
  latestChange,
  type StationAccount,
} from '../../electron/core/server/sync/export.js';
import { MAX_PUSH_BATCH } from '../../electron/core/sync/protocol.js';
import { newUuid } from '../../electron/core/util/ids.js';
import { createLogger } from '../../electron/core/util/log.js';
import { tempDir } from './helpers.js';

const T0 = '2026-01-01T00:00:00.000Z';
const SEM = 1;
const AFM = 2;
const I_SEM = newUuid();
const I_AFM = newUuid();
let db: Db;
let app: FastifyInstance;
let sem: StationAccount;
let afm: StationAccount;
let semKey = '';

const delta = (station: StationAccount, cursor: number) => facilityDelta(db, station, cursor);

beforeAll(async () => {
  db = openDatabase(join(tempDir('labstation-sync-delta-rules-'), 'server.db'));
  db.exec(`INSERT INTO settings (key, value) VALUES ('mode', '"server"');
    INSERT INTO users (id, uuid, username, pin_hash, created_at, updated_at)
      VALUES (1, 'u-alice', 'alice', 'pin-a', '${T0}', '${T0}'),
             (2, 'u-bob', 'bob', 'pin-b', '${T0}', '${T0}'),
             (3, 'u-carol', 'carol', 'pin-c', '${T0}', '${T0}');
    INSERT INTO projects (id, uuid, name, created_at, updated_at)
      VALUES (1, 'p-1', 'P1', '${T0}', '${T0}');
    INSERT INTO tools (id, uuid, name, created_at, updated_at)
      VALUES (${SEM}, 't-sem', 'SEM', '${T0}', '${T0}'), (${AFM}, 't-afm', 'AFM', '${T0}', '${T0}');
    INSERT INTO qualifications (user_id, tool_id) VALUES (1, ${SEM}), (2, ${AFM});
    INSERT INTO user_projects (user_id, project_id) VALUES (1, 1), (2, 1);`);
  const semAccount = createStationAccount(db, { name: 'sem-pc', tool: SEM });
  const afmAccount = createStationAccount(db, { name: 'afm-pc', tool: AFM });
  semKey = semAccount.key;
  const account = (id: number): StationAccount =>
    db
      .prepare('SELECT id, uuid, name, tool_id FROM stations WHERE id = ?')
      .get(id) as StationAccount;
  sem = account(semAccount.id);
  afm = account(afmAccount.id);
  // Each station runs one instrument with a hook of its own, a schedule and a queued run; one
  // hook is for every instrument. Each station has an event whose answers were given on the
  // server and not yet pushed back.
  db.exec(`
    INSERT INTO storage_locations (id, uuid, name, type, base_path, created_at, updated_at)
      VALUES (1, 'l-sem', 'sem-store', 'local', '/sem', '${T0}', '${T0}'),
             (2, 'l-afm', 'afm-store', 'local', '/afm', '${T0}', '${T0}');
    INSERT INTO instruments (id, uuid, name, tool_id, station_id, storage_location_id,
        destination_template, created_at, updated_at)
      VALUES (1, '${I_SEM}', 'sem-camera', ${SEM}, ${sem.id}, 1, '{filename}', '${T0}', '${T0}'),
             (2, '${I_AFM}', 'afm-camera', ${AFM}, ${afm.id}, 2, '{filename}', '${T0}', '${T0}');
    INSERT INTO harvest_hooks (id, uuid, name, "trigger", kind, instrument_id, created_at,
        updated_at)
      VALUES (1, 'h-sem', 'sem-hook', 'pre_transfer', 'metadata', 1, '${T0}', '${T0}'),
             (2, 'h-afm', 'afm-hook', 'pre_transfer', 'metadata', 2, '${T0}', '${T0}'),
             (3, 'h-all', 'all-hook', 'post_transfer', 'metadata', NULL, '${T0}', '${T0}');
    INSERT INTO harvest_schedules (id, uuid, instrument_id, station_id, cron, created_at,
        updated_at)
      VALUES (1, 's-sem', 1, ${sem.id}, '0 3 * * *', '${T0}', '${T0}'),
             (2, 's-afm', 2, ${afm.id}, '0 4 * * *', '${T0}', '${T0}');
    INSERT INTO harvest_runs (uuid, instrument_id, station_id, "trigger", requested_at)
      VALUES ('r-sem', 1, ${sem.id}, 'manual', '${T0}'),
             ('r-afm', 2, ${afm.id}, 'manual', '${T0}');
    INSERT INTO usage_events (uuid, user_id, operator_id, project_id, tool_id, start, "end",
        run_data, answered_on_server_at, answered_on_server_by_id, answer_acked, station_id,
        station_version, updated_at)
      VALUES ('e-sem', 1, 1, 1, ${SEM}, '${T0}', '${T0}', '{"a":1}', '${T0}', 1, 0, ${sem.id},
                1, '${T0}'),
             ('e-afm', 2, 2, 1, ${AFM}, '${T0}', '${T0}', '{"b":2}', '${T0}', 2, 0, ${afm.id},
                1, '${T0}');`);
  app = await createServerApp({
    db,
    log: createLogger('silent'),
    jwtSecret: 'sync-delta-rules-secret-0123456789',
    timeZone: () => 'UTC',
  });
  await app.ready();
});

afterAll(async () => {
  await app.close();
  db.close();
});

describe("a station's delta since its cursor", () => {
  it('holds every change since the cursor, deletions too, and nothing before it', () => {
    const cursor = latestChange(db);
    expect(delta(sem, cursor)).toMatchObject({
      full: false,
      users: [],
      projects: [],
      tools: [],
      deleted: { users: [], projects: [], tools: [] },
    });
    db.prepare("UPDATE users SET pin_hash = 'pin-a2' WHERE id = 1").run();
    db.prepare('UPDATE projects SET active = 0 WHERE id = 1').run();
    db.prepare('DELETE FROM users WHERE id = 3').run();
    const next = delta(sem, cursor);
    expect(next.full).toBe(false);
    expect(next.cursor).toBe(latestChange(db));
    expect(next.users.map((u) => [u.uuid, u.pin_hash])).toEqual([['u-alice', 'pin-a2']]);
    expect(next.projects).toMatchObject([{ uuid: 'p-1', active: false }]);
    expect(next.deleted.users).toEqual(['u-carol']);
    expect(delta(sem, next.cursor)).toMatchObject({
      users: [],
      projects: [],
      deleted: { users: [] },
    });
  });

  // Mutation: userRecord sending the PIN hash and badge of a person turned off (every station
  // kept an argon2id hash of every former member).
  it('sends a person turned off without PIN hash or badge, and both again when back', () => {
    db.prepare("UPDATE users SET badge_number = 'b-200' WHERE id = 2").run();
    const cursor = latestChange(db);
    db.prepare('UPDATE users SET is_active = 0 WHERE id = 2').run();
    expect(delta(afm, cursor).users).toMatchObject([
      { uuid: 'u-bob', is_active: false, pin_hash: null, badge_number: null },
    ]);
    expect(delta(afm, 0).users.find((u) => u.uuid === 'u-bob')).toMatchObject({
      pin_hash: null,
      badge_number: null,
    });
    const off = latestChange(db);
    db.prepare('UPDATE users SET is_active = 1 WHERE id = 2').run();
    expect(delta(afm, off).users).toMatchObject([
      { uuid: 'u-bob', is_active: true, pin_hash: 'pin-b', badge_number: 'b-200' },
    ]);
  });

  it('sends a user again without a qualification the server took away', () => {
    const cursor = latestChange(db);
    db.prepare(`DELETE FROM qualifications WHERE user_id = 1 AND tool_id = ${SEM}`).run();
    const alice = delta(sem, cursor).users.find((u) => u.uuid === 'u-alice');
    expect(alice?.qualified_tools).toEqual([]);
  });

  it("carries a tool's changed question forms", () => {
    const cursor = latestChange(db);
    const post = JSON.stringify([{ type: 'textbox', name: 'sample', title: 'Sample' }]);
    db.prepare(`UPDATE tools SET post_usage_questions = ? WHERE id = ${SEM}`).run(post);
    expect(delta(sem, cursor).tools).toMatchObject([{ uuid: 't-sem', post_usage_questions: post }]);
  });

  it('gives the whole facility for a cursor this server never gave (restored, or ahead)', () => {
    const ahead = delta(sem, latestChange(db) + 50);
    expect(ahead.full).toBe(true);
    expect(ahead.cursor).toBe(latestChange(db));
    expect(ahead.users.map((u) => u.uuid)).toEqual(['u-alice', 'u-bob']);
  });

  it("holds this station's harvest config, runs and owed answers, none of another's", () => {
    const full = delta(sem, 0);
    expect(full.harvest?.instruments.map((i) => i.uuid)).toEqual([I_SEM]);
    expect(full.harvest?.hooks.map((h) => h.uuid)).toEqual(['h-sem', 'h-all']);
    expect(full.harvest?.schedules.map((s) => s.uuid)).toEqual(['s-sem']);
    expect(full.harvest?.storage_locations.map((l) => l.uuid)).toEqual(['l-sem']);
    expect(full.runs?.map((r) => r.uuid)).toEqual(['r-sem']);
    expect(full.answers?.map((a) => a.usage_uuid)).toEqual(['e-sem']);
    expect(delta(afm, 0).answers?.map((a) => a.usage_uuid)).toEqual(['e-afm']);
  });
});

describe('the sync routes', () => {
  const get = async (url: string) => {
    const res = await app.inject({
      method: 'GET',
      url,
      headers: { authorization: `Station ${semKey}` },
    });
    return { status: res.statusCode, body: res.json<unknown>() };
  };
  const push = async (body: unknown) => {
    const res = await app.inject({
      method: 'POST',
      url: '/sync/push',
      headers: { authorization: `Station ${semKey}`, 'content-type': 'application/json' },
      payload: JSON.stringify(body),
    });
    return { status: res.statusCode, body: res.json<{ detail?: string }>() };
  };

  it('refuses a cursor or wait that does not parse with 400 naming the parameter', async () => {
    for (const cursor of ['abc', '-1', '1.5']) {
      const res = await get(`/sync/changes?cursor=${cursor}`);
      expect(res.status, cursor).toBe(400);
      expect(Object.keys(res.body as object), cursor).toEqual(['cursor']);
    }
    const wait = await get('/sync/changes?cursor=1&wait=31');
    expect(wait.status).toBe(400);
    expect(Object.keys(wait.body as object)).toEqual(['wait']);
  });

  it("refuses the file history of another station's instrument with 403", async () => {
    expect((await get(`/sync/harvest/history?instrument=${I_SEM}`)).status).toBe(200);
    const other = await get(`/sync/harvest/history?instrument=${I_AFM}`);
    expect(other).toEqual({
      status: 403,
      body: { detail: `instrument ${I_AFM}: this station does not run that instrument` },
    });
  });

  it('sends the history of an instrument a station registered, its own records only; none of one unknown', async () => {
    // Configured on the stations themselves, registered from their records, run by none here:
    // sem-pc made one file of it, afm-pc another.
    const registered = newUuid();
    db.exec(`
      INSERT INTO instruments (id, uuid, name, tool_id, station_id, destination_template,
          created_at, updated_at)
        VALUES (3, '${registered}', 'shared-camera', ${SEM}, NULL, '{filename}', '${T0}', '${T0}');
      INSERT INTO station_instruments (station_id, instrument_id)
        VALUES (${sem.id}, 3), (${afm.id}, 3);
      INSERT INTO harvest_files (uuid, instrument_id, station_id, persistent_id, watch_path,
          relative_path, source_path, filename, size, mtime_ms, first_discovered_at, updated_at)
        VALUES ('f-sem', 3, ${sem.id}, 'ark:99999/fk4sem', '/w', 'a.tif', '/w/a.tif', 'a.tif', 1,
                  1, '${T0}', '${T0}'),
               ('f-afm', 3, ${afm.id}, 'ark:99999/fk4afm', '/w', 'b.tif', '/w/b.tif', 'b.tif', 1,
                  1, '${T0}', '${T0}');`);
    const page = await get(`/sync/harvest/history?instrument=${registered}`);
    expect(page.status).toBe(200);
    expect((page.body as { files: { uuid: string }[] }).files.map((f) => f.uuid)).toEqual([
      'f-sem',
    ]);
    expect(await get(`/sync/harvest/history?instrument=${newUuid()}`)).toEqual({
      status: 200,
      body: { files: [], next: null },
    });
  });

  it('refuses a push batch over the limit, or a record failing the schema, naming it', async () => {
    const record = (id: number) => ({ id, kind: 'usage_event', uuid: `x-${id}`, payload: {} });
    const over = Array.from({ length: MAX_PUSH_BATCH + 1 }, (_, i) => record(i + 1));
    const big = await push({ records: over });
    expect(big.status).toBe(400);
    expect(big.body.detail).toMatch(/^records: /);
    const bad = await push({ records: [{ ...record(1), uuid: '' }] });
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toMatch(/^records\.0\.uuid: /);
  });
});
