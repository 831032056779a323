/**
 * The long-poll of `GET /sync/changes?cursor=N&wait=S` (electron/core/sync/protocol.ts): a pull
 * at the current cursor is held, and answered as soon as a change is made, with that change in
 * it, not when its wait ends. The real server app on a real SQLite file, listening on loopback;
 * the stations' pulls are real HTTP requests with `Authorization: Station <key>`, sent as the
 * station's sync client sends them (cursor, wait, mark); the admin's changes are made as the
 * admin UI and API make them (`POST /rpc/admin.*`, `/api/*` with the JWT of a log-in), so the
 * change log's triggers and the harvest API's notices write what wakes the held pulls.
 *
 * There is no notification: while a pull is held, a timer of the sync routes (ChangeWaiters in
 * electron/core/server/sync/routes.ts, every 250 ms) reads the newest change number and wakes
 * each pull whose cursor is below it, whatever the change concerns. A change that does not
 * concern a station so answers its held pull too, with a delta that holds nothing of it and the
 * new cursor. That is what is tested here, as the server does it.
 *
 * Each held pull runs with wait=30 while each test has 15 s: a pull answered only when its wait
 * ended would fail the test by its timeout.
 */
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../../electron/core/db/open.js';
import { createAccount, createStationAccount } from '../../electron/core/server/accounts.js';
import { createServerApp } from '../../electron/core/server/app.js';
import { latestChange } from '../../electron/core/server/sync/export.js';
import type { FacilityDelta } from '../../electron/core/sync/protocol.js';
import { createLogger } from '../../electron/core/util/log.js';
import { loginJwt, tempDir, waitFor } from './helpers.js';

const T0 = '2026-01-01T00:00:00.000Z';
const ADMIN = { email: 'admin@example.org', password: 'admin password 1' };
/** What each held pull asks for: the most the protocol allows, twice each test's timeout. */
const WAIT_SECONDS = 30;
const TEST_TIMEOUT = 15_000;
/** How long a held pull is seen not to answer before the change is made. */
const HELD_MS = 400;

let db: Db;
let app: FastifyInstance;
let url = '';
let adminJwt = '';
/** Ends every pull still open when the tests are done (one a failed test left held). */
const teardown = new AbortController();

interface Station {
  id: number;
  uuid: string;
  key: string;
}
let sem: Station;
let afm: Station;
const instruments = { sem: 0, afm: 0 };

function station(name: string, tool: string): Station {
  const { id, key } = createStationAccount(db, { name, tool });
  const uuid = db.prepare('SELECT uuid FROM stations WHERE id = ?').pluck().get(id) as string;
  return { id, uuid, key };
}

/** An admin call as the admin UI makes it; its answer. */
async function rpc<T>(name: string, args: object): Promise<T> {
  const res = await fetch(`${url}rpc/${name}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${adminJwt}` },
    body: JSON.stringify(args),
  });
  const text = await res.text();
  expect(res.status, `${name}: ${text}`).toBe(200);
  return JSON.parse(text) as T;
}

/** A call of the harvest management API with the admin's JWT; its answer. */
async function api(method: 'POST' | 'PATCH', path: string, body: object): Promise<{ id: number }> {
  const res = await fetch(`${url}${path.slice(1)}`, {
    method,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${adminJwt}` },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  expect(res.status, `${method} ${path}: ${text}`).toBeLessThan(300);
  return JSON.parse(text) as { id: number };
}

const newProject = (name: string) =>
  rpc<{ project: { id: number; uuid: string; updated_at: string } }>('admin.projects.save', {
    name,
    application_identifier: '',
    active: true,
  });

function pull(
  who: Station,
  query: string,
  signal?: AbortSignal,
): Promise<{ status: number; body: FacilityDelta }> {
  return fetch(`${url}sync/changes?${query}`, {
    headers: { authorization: `Station ${who.key}` },
    signal: signal ? AbortSignal.any([signal, teardown.signal]) : teardown.signal,
  }).then(async (res) => ({ status: res.status, body: (await res.json()) as FacilityDelta }));
}

/** The station's cursor and its mark, as a pull without a wait gives them. */
async function current(who: Station): Promise<{ cursor: number; mark: string }> {
  const res = await pull(who, 'cursor=0');
  expect(res.status).toBe(200);
  expect(res.body.cursor).toBe(latestChange(db));
  return { cursor: res.body.cursor, mark: res.body.cursor_mark ?? '' };
}

type Answer = Promise<{ status: number; body: FacilityDelta }>;

/**
 * A pull at `at` with wait=30, as the station's sync client sends it, once the server has let
 * it in (the station's last_seen_at written by its authentication) and it has not answered in
 * HELD_MS: held. Its answer is a promise that has not settled yet (wrapped: an async function
 * returning it would wait for it).
 */
async function hold(
  who: Station,
  at: { cursor: number; mark: string },
  signal?: AbortSignal,
): Promise<{ answer: Answer }> {
  // A marker of the test's own: last_seen_at logs no change (no trigger reads it).
  db.prepare('UPDATE stations SET last_seen_at = NULL WHERE id = ?').run(who.id);
  const answer = pull(who, `cursor=${at.cursor}&wait=${WAIT_SECONDS}&mark=${at.mark}`, signal);
  // Settled or not, the promise is awaited later: no unhandled rejection meanwhile.
  answer.catch(() => undefined);
  await waitFor('the pull let in', () =>
    db.prepare('SELECT last_seen_at FROM stations WHERE id = ?').pluck().get(who.id) === null
      ? undefined
      : true,
  );
  const timer = new Promise<'held'>((resolve) => setTimeout(() => resolve('held'), HELD_MS));
  expect(await Promise.race([answer.then(() => 'answered' as const), timer])).toBe('held');
  return { answer };
}

beforeAll(async () => {
  db = openDatabase(join(tempDir('labstation-sync-long-poll-'), 'server.db'));
  db.exec(`INSERT INTO settings (key, value) VALUES ('mode', '"server"');
    INSERT INTO tools (id, uuid, name, created_at, updated_at)
      VALUES (1, 't-sem', 'SEM', '${T0}', '${T0}'), (2, 't-afm', 'AFM', '${T0}', '${T0}');`);
  await createAccount(db, { ...ADMIN, role: 'admin', username: 'admin' });
  sem = station('sem-pc', 'SEM');
  afm = station('afm-pc', 'AFM');
  app = await createServerApp({
    db,
    log: createLogger('silent'),
    jwtSecret: 'sync-long-poll-secret-0123456789',
    timeZone: () => 'UTC',
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/`;
  adminJwt = await loginJwt(url, ADMIN);
  // Each station runs an instrument: a harvest change of one concerns that station alone.
  const location = await api('POST', '/api/storage-locations', {
    name: 'store',
    type: 'local',
    base_path: '/mnt/store',
  });
  const instrument = async (name: string, tool: number, account: Station) =>
    (
      await api('POST', '/api/instruments', {
        name,
        tool_id: tool,
        service_account_id: account.id,
        watch: [{ path: `/data/${name}` }],
        storage_location_id: location.id,
      })
    ).id;
  instruments.sem = await instrument('sem-camera', 1, sem);
  instruments.afm = await instrument('afm-camera', 2, afm);
});

afterAll(async () => {
  teardown.abort();
  await app.close();
  db.close();
});

describe('a pull held at the current cursor', () => {
  it(
    'is answered at the first change, with that change in it',
    async () => {
      const at = await current(sem);
      const held = await hold(sem, at);
      const { project } = await newProject('Long-poll project');
      const { status, body } = await held.answer;
      expect(status).toBe(200);
      expect(body.full).toBe(false);
      expect(body.cursor).toBeGreaterThan(at.cursor);
      expect(body.cursor).toBe(latestChange(db));
      expect(body.projects).toMatchObject([{ uuid: project.uuid, name: 'Long-poll project' }]);
      expect(body.users).toEqual([]);
      expect(body.tools).toEqual([]);
    },
    TEST_TIMEOUT,
  );

  it(
    'several held pulls, of two stations and one station twice, are all answered by one change',
    async () => {
      const semAt = await current(sem);
      const afmAt = await current(afm);
      const held = [await hold(sem, semAt), await hold(sem, semAt), await hold(afm, afmAt)];
      const { user } = await rpc<{ user: { uuid: string } }>('admin.users.save', {
        username: 'carol',
        email: 'carol@example.org',
        first_name: 'Carol',
        last_name: 'Ng',
        badge_number: '555000',
        role: 'user',
        is_active: true,
        pin: '4321',
        projects: [],
        qualified_tools: [1, 2],
      });
      const answers = await Promise.all(held.map((h) => h.answer));
      const cursor = latestChange(db);
      expect(cursor).toBeGreaterThan(semAt.cursor);
      for (const { status, body } of answers) {
        expect(status).toBe(200);
        expect(body.full).toBe(false);
        expect(body.cursor).toBe(cursor);
        expect(body.users).toMatchObject([
          { uuid: user.uuid, username: 'carol', qualified_tools: ['t-afm', 't-sem'] },
        ]);
      }
      expect(answers.map((a) => a.body.station.uuid)).toEqual([sem.uuid, sem.uuid, afm.uuid]);
    },
    TEST_TIMEOUT,
  );

  it(
    "is answered by a change that concerns another station, with none of that station's records",
    async () => {
      const semAt = await current(sem);
      const afmAt = await current(afm);
      const semHeld = await hold(sem, semAt);
      const afmHeld = await hold(afm, afmAt);
      // The harvest API logs a `station` change for the AFM station alone.
      await api('PATCH', `/api/instruments/${instruments.afm}`, { description: 'AFM camera' });
      const [semAnswer, afmAnswer] = await Promise.all([semHeld.answer, afmHeld.answer]);
      const cursor = latestChange(db);
      expect(cursor).toBeGreaterThan(semAt.cursor);
      // The station it concerns gets its harvest configuration as it is now.
      expect(afmAnswer.status).toBe(200);
      expect(afmAnswer.body.cursor).toBe(cursor);
      expect(afmAnswer.body.harvest?.instruments).toMatchObject([
        { name: 'afm-camera', description: 'AFM camera' },
      ]);
      // The other is woken too (any change newer than its cursor does) and answered at the new
      // cursor with nothing: no harvest part, no reservations, no records.
      expect(semAnswer.status).toBe(200);
      expect(semAnswer.body).toMatchObject({
        cursor,
        full: false,
        station: { uuid: sem.uuid, tool: 'SEM' },
        users: [],
        projects: [],
        tools: [],
        deleted: { users: [], projects: [], tools: [] },
        answers: [],
        runs: [],
      });
      expect(semAnswer.body).not.toHaveProperty('harvest');
      expect(semAnswer.body).not.toHaveProperty('reservations');
    },
    TEST_TIMEOUT,
  );

  it(
    'whose client went away breaks nothing: the pulls held with it and after it are answered',
    async () => {
      const at = await current(sem);
      const gone = new AbortController();
      const abandoned = await hold(sem, at, gone.signal);
      const kept = await hold(sem, at);
      gone.abort();
      await expect(abandoned.answer).rejects.toThrow();
      // The other is still held once the server had a chance to see the connection close.
      const timer = new Promise<'held'>((resolve) => setTimeout(() => resolve('held'), HELD_MS));
      expect(await Promise.race([kept.answer.then(() => 'answered' as const), timer])).toBe('held');

      const { project } = await newProject('After the abort');
      const first = await kept.answer;
      expect(first.status).toBe(200);
      expect(first.body.cursor).toBeGreaterThan(at.cursor);
      expect(first.body.projects).toMatchObject([{ uuid: project.uuid }]);

      // A pull held after that, and aborted alone (no other waiting), then one more: answered.
      const next = { cursor: first.body.cursor, mark: first.body.cursor_mark ?? '' };
      const alone = new AbortController();
      const abandonedAlone = await hold(sem, next, alone.signal);
      alone.abort();
      await expect(abandonedAlone.answer).rejects.toThrow();
      const again = await hold(sem, next);
      const renamed = await rpc<{ project: { uuid: string } }>('admin.projects.save', {
        id: project.id,
        name: 'Renamed after the abort',
        application_identifier: '',
        active: true,
        updated_at: project.updated_at,
      });
      const second = await again.answer;
      expect(second.status).toBe(200);
      expect(second.body.cursor).toBeGreaterThan(next.cursor);
      expect(second.body.projects).toMatchObject([
        { uuid: renamed.project.uuid, name: 'Renamed after the abort' },
      ]);
    },
    TEST_TIMEOUT,
  );
});
