/**
 * The facility and the app the NEMO API tests run against: a real SQLite file seeded with plain
 * SQL, a real fastify instance with the real API-token guard, and request helpers.
 */
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { expect } from 'vitest';
import { openDatabase, type Db } from '../../../electron/core/db/open.js';
import { createApiToken, createGuards } from '../../../electron/core/server/auth.js';
import { registerNemoApi } from '../../../electron/core/server/nemo/routes.js';
import { createLogger } from '../../../electron/core/util/log.js';
import { tempDir } from '../helpers.js';

export const NY = 'America/New_York';
const T0 = '2024-01-01T00:00:00.000Z';

export interface Fixture {
  db: Db;
  app: FastifyInstance;
  token: string;
  zone: { name: string };
}

export async function fixture(seed: (db: Db) => void): Promise<Fixture> {
  const db = openDatabase(join(tempDir('labstation-nemo-'), 'server.db'));
  seedFacility(db);
  seed(db);
  const zone = { name: NY };
  const app = Fastify({ logger: false });
  const guards = createGuards({
    db,
    log: createLogger('silent'),
    jwtSecret: 'nemo-api-test-secret-0123456789',
  });
  registerNemoApi(app, {
    db,
    timeZone: () => zone.name,
    authorize: guards.requireRoles('admin', 'staff'),
  });
  await app.ready();
  return { db, app, zone, token: createApiToken(db, 1).token };
}

function seedFacility(db: Db): void {
  const user = db.prepare(
    `INSERT INTO users (id, uuid, username, email, first_name, last_name, badge_number, pin_hash,
       password_hash, role, is_staff, is_active, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  user.run(
    1,
    'u-1',
    'admin',
    'admin@example.org',
    'Ada',
    'Min',
    null,
    null,
    '$argon2id$admin-secret',
    'admin',
    1,
    1,
    T0,
    T0,
  );
  user.run(
    2,
    'u-2',
    'alice',
    'alice@example.org',
    'Alice',
    'Liddell',
    '100200',
    '$argon2id$pin-secret',
    null,
    'user',
    0,
    1,
    T0,
    T0,
  );
  user.run(
    3,
    'u-3',
    'Bob',
    'bob@example.org',
    'Bob',
    'Builder',
    '100300',
    '$argon2id$pin-secret',
    '$argon2id$bob-secret',
    'staff',
    1,
    1,
    T0,
    T0,
  );
  user.run(4, 'u-4', 'carol', '', 'Carol', 'Gone', null, null, null, 'user', 0, 0, T0, T0);
  const project = db.prepare(
    `INSERT INTO projects (id, uuid, name, application_identifier, active, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?)`,
  );
  project.run(1, 'p-1', 'Cathodes', 'CAT-1', 1, T0, T0);
  project.run(2, 'p-2', 'Anodes', 'AN-2', 0, T0, T0);
  const tool = db.prepare(
    `INSERT INTO tools (id, uuid, name, category, operational, visible, shutdown, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  tool.run(1, 't-1', 'SEM', 'Microscopy', 1, 1, 0, T0, T0);
  tool.run(2, 't-2', 'TEM', 'Microscopy', 1, 0, 0, T0, T0);
  tool.run(3, 't-3', 'XRD', 'Diffraction', 1, 1, 1, T0, T0);
  db.prepare(
    "INSERT INTO areas (id, uuid, name, created_at, updated_at) VALUES (1, 'a-1', 'Cleanroom', ?, ?)",
  ).run(T0, T0);
}

export interface UsageSeed {
  id: number;
  user: number;
  tool: number;
  start: string;
  end: string | null;
  project?: number;
  operator?: number;
  validated?: number;
  validatedBy?: number | null;
  remote?: number;
  pre?: string;
  run?: string;
}

export function insertUsage(db: Db, e: UsageSeed): void {
  db.prepare(
    `INSERT INTO usage_events (id, uuid, user_id, operator_id, project_id, tool_id, start, "end",
       validated, validated_by_id, remote_work, pre_run_data, run_data, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    e.id,
    `ue-${e.id}`,
    e.user,
    e.operator ?? e.user,
    e.project ?? 1,
    e.tool,
    e.start,
    e.end,
    e.validated ?? 0,
    e.validatedBy ?? null,
    e.remote ?? 0,
    e.pre ?? '',
    e.run ?? '',
    T0,
  );
}

export const RUN_DATA = JSON.stringify({ data_consent: 'Agree', experiment_title: 'Grain size' });
export const QUESTION_DATA = JSON.stringify({
  project_id: 'CAT-1',
  sample_group: [{ sample_name: 'S1' }],
});

export function seedEvents(db: Db): void {
  // Times are UTC; New York is UTC-5 in winter, UTC-4 in summer.
  insertUsage(db, {
    id: 1,
    user: 2,
    tool: 1,
    start: '2024-01-05T14:00:00.000Z',
    end: '2024-01-05T15:00:00.000Z',
  });
  insertUsage(db, {
    id: 2,
    user: 2,
    tool: 2,
    start: '2024-01-05T15:00:00.000Z',
    end: '2024-01-05T16:00:00.000Z',
  });
  insertUsage(db, {
    id: 3,
    user: 3,
    operator: 1,
    project: 2,
    tool: 1,
    start: '2024-01-05T16:30:00.000Z',
    end: '2024-01-05T17:00:00.000Z',
    validated: 1,
    validatedBy: 1,
    remote: 1,
    pre: '{"data_consent": "Agree"}',
    run: RUN_DATA,
  });
  insertUsage(db, {
    id: 4,
    user: 2,
    tool: 3,
    start: '2024-01-06T05:00:00.000Z',
    end: '2024-01-06T06:00:00.000Z',
  });
  // 03:30 EDT on the spring-forward day (02:00-03:00 does not exist there).
  insertUsage(db, {
    id: 5,
    user: 2,
    tool: 1,
    start: '2024-03-10T07:30:00.000Z',
    end: '2024-03-10T08:00:00.000Z',
  });
  // 01:30 EDT, the first of the two 01:30s of the fall-back day, to 01:10 EST (the second 01:10).
  insertUsage(db, {
    id: 6,
    user: 3,
    tool: 2,
    start: '2024-11-03T05:30:00.000Z',
    end: '2024-11-03T06:10:00.000Z',
  });
  // Active: end is null.
  insertUsage(db, { id: 7, user: 2, tool: 2, start: '2024-11-04T15:00:00.250Z', end: null });

  const reservation = db.prepare(
    `INSERT INTO reservations (id, uuid, user_id, creator_id, project_id, tool_id, area_id, start,
       "end", cancelled, question_data, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  reservation.run(
    1,
    'r-1',
    2,
    1,
    1,
    1,
    null,
    '2024-01-05T13:30:00.000Z',
    '2024-01-05T15:30:00.000Z',
    0,
    QUESTION_DATA,
    T0,
    T0,
  );
  reservation.run(
    2,
    'r-2',
    2,
    2,
    1,
    1,
    null,
    '2024-01-05T16:00:00.000Z',
    '2024-01-05T18:00:00.000Z',
    1,
    '',
    T0,
    T0,
  );
  reservation.run(
    3,
    'r-3',
    3,
    3,
    null,
    null,
    1,
    '2024-01-06T14:00:00.000Z',
    '2024-01-06T16:00:00.000Z',
    0,
    '',
    T0,
    T0,
  );
  reservation.run(
    4,
    'r-4',
    3,
    1,
    2,
    2,
    null,
    '2024-07-01T13:00:00.000Z',
    '2024-07-01T14:00:00.000Z',
    0,
    '',
    T0,
    T0,
  );
}

export interface Reply {
  status: number;
  body: unknown;
}

export interface PageBody {
  count: number;
  next: string | null;
  previous: string | null;
  results: Record<string, unknown>[];
}

export async function get(
  fx: Fixture,
  url: string,
  authorization = `Token ${fx.token}`,
): Promise<Reply> {
  const res = await fx.app.inject({
    method: 'GET',
    url,
    headers: { host: 'nemo.test:8080', authorization },
  });
  return { status: res.statusCode, body: res.json() };
}

export async function page(fx: Fixture, url: string): Promise<PageBody> {
  const res = await get(fx, url);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as PageBody;
}
