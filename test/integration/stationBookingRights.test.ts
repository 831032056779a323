/**
 * A station books and cancels for the person logged on there as that person, never with staff
 * rights: its key vouches for who is at the instrument, not for what staff may do. A real server
 * app on a real SQLite file, called as a station calls it (`Authorization: Station <key>`):
 * a staff member named by the station is refused a booking that starts in the past, one on a
 * tool they are not qualified on, and the cancelling of an ended reservation, which staff may do
 * on the server's own page (where the ended one here was booked, through the same function).
 */
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../../electron/core/db/open.js';
import { createStationAccount } from '../../electron/core/server/accounts.js';
import { createServerApp } from '../../electron/core/server/app.js';
import type { Account } from '../../electron/core/server/auth.js';
import { bookReservation } from '../../electron/core/server/reservations/book.js';
import {
  SYNC_RESERVATION_CANCEL_PATH,
  SYNC_RESERVATIONS_PATH,
} from '../../electron/core/sync/protocol.js';
import { newUuid } from '../../electron/core/util/ids.js';
import { createLogger } from '../../electron/core/util/log.js';
import { tempDir } from './helpers.js';

interface Reply {
  status: number;
  body: Record<string, unknown>;
}

const T0 = '2026-01-01T00:00:00.000Z';
const id = { alice: newUuid(), bob: newUuid(), project: newUuid(), sem: newUuid() };
let db: Db;
let app: FastifyInstance;
let key = '';

beforeAll(async () => {
  db = openDatabase(join(tempDir('labstation-station-booking-rights-'), 'server.db'));
  // alice is qualified on the SEM; bob is staff, a member of the project, not qualified.
  db.exec(`INSERT INTO settings (key, value) VALUES ('mode', '"server"');
    INSERT INTO users (id, uuid, username, email, first_name, last_name, role, is_staff,
        created_at, updated_at)
      VALUES (1, '${id.alice}', 'alice', 'alice@example.org', 'Alice', 'L', 'user', 0,
                '${T0}', '${T0}'),
             (2, '${id.bob}', 'bob', 'bob@example.org', 'Bob', 'S', 'staff', 1, '${T0}', '${T0}');
    INSERT INTO projects (id, uuid, name, application_identifier, created_at, updated_at)
      VALUES (1, '${id.project}', 'Cathodes', 'PRJ-1', '${T0}', '${T0}');
    INSERT INTO tools (id, uuid, name, pre_usage_questions, post_usage_questions, category,
        created_at, updated_at)
      VALUES (1, '${id.sem}', 'SEM', '[]', '[]', '', '${T0}', '${T0}');
    INSERT INTO qualifications (user_id, tool_id) VALUES (1, 1);
    INSERT INTO user_projects (user_id, project_id) VALUES (1, 1), (2, 1);`);
  key = createStationAccount(db, { name: 'sem-pc', tool: 1 }).key;
  app = await createServerApp({
    db,
    log: createLogger('silent'),
    jwtSecret: 'station-booking-rights-secret-0123456789',
    timeZone: () => 'UTC',
  });
});

afterAll(async () => {
  await app.close();
  db.close();
});

const hoursFromNow = (hours: number): string =>
  new Date(Date.now() + hours * 3_600_000).toISOString();

async function atStation(path: string, body: unknown): Promise<Reply> {
  const res = await app.inject({
    method: 'POST',
    url: path,
    headers: { authorization: `Station ${key}` },
    payload: body as Record<string, unknown>,
  });
  return { status: res.statusCode, body: res.json<Record<string, unknown>>() };
}

const book = (user: string, start: string, end: string): Promise<Reply> =>
  atStation(SYNC_RESERVATIONS_PATH, {
    user_uuid: user,
    project_uuid: id.project,
    start,
    end,
    answers: {},
  });

const account = (userId: number): Account =>
  db
    .prepare('SELECT id, uuid, email, username, role, is_active FROM users WHERE id = ?')
    .get(userId) as Account;

describe('booking at a station', () => {
  it('refuses a staff member named by the station a start in the past', async () => {
    const res = await book(id.bob, hoursFromNow(-2), hoursFromNow(1));
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({
      code: 'validation_failed',
      details: {
        problems: [
          { path: ['start'], message: 'is in the past; a reservation starts from now on' },
        ],
      },
    });
    expect(db.prepare('SELECT count(*) FROM reservations').pluck().get()).toBe(0);
  });

  it('refuses a staff member named by the station a tool they are not qualified on', async () => {
    const res = await book(id.bob, hoursFromNow(1), hoursFromNow(2));
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 'not_qualified' });
    expect(db.prepare('SELECT count(*) FROM reservations').pluck().get()).toBe(0);
  });

  it('books for a qualified person as before', async () => {
    const res = await book(id.alice, hoursFromNow(3), hoursFromNow(4));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.reservation).toMatchObject({ user_uuid: id.alice });
  });

  it("refuses a staff member's cancelling of their own ended reservation at a station", async () => {
    // Staff book one that began earlier on the server's page (allowed there), then it ends.
    const now = new Date().toISOString();
    const { reservation } = bookReservation(
      db,
      account(2),
      { tool: 1, project: 1, start: hoursFromNow(-3), end: hoursFromNow(1), answers: {} },
      now,
    );
    db.prepare('UPDATE reservations SET "end" = ? WHERE id = ?').run(
      hoursFromNow(-1),
      reservation.id,
    );
    const res = await atStation(SYNC_RESERVATION_CANCEL_PATH, {
      user_uuid: id.bob,
      reservation_uuid: reservation.uuid,
    });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({
      code: 'validation_failed',
      details: {
        problems: [
          {
            path: ['id'],
            message: `reservation ${reservation.id} has already ended; only staff can cancel it now`,
          },
        ],
      },
    });
    const cancelled = db
      .prepare('SELECT cancelled FROM reservations WHERE id = ?')
      .pluck()
      .get(reservation.id);
    expect(cancelled).toBe(0);
  });
});
